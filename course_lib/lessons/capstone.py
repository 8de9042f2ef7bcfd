"""Notebook 11 (capstone): the course's kernels against the libraries, and "beat the library".

    from course_lib.lessons import capstone
    board = capstone.board(backend, np.float32)    # GPU: measured now; simulator: modelled (labelled)
    capstone.chart(board)                          # leaderboard bars against the copy ceiling
    capstone.challenge(my_kernel, block=(32, 8), tile=32, backend=backend)

On a GPU ``board`` times every kernel in COURSE and each library transpose a student would
otherwise call — CuPy ``ascontiguousarray(a.T)``, cuBLAS geam through ``cupy.asfortranarray``
(float32/float64 only), PyTorch ``x.t().contiguous()`` when torch is installed — at a modest size
(4096², so a notebook run takes seconds), each checked bit for bit and compared with a same-run
device copy. Without a GPU it simulates the course kernels (exact metrics) and turns them into
modelled GB/s; libraries cannot be simulated, so they are left out and said to be. The full
benchmark (every dtype and size, torch.compile) is benchmarks/transpose.py; its saved results are
read by ``course_lib.lessons.measured``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import gpu, transposes
from ..teach import exercises
from ..transposes import model
from ..transposes.backend import GPU

COURSE = ["naive_row", "naive_col", "tile", "padded", "padded_32x8", "swizzle", "unrolled", "vec", "packed",
          "vec64", "fast"]
GPU_SHAPE = (4096, 4096)
BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@dataclass
class Board:
    """One leaderboard: name -> GB/s (measured or modelled), the copy ceiling, what it is."""
    dtype: str
    shape: tuple
    device: str
    measured: bool
    gbps: dict = field(default_factory=dict)
    kind: dict = field(default_factory=dict)          # name -> "course" / "library"
    correct: dict = field(default_factory=dict)
    copy: float = 0.0
    notes: list = field(default_factory=list)
    sims: dict = field(default_factory=dict)          # name -> SimRun (simulator boards)

    def ranked(self) -> list:
        return sorted(self.gbps, key=self.gbps.get, reverse=True)

    def __repr__(self):
        what = f"measured on {self.device}" if self.measured else \
            f"MODELLED for {self.device} from simulator counts (course_lib.model), not measured"
        lines = [f"{self.dtype} {self.shape[0]}x{self.shape[1]}, {what}; copy {self.copy:.0f} GB/s"]
        width = max((len(n) for n in self.gbps), default=0) + 2
        for i, n in enumerate(self.ranked(), 1):
            ok = "" if self.correct.get(n, True) else "  WRONG"
            lines.append(f"{i:3d}. {n:<{width}s}{self.kind.get(n, ''):<9s}{self.gbps[n]:7.0f} GB/s  "
                         f"{self.gbps[n] / self.copy:5.0%} of copy{ok}")
        return "\n".join(lines + self.notes)


def peers(dtype) -> list:
    """[(name, make)]: make(a) returns a function that returns the transposed copy of a (CuPy)."""
    import cupy as cp
    out = [("cupy ascontiguousarray(a.T)", lambda a: lambda: cp.ascontiguousarray(a.T))]
    if np.dtype(dtype) in (np.float32, np.float64):     # CuPy calls cuBLAS geam for these
        out.append(("cuBLAS via asfortranarray", lambda a: lambda: cp.asfortranarray(a).T))
    try:
        import torch
    except ImportError:
        return out

    def eager(a):
        x = torch.as_tensor(a, device="cuda")          # shares CuPy's buffer
        return lambda: x.t().contiguous()
    out.append(("torch .t().contiguous()", eager))
    return out


def board(backend, dtype=np.float32, keys=COURSE, *, shape=None, repeat: int = 10) -> Board:
    """Measured on a GPU backend, modelled on the simulator (see the module docstring)."""
    dtype = np.dtype(dtype)
    if isinstance(backend, GPU):
        return _measure(dtype, keys, shape or GPU_SHAPE, repeat)
    b = Board(dtype.name, tuple(shape or backend.shape), backend.model_gpu, False,
              copy=model.copy_gbps(backend.model_gpu))
    for k in keys:
        try:
            r = backend.run(k, dtype=dtype, shape=shape)
        except ValueError:                               # this kernel does not move this dtype
            continue
        b.gbps[k], b.kind[k], b.correct[k], b.sims[k] = r.model_gbps, "course", r.correct.ok, r.sim
    b.notes.append("libraries (CuPy, cuBLAS, PyTorch) run only on a GPU: not in a modelled board")
    return b


def _measure(dtype, keys, shape, repeat) -> Board:
    import cupy as cp
    rows, cols = shape
    a = cp.asarray(transposes.random_matrix(rows, cols, dtype, seed=1))
    b = Board(dtype.name, shape, gpu.info().name, True,
              copy=gpu.copy_bandwidth(a.nbytes, repeat=repeat) / 1e9)
    view = BITS[dtype.itemsize]

    def same(got):
        got = cp.asarray(got)
        return got.shape == (cols, rows) and bool(cp.array_equal(got.view(view), a.view(view).T))

    for k in keys:
        try:
            t = transposes.kernel(k, dtype)
        except ValueError:
            continue
        if t.refuses(rows, cols):                        # a TMA kernel: rows of whole 16-byte pieces only
            continue
        out = cp.asarray(transposes.poisoned((cols, rows), dtype))
        t.run(a, out)
        b.correct[k] = same(out)
        b.gbps[k], b.kind[k] = 2 * a.nbytes / t.time(a, out, repeat=repeat) / 1e9, "course"
    for name, make in peers(dtype):
        try:
            fn = make(a)
            b.correct[name] = same(fn())
            b.gbps[name], b.kind[name] = 2 * a.nbytes / gpu.time_cold(make, a, repeat=repeat) / 1e9, "library"
        except Exception as exc:                         # a library that cannot do this dtype
            b.notes.append(f"{name}: skipped ({type(exc).__name__})")
    return b


def chart(b: Board, title: str | None = None):
    """The leaderboard as bars (libraries marked), against the copy ceiling."""
    from ..notebook import draw
    names = b.ranked()
    tag = {"library": " (library)", "yours": " ◀"}
    data = {f"{n}{tag.get(b.kind.get(n), '')}": b.gbps[n] for n in names}
    return draw.bandwidth(data, ceiling=b.copy, device=b.device, measured=b.measured,
                          title=title or (f"Leaderboard, {b.dtype} {b.shape[0]}x{b.shape[1]}, "
                                          + (f"measured on {b.device}" if b.measured else
                                             f"MODELLED for {b.device} (course_lib.model), not measured")))


def challenge(kernel, block, tile, *, backend, dtype=np.float32, rivals=("fast", "padded_32x8")):
    """Check a %%cuda transpose for the challenge: correct on every awkward shape (and the usual
    properties, reported), then race it: on a GPU measured at 8192² against copy, the libraries and
    `rivals`; on the simulator modelled (labelled) against the rivals. Returns (Report, Board or None:
    None when the kernel is wrong)."""
    tile = (tile, tile) if isinstance(tile, int) else tuple(tile)
    ex = exercises.Exercise("challenge", "beat the library: any correct transpose", kernel.name, tuple(block), tile,
                            (exercises.coalesced("ld"), exercises.coalesced("st"), exercises.no_bank_conflicts(),
                             exercises.no_races()), dtypes=(dtype,), lesson="11")
    report = exercises.check(ex, kernel)
    wrong = any("elements are wrong" in what or "stopped the kernel" in what or "does not take" in what
                or "on the GPU" in what for what, _ in report.problems)
    if wrong or not any(p.startswith("correct on") for p in report.passed):
        return report, None
    dtype = np.dtype(dtype)
    if isinstance(backend, GPU):
        b = _measure(dtype, list(rivals), (8192, 8192), 10)
        mine = backend.run(kernel, block=tuple(block), tile=tile, shape=(8192, 8192), dtype=dtype, name="your kernel")
        b.gbps["your kernel"], b.correct["your kernel"] = mine.gbps, mine.correct.ok
    else:
        b = board(backend, dtype, list(rivals))
        mine = backend.run(kernel, block=tuple(block), tile=tile, dtype=dtype, name="your kernel")
        b.gbps["your kernel"], b.correct["your kernel"], b.sims["your kernel"] = mine.model_gbps, mine.correct.ok, mine.sim
    b.kind["your kernel"] = "yours"
    return report, b
