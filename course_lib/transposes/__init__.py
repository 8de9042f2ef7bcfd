"""The course's transposes: the kernel catalog, the one kernel wrapper, test data, checking, backends.

    t = transposes.kernel("padded_32x8", np.float16)     # a Transpose from kernels/tile.cu
    out, run = t.simulate(transposes.random_matrix(1000, 1030, np.float16))
    transposes.verify.compare(out, t.expected(a))

Modules: ``catalog`` (one Spec per course kernel: file, template, tile, block, constraints),
``transpose`` (:class:`Transpose`: course and ``%%cuda`` kernels alike), ``data`` (random input,
poisoned output), ``verify`` (how many elements are wrong, and where), ``backend`` (``Simulator``
and ``GPU``: ``run`` -> ``Result``), ``model`` (bandwidth modelled from exact counts), ``bench``
and ``run_once`` (the ``python -m course_lib bench|run`` commands).
"""
from .catalog import DEMOS, SPECS, Spec, register
from .data import poisoned, random_matrix
from .transpose import Transpose, as_kernel, kernel, module_for

__all__ = ["DEMOS", "SPECS", "Spec", "register", "poisoned", "random_matrix", "Transpose", "as_kernel",
           "kernel", "module_for"]
