"""Where kernels run: the backend is passed in, never patched in.

``Simulator`` and ``GPU`` have the same ``run`` and return the same :class:`Result`::

    r = backend.run("padded")                      # a course kernel, by key (see transposes.SPECS)
    r = backend.run(my_kernel, block=(32, 8), tile=32)   # a %%cuda kernel: T* out, const T* in, rows, cols
    r.correct        # always: every element compared (random input, poisoned output)
    r.sim            # Simulator: the SimRun (exact metrics);  r.model_gbps: modelled GB/s
    r.gbps           # GPU: measured effective bandwidth; r.frac_copy, r.frac_peak

``default_backend()`` is a GPU when CuPy sees one, else the Simulator (``cl.setup()`` in a
notebook calls it). A notebook can hold both (``Simulator().run(...)`` on a GPU machine shows
metrics next to times). The Simulator refuses, before allocating anything, a shape whose arrays
would not fit its memory limit; the simulator itself refuses a launch too long to finish.
This module does not draw (``notebook.draw``) and does not time by itself (``gpu``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import gpu
from ..errors import ArgumentError, gives_memory_back
from ..kernel import arch_fallback
from ..sim import plan
from . import model, verify
from .data import poisoned, random_matrix
from .transpose import as_kernel

MAX_BYTES = plan.MAX_BYTES   # host memory a Simulator.run may take: its matrices and working memory
# the simulator's working memory: the budget it plans each batch of blocks by. The course's kernels took
# 11-106 MiB at 1024 x 1024 (2026-11-27, tracemalloc); warp grows with the grid and tma_out, tma_pipe
# went past the budget (243, 351 MiB): the planner does not count all of their state yet
WORKING_BYTES = plan.BATCH_BYTES
SIM_OPTIONS = ("check_races", "trace_block", "max_steps", "timeout", "max_work", "progress")


def _dtype(k, default):
    """The element type of a run: the kernel's own when it reads one type; asking for another is an error
    (the kernel would read every element as the wrong type)."""
    if default is None:
        return k.dtype if k.dtype is not None else np.dtype(np.float32)
    asked = np.dtype(default)
    if k.spec is None and k.dtype is not None and k.dtype.itemsize != asked.itemsize:
        raise ArgumentError(f"dtype={asked}: {k.name} reads {k.dtype} elements ({k.dtype.itemsize} bytes), not "
                            f"{asked.itemsize}-byte {asked}", hint="leave dtype= out to use the kernel's own type, or "
                            "compile the kernel for this type (a template kernel: index it, e.g. k[np.float64])")
    return asked


def _shape(shape, default):
    """(rows, cols) of two ints >= 1, or an ArgumentError."""
    shape = default if shape is None else shape
    ok = isinstance(shape, (tuple, list)) and len(shape) == 2 and all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1 for v in shape)
    if not ok:
        raise ArgumentError(f"shape={shape!r}: a matrix shape is (rows, cols), two ints of at least 1",
                            hint="e.g. shape=(1000, 1030)")
    return int(shape[0]), int(shape[1])


def memory_needed(rows, cols, dtype) -> int:
    """Bytes a Simulator.run of a rows x cols matrix takes at its peak: input, output and the expected
    result, the comparison's one byte per element, and the simulator's working memory (the budget of
    a batch of blocks, sim.plan.BATCH_BYTES)."""
    elements = rows * cols
    return 3 * elements * np.dtype(dtype).itemsize + elements + WORKING_BYTES


def _article(n: int) -> str:
    """'an' before a number read aloud with a vowel sound (8, 11, 18, 80, 800, 8192, 11000), else 'a'."""
    digits = str(n)
    return "an" if digits[0] == "8" or (len(digits) % 3 == 2 and digits[:2] in ("11", "18")) else "a"


def matrix_words(rows, cols, dtype) -> str:
    return f"{_article(rows)} {rows} x {cols} {np.dtype(dtype)} matrix"


def room_for(rows, cols, dtype, limit=MAX_BYTES, *, elsewhere="cl.GPU().run(...) (or default_backend())",
             option="max_bytes="):
    """Refuse before allocating: what the run takes at its peak (memory_needed) must fit `limit` bytes."""
    plan.room_for(memory_needed(rows, cols, dtype), f"{matrix_words(rows, cols, dtype)} (input, output, the expected "
                  "result, comparing them and the simulator's working memory)", limit=limit, elsewhere=elsewhere,
                  option=option)


@dataclass
class Result:
    """What ``backend.run`` answers. GB/s figures are effective: 2 x bytes / time."""
    name: str
    backend: str                        # "simulator" or "gpu"
    device: str                         # the GPU measured, or the GPU the model stands for
    shape: tuple
    dtype: str
    correct: verify.Mismatch
    sim: object = None                  # SimRun (simulator)
    seconds: float | None = None        # GPU: median kernel time
    gbps: float | None = None           # GPU: measured
    copy_gbps: float | None = None      # GPU: a device-to-device copy of the same bytes, same run
    peak_gbps: float | None = None      # GPU: datasheet
    model_gbps: float | None = None     # simulator: course_lib.model's estimate for `device`
    model_copy_gbps: float | None = None

    @property
    def frac_copy(self):
        got, ceil = (self.gbps, self.copy_gbps) if self.gbps else (self.model_gbps, self.model_copy_gbps)
        return got / ceil if got and ceil else None

    @property
    def frac_peak(self):
        return self.gbps / self.peak_gbps if self.gbps and self.peak_gbps else None

    def __repr__(self):
        head = f"{self.name} ({self.dtype}, {self.shape[0]}x{self.shape[1]}) on the " + \
            ("CPU simulator" if self.backend == "simulator" else self.device)
        lines = [head, "  " + ("correct" if self.correct.ok else f"WRONG: {self.correct}")]
        if self.sim is not None:
            lines += ["  " + s for s in self.sim.summary().splitlines()]
            lines.append(f"  modelled for {self.device}: {self.model_gbps:.0f} GB/s "
                         f"({self.frac_copy:.0%} of a modelled copy) — a model, not a measurement")
        if self.gbps:
            lines.append(f"  {self.seconds * 1e3:.3f} ms: {self.gbps:.0f} GB/s = {self.frac_copy:.0%} of copy "
                         f"({self.copy_gbps:.0f} GB/s), {self.frac_peak:.0%} of peak ({self.peak_gbps:.0f} GB/s)")
        return "\n".join(lines)


class Simulator:
    """Run on the CPU simulator: exact metrics, correctness, and bandwidth modelled for `model_gpu`.

        sim = Simulator(model_gpu="T4");  sim.run("naive_row").sim.ratio("global", "st")   # 32.0
    """
    name = "simulator"

    def __init__(self, model_gpu: str = "H100", shape=(256, 256)):
        self.model_gpu, self.shape = model.gpu(model_gpu).name, _shape(shape, None)

    def __repr__(self):
        return f"Simulator(model_gpu={self.model_gpu!r})"

    @gives_memory_back
    def run(self, target, a=None, *, shape=None, dtype=None, block=None, tile=None, copy=False,
            name=None, seed=0, max_bytes=MAX_BYTES, **params) -> Result:
        sim_opts = {k: params.pop(k) for k in SIM_OPTIONS if k in params}
        k = as_kernel(target, np.float32 if dtype is None else dtype, block, tile, copy, **params)
        if a is None:
            rows, cols = _shape(shape, self.shape)
            dt = _dtype(k, dtype)
            room_for(rows, cols, dt, max_bytes)
            a = random_matrix(rows, cols, dt, seed)
        out, run = k.simulate(a, max_bytes=max_bytes, **sim_opts)
        return Result(name or k.label, "simulator", self.model_gpu, a.shape, a.dtype.name,
                      verify.compare(out, k.expected(a), k.tile[0]), sim=run,
                      model_gbps=model.predict(run, self.model_gpu), model_copy_gbps=model.copy_gbps(self.model_gpu))


class GPU:
    """Run on the NVIDIA GPU through CuPy: correctness, median time, GB/s against copy and peak.

        gpu = GPU();  r = gpu.run("padded", shape=(8192, 8192));  r.gbps, r.frac_copy
    """
    name = "gpu"

    def __init__(self, shape=(8192, 8192), repeat: int = 20):
        self.shape, self.repeat, self._copy = _shape(shape, None), repeat, {}

    def __repr__(self):
        return f"GPU({gpu.info().name!r})"

    def copy_gbps(self, nbytes: int) -> float:
        """Measured once per size: a device-to-device copy of `nbytes`, effective GB/s."""
        if nbytes not in self._copy:
            self._copy[nbytes] = gpu.copy_bandwidth(nbytes, repeat=self.repeat) / 1e9
        return self._copy[nbytes]

    def run(self, target, a=None, *, shape=None, dtype=None, block=None, tile=None, copy=False,
            name=None, seed=0, **params) -> Result:
        import cupy as cp
        k = as_kernel(target, np.float32 if dtype is None else dtype, block, tile, copy, **params)
        refused = arch_fallback.reason(k.function)
        if refused:                  # this GPU cannot run it (a T4 has no TMA): the simulator can, and says so
            arch_fallback.note_once(k.function, refused)
            sim_shape = shape if shape is not None or a is not None else Simulator().shape
            return Simulator().run(k, None if a is None else (a.get() if hasattr(a, "get") else a),
                                   shape=sim_shape, dtype=dtype, name=name, seed=seed)
        a = random_matrix(*_shape(shape, self.shape), _dtype(k, dtype), seed) if a is None else np.asarray(a)
        inp = cp.asarray(a)
        out = cp.asarray(poisoned(k.out_shape(*a.shape), a.dtype))
        k.run(inp, out)
        correct = verify.compare(out.get(), k.expected(a), k.tile[0])
        seconds = k.time(inp, out, repeat=self.repeat)
        gbps = 2 * a.nbytes / seconds / 1e9
        return Result(name or k.label, "gpu", gpu.info().name, a.shape, a.dtype.name, correct,
                      seconds=seconds, gbps=gbps, copy_gbps=self.copy_gbps(a.nbytes),
                      peak_gbps=gpu.peak_bandwidth() / 1e9)


def default_backend():
    """GPU() when CuPy sees an NVIDIA GPU (and COURSE_LIB_BACKEND is not 'sim'), else Simulator().

        backend = default_backend();  backend.run("copy")
    """
    return GPU() if gpu.available() else Simulator()
