"""Where kernels run: the backend is passed in, never patched in.

Every notebook opens with::

    import course_lib as cl
    backend = cl.setup()        # %%cuda, plotly settings, and the banner naming the backend

``setup`` returns :func:`default_backend`: :class:`GPU` when CuPy sees an NVIDIA GPU, else
:class:`Simulator`. Both have the same ``run`` and return the same :class:`Result`::

    r = backend.run("padded")                      # a course kernel, by key (see transposes.SPECS)
    r = backend.run(my_kernel, block=(32, 8), tile=32)   # a %%cuda kernel: T* out, const T* in, rows, cols
    r.correct        # always: every element compared (random input, poisoned output)
    r.sim            # Simulator: the SimRun (exact metrics);  r.model_gbps: modelled GB/s
    r.gbps           # GPU: measured effective bandwidth; r.frac_copy, r.frac_peak

A notebook can hold both (``Simulator().run(...)`` on a GPU machine shows metrics next to times).
This module does not draw (``draw``) and does not time by itself (``gpu``).
"""
from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from . import model, nvrtc, transposes, verify
from .transposes import poisoned, random_matrix


class CellKernel:
    """A transpose-contract kernel from a ``%%cuda`` cell, launchable like a course kernel.

        k = CellKernel(transpose_tile, block=(32, 8), tile=32)   # one block moves a 32x32 tile
        out, run = k.simulate(a)
    `tile`: (columns, rows) of `in` one block covers (an int means square); default: the block.
    """

    def __init__(self, fn, block, tile=None, copy=False, name=None, dtype=None):
        self.function = fn
        self.block = tuple(block) + (1,) * (2 - len(tuple(block)))
        tile = tile if tile is not None else self.block[:2]
        self.tile = (tile, tile) if isinstance(tile, (int, np.integer)) else tuple(tile)
        self.is_copy, self.name = copy, name or fn.name
        sig = fn.signature or []
        self.dtype = np.dtype(dtype) if dtype is not None else next(
            (p.dtype for p in sig if p.pointer and p.dtype is not None), None)

    def __repr__(self):
        return f"<CellKernel {self.name} block={self.block} tile={self.tile}>"

    def out_shape(self, rows, cols):
        return (rows, cols) if self.is_copy else (cols, rows)

    def config(self, rows, cols):
        return (-(-cols // self.tile[0]), -(-rows // self.tile[1])), self.block

    def args(self, out, inp):
        return (out, inp, np.int32(inp.shape[0]), np.int32(inp.shape[1]))

    def simulate(self, inp, out=None, **options):
        out = poisoned(self.out_shape(*inp.shape), inp.dtype) if out is None else out
        grid, block = self.config(*inp.shape)
        return out, self.function.simulate(grid, block, self.args(out, inp), **options)

    def run(self, inp, out=None):
        if out is None:
            xp = np if isinstance(inp, np.ndarray) else __import__("cupy")
            out = xp.empty(self.out_shape(*inp.shape), inp.dtype)
        grid, block = self.config(*inp.shape)
        self.function(grid, block, self.args(out, inp))
        return out

    def time(self, inp, out, **kw):
        from .gpu import time_launch
        grid, block = self.config(*inp.shape)
        return time_launch(self.function, grid, block, self.args(out, inp), **kw)


def as_kernel(target, dtype=np.float32, block=None, tile=None, copy=False, **params):
    """A course kernel key ('padded'), a Transpose, or a %%cuda Function (then `block` is needed).

        as_kernel(transpose_tile, block=(32, 8), tile=32).config(1000, 1030)   # ((33, 32), (32, 8))
    """
    if isinstance(target, str):
        return transposes.kernel(target, dtype, **params)
    if isinstance(target, (transposes.Transpose, CellKernel)):
        return target
    if block is None:
        raise TypeError(f"to run {getattr(target, 'name', target)} say how to launch it: "
                        "block=(32, 8) and, if one block covers more than one element per thread, tile=32")
    return CellKernel(target, block, tile, copy)


def _label(k):
    return k.spec.key if isinstance(k, transposes.Transpose) else k.name


def _tile_of(k):
    return k.tile[0] if isinstance(k, CellKernel) else k.spec.tile(k._shape_params)[0]


def _dtype(k, default):
    return k.dtype if k.dtype is not None else np.dtype(default)   # (a dtype's truth value is its field count)


def _is_copy(k):
    return k.is_copy if isinstance(k, CellKernel) else k.spec.is_copy


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
        self.model_gpu, self.shape = model.gpu(model_gpu).name, tuple(shape)

    def __repr__(self):
        return f"Simulator(model_gpu={self.model_gpu!r})"

    def run(self, target, a=None, *, shape=None, dtype=np.float32, block=None, tile=None, copy=False,
            name=None, seed=0, **params) -> Result:
        sim_opts = {k: params.pop(k) for k in ("check_races", "trace_block", "max_steps", "timeout", "max_work",
                                               "progress") if k in params}
        k = as_kernel(target, dtype, block, tile, copy, **params)
        a = random_matrix(*(shape or self.shape), _dtype(k, dtype), seed) if a is None else a
        out, run = k.simulate(a, **sim_opts)
        expected = a.copy() if _is_copy(k) else np.ascontiguousarray(a.T)
        return Result(name or _label(k), "simulator", self.model_gpu, a.shape, a.dtype.name,
                      verify.compare(out, expected, _tile_of(k)), sim=run,
                      model_gbps=model.predict(run, self.model_gpu), model_copy_gbps=model.copy_gbps(self.model_gpu))


class GPU:
    """Run on the NVIDIA GPU through CuPy: correctness, median time, GB/s against copy and peak.

        gpu = GPU();  r = gpu.run("padded", shape=(8192, 8192));  r.gbps, r.frac_copy
    """
    name = "gpu"

    def __init__(self, shape=(8192, 8192), repeat: int = 20):
        self.shape, self.repeat, self._copy = tuple(shape), repeat, {}

    def __repr__(self):
        return f"GPU({nvrtc.device_info().name!r})"

    def copy_gbps(self, nbytes: int) -> float:
        """Measured once per size: a device-to-device copy of `nbytes`, effective GB/s."""
        from .gpu import copy_bandwidth
        if nbytes not in self._copy:
            self._copy[nbytes] = copy_bandwidth(nbytes, repeat=self.repeat) / 1e9
        return self._copy[nbytes]

    def run(self, target, a=None, *, shape=None, dtype=np.float32, block=None, tile=None, copy=False,
            name=None, seed=0, **params) -> Result:
        import cupy as cp
        from .gpu import peak_bandwidth
        k = as_kernel(target, dtype, block, tile, copy, **params)
        a = random_matrix(*(shape or self.shape), _dtype(k, dtype), seed) if a is None else np.asarray(a)
        inp = cp.asarray(a)
        out = cp.asarray(poisoned(k.out_shape(*a.shape), a.dtype))
        k.run(inp, out)
        expected = a if _is_copy(k) else a.T
        correct = verify.compare(out.get(), np.ascontiguousarray(expected), _tile_of(k))
        seconds = k.time(inp, out, repeat=self.repeat)
        gbps = 2 * a.nbytes / seconds / 1e9
        return Result(name or _label(k), "gpu", nvrtc.device_info().name, a.shape, a.dtype.name, correct,
                      seconds=seconds, gbps=gbps, copy_gbps=self.copy_gbps(a.nbytes),
                      peak_gbps=peak_bandwidth() / 1e9)


def default_backend():
    """GPU() when CuPy sees an NVIDIA GPU (and COURSE_LIB_BACKEND is not 'sim'), else Simulator().

        backend = default_backend();  backend.run("copy")
    """
    return GPU() if nvrtc.gpu_available() else Simulator()


class Banner:
    """The line every notebook opens with; HTML in JupyterLab, text elsewhere."""

    def __init__(self, text: str, gpu: bool):
        self.text, self.gpu = text, gpu

    def __repr__(self):
        return self.text

    def _repr_html_(self):
        color = "#2a9d8f" if self.gpu else "#457b9d"
        return (f"<div style='border-left:4px solid {color};padding:4px 10px;font-family:sans-serif'>"
                f"{html.escape(self.text)}</div>")


def banner(backend=None) -> Banner:
    """'GPU: <name> · peak ... · copy ... measured' or the CPU simulator's line.

        cl.banner(cl.Simulator(model_gpu="T4"))   # CPU simulator: ... modelled for a T4 ...
    """
    backend = backend or default_backend()
    if isinstance(backend, GPU):
        info = nvrtc.device_info()
        peak = info.peak_bandwidth / 1e9
        copy = backend.copy_gbps(256 << 20)
        return Banner(f"GPU: {info.name} (sm_{info.arch}, {info.sm_count} SMs) · peak {peak:.0f} GB/s (datasheet) · "
                      f"copy {copy:.0f} GB/s measured ({copy / peak:.0%} of peak)", True)
    article = "an" if backend.model_gpu[0] in "AEFHILMNORSX" else "a"      # an H100, an A100, a T4
    return Banner(f"CPU simulator: metrics are exact; times are not measured. Bandwidths shown are "
                  f"modelled for {article} {backend.model_gpu} (course_lib.model), not measured.", False)


def setup(backend=None, *, show_banner: bool = True, renderer: str | None = None):
    """Start a notebook: register %%cuda, store plotly figures as JSON only, show the banner.
    Returns the backend (the one given, or the default).

        backend = cl.setup()                       # or cl.setup(cl.Simulator(model_gpu="T4"))
    """
    from . import draw, magic
    draw.configure(renderer)
    magic.register()
    backend = backend or default_backend()
    if show_banner:
        b = banner(backend)
        try:
            from IPython import get_ipython
            from IPython.display import display
            if get_ipython() is not None:
                display(b)
                return backend
        except ImportError:
            pass
        print(b)
    return backend
