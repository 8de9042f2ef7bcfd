"""The library transposes a student would otherwise call, as contestants for benchmarks/transpose.py.

    from library_peers import peers          # benchmarks/ on sys.path (the scripts there put it)
    for name, make in peers(np.float32, no_compile=False):
        fn = make(a)                         # a: a CuPy array; fn() returns its transposed copy

CuPy ``ascontiguousarray(a.T)``, cuBLAS geam through ``cupy.asfortranarray(a)`` (a C-contiguous
2-D array made Fortran-ordered is a real transposed copy; CuPy uses geam for f32/f64 only),
PyTorch eager ``x.t().contiguous()`` and ``torch.compile`` of the same function, when torch is
importable. Nothing here times anything (course_lib.gpu.time_cold does).
"""
from __future__ import annotations

import functools

import numpy as np


def peers(dtype, no_compile):
    """[(name, make(a) -> fn)]: fn() returns the transposed copy (anything cupy.asarray takes),
    C-ordered cols x rows. Nothing but the library call is inside fn, so the timing is its own."""
    import cupy as cp
    out = [("cupy", lambda a: lambda: cp.ascontiguousarray(a.T))]
    if np.dtype(dtype) in (np.float32, np.float64):    # geam; other dtypes are an elementwise copy
        out.append(("cublas", lambda a: lambda: cp.asfortranarray(a).T))
    try:
        import torch
    except ImportError:
        return out

    def eager(a):
        x = torch.as_tensor(a, device="cuda")            # shares the CuPy buffer, no copy
        return lambda: x.t().contiguous()
    out.append(("torch", eager))
    if not no_compile:
        def comp(a):
            x = torch.as_tensor(a, device="cuda")
            return lambda: _compiled_transpose()(x)
        out.append(("torch.compile", comp))
    return out


@functools.lru_cache(maxsize=1)
def _compiled_transpose():
    """torch.compile of the eager line, made once per process: a run that times the same shape
    again (benchmarks/rounds.py) reuses the compiled kernel instead of compiling it again."""
    import torch
    dyn = torch._dynamo.config
    for limit in ("cache_size_limit", "recompile_limit"):   # one compile per dtype x shape
        if hasattr(dyn, limit):
            setattr(dyn, limit, 256)
    return torch.compile(lambda x: x.t().contiguous(), dynamic=False)
