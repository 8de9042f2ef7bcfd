"""The last raw errors of issue 26, each a course_lib error with what, where and a hint (or, where
nothing is wrong, a word instead of silence): a check without an exercise, a copy size cp.async does
not have, a source file that is not UTF-8, a module the wings moved, a kernel named like numpy."""
import importlib
import sys
import warnings

import numpy as np
import pytest

import course_lib as cl
from course_lib.errors import KernelError


def test_check_without_an_exercise_names_the_exercises():
    """Before: AttributeError: 'NoneType' object has no attribute 'key' (teach/exercises.py, one line)."""
    with pytest.raises(cl.KernelError) as e:
        cl.exercises.check(None, None)
    assert "no exercise None" in e.value.message and "shared_tile" in e.value.hint
    with pytest.raises(cl.KernelError) as e:                 # the two arguments swapped
        cl.exercises.check(None, "shared_tile")
    assert "first argument is the exercise" in e.value.message and "check('shared_tile', your_kernel)" in e.value.hint


PIPELINE = r'''
#include <cuda_pipeline.h>
__global__ void k(float* out, const float* in) {
    __shared__ float s[96];
    __pipeline_memcpy_async(&s[threadIdx.x * 3], &in[threadIdx.x * 3], 12);
    __pipeline_commit(); __pipeline_wait_prior(0); __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}'''


def test_a_copy_size_cp_async_does_not_have_is_named_not_a_null_pointer():
    """Before: "... most often a load or store through a null pointer"."""
    f = cl.RawModule(code=PIPELINE).get_function("k")
    with pytest.raises(cl.KernelTrap) as e:
        f.simulate(1, 32, (np.zeros(96, np.float32), np.ones(96, np.float32)), echo=False, progress=False)
    err = e.value
    assert "__pipeline_memcpy_async" in err.message and "4, 8 or 16" in err.message and err.line == 5
    assert "null pointer" not in err.message and "16" in err.hint


def test_a_source_file_that_is_not_utf8_is_read_or_explained(tmp_path):
    """Before: UnicodeDecodeError. Latin-1 text (a comment in French) compiles; binary is refused."""
    latin = tmp_path / "latin.cu"
    latin.write_bytes('// café: the kernel\n__global__ void k(float* o) { o[threadIdx.x] = 1.0f; }\n'.encode("latin-1"))
    f = cl.RawModule(path=latin).get_function("k")
    o = np.zeros(32, np.float32)
    f.simulate(1, 32, (o,), echo=False, progress=False)
    assert (o == 1).all()
    binary = tmp_path / "k.cu"
    binary.write_bytes(b"\x7fELF\x00\x00\x01\x02" * 8)
    with pytest.raises(KernelError) as e:
        cl.RawModule(path=binary)
    assert str(binary) in e.value.message and "not text" in e.value.message and "UTF-8" in e.value.hint


@pytest.mark.parametrize("old, new", [("labserver", "lab.student.server"), ("verify", "transposes.verify"),
                                      ("nvrtc", "compile.nvrtc"), ("workcopy", "lab.student.workcopy"), ("lab.nbgrader_hooks", "lab.grader.nbgrader_hooks"), ("lab.course_lab", "lab.student.course_lab"),
                                      ("sim.tma", "sim.movement.tma"), ("sim.metrics", "sim.results.metrics")])
def test_modules_the_wings_moved_import_from_their_old_path_with_a_deprecation(old, new):
    sys.modules.pop(f"course_lib.{old}", None)
    with pytest.warns(DeprecationWarning, match=rf"course_lib\.{old} moved to course_lib\.{new}"):
        module = importlib.import_module(f"course_lib.{old}")
    assert module is importlib.import_module(f"course_lib.{new}")


def test_a_moved_simulator_module_is_an_attribute_of_sim_with_a_deprecation():
    """`cl.sim.metrics` and notebook 12's old `from course_lib.sim import matrix_moves` (sim's subpackages, 2026-11)."""
    for old, new in (("metrics", "results.metrics"), ("matrix_moves", "movement.matrix_moves")):
        vars(cl.sim).pop(old, None)
        with pytest.warns(DeprecationWarning, match=rf"course_lib\.sim\.{old} moved to course_lib\.sim\.{new}"):
            module = getattr(cl.sim, old)
        assert module is importlib.import_module(f"course_lib.sim.{new}")
    with pytest.raises(AttributeError):
        cl.sim.no_such_module


def test_every_moved_module_has_a_home():
    from course_lib import MOVED
    assert {"widgets", "draw", "exercises", "magic", "labserver", "backend"} <= set(MOVED)
    for old, new in MOVED.items():
        assert importlib.util.find_spec(f"course_lib.{new}") is not None, (old, new)


def test_modules_that_did_not_move_import_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        importlib.import_module("course_lib.notebook.magic")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("course_lib.no_such_module")


@pytest.fixture(scope="module")
def ip():
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    cl.load_ipython_extension(shell)
    return shell


def test_a_kernel_named_like_a_name_the_notebook_uses_says_so(ip, capsys):
    """Before: `np` became the kernel, silently; the next np.zeros failed far from the cause."""
    ip.run_cell("import numpy as np")
    assert ip.run_cell('%%cuda\nextern "C" __global__ void np(float* o) { o[0] = 1.0f; }\n').success
    err = capsys.readouterr().err
    assert "np was the module numpy" in err and "Rename the kernel" in err
    ip.run_cell('%%cuda\nextern "C" __global__ void np(float* o) { o[0] = 2.0f; }\n')    # a kernel replaced by
    assert "np was" not in capsys.readouterr().err                                      # a kernel: nothing to say
    ip.run_cell("import numpy as np")


SUNK = r'''
__global__ void k(float4* out, const float* in, int n) {
    int i = threadIdx.x;
    const float4* p = reinterpret_cast<const float4*>(in + 1);
    float4 v = p[i];
    if (i < n)
        out[i] = v;
}'''


def test_a_misaligned_load_the_compiler_moved_is_named_at_the_line_that_reads_the_pointer():
    """Before: at kernel.cu:7 `out[i] = v;`, where NVRTC sank the load to, not the line that reads p."""
    f = cl.RawModule(code=SUNK).get_function("k")
    with pytest.raises(cl.MemoryAccessError) as e:
        f.simulate(1, 32, (np.zeros(128, np.float32), np.ones(200, np.float32), np.int32(32)), echo=False, progress=False)
    err = e.value
    assert err.line == 5 and "float4 v = p[i];" in err.source_line
    assert "Misaligned load" in err.message and "line 7" in err.message and "out[i] = v;" in err.message
