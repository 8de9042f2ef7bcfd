"""Shared by hopper_probe.py and hopper_bench.py: load CUDA code for the GPU at hand through
course_lib's compiler, build TMA tensor maps, and launch the new kernels of issue 19
(kernels/tma.cu, async_tile.cu, shuffle.cu, ldsm.cu) with their grids and arguments.

The probes, sweeps and ncu replays launch them this way, with the parameter sets named here (the
catalog's Transpose wrapper launches the catalog's own; tests/sim/hopper_launches.py mirrors this for the simulator).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import course_lib as cl  # noqa: E402
from course_lib.compile import source  # noqa: E402
from course_lib.gpu import tensor_map  # noqa: E402

_modules = {}


def functions(path, names):
    """{name: CuPy function} for template instances `names` of the .cu file `path`."""
    import cupy as cp
    key = (str(path), tuple(names))
    if key not in _modules:
        m = cl.RawModule(path=str(path), name_expressions=list(names))
        c = m.cubin_for(90, max_major=13)
        mod = cp.cuda.function.Module()
        mod.load(c.cubin)
        _modules[key] = (mod, {n: mod.get_function(c.lowered_names[n]) for n in names})
    return _modules[key][1]


def map_of(a, box, swizzle=0, nan_fill=False):
    """A tensor map over the 2-D CuPy array `a`, box (columns, rows), as a kernel argument."""
    rows, cols = a.shape
    raw = tensor_map.encode_tiled(dtype=a.dtype, address=a.data.ptr, dims=(cols, rows),
                                  strides=(cols * a.dtype.itemsize,), box=box, swizzle=swizzle, nan_fill=nan_fill)
    return tensor_map.as_kernel_argument(raw)


def tma_ok(rows, cols, itemsize):
    """The TMA needs row pitches that are multiples of 16 bytes (in's and out's)."""
    return (cols * itemsize) % 16 == 0 and (rows * itemsize) % 16 == 0


# name -> (file, template, needs) ; needs: 'tma' (aligned pitches), 'b16' (2-byte, rows/cols % 8)
NEW = {
    "tma_tile": ("tma.cu", "tma_tile<{T}, {BOX_R}, {WARPS}, {SW}>", "tma"),
    "tma_pipe": ("tma_fast.cu", "tma_pipe<{T}, {BOX_R}, {WARPS}, {STAGES}, {ORDER}>", "tma"),
    "tma_wide": ("tma_fast.cu", "tma_wide<{T}, {BOX_R}, {WARPS}, {NB}, {ORDER}>", "tma"),
    "tma_out": ("tma_fast.cu", "tma_out<{T}, {WARPS}, {NB}>", "tma"),
    "tma_copy": ("tma.cu", "tma_copy<{T}, {SW}>", "tma"),
    "tma_both": ("tma.cu", "tma_both<{T}, {SW}>", "tma"),
    "async_tile": ("async_tile.cu", "async_tile<{T}, 32, 8, {STAGES}, {TILES}>", ""),
    "shuffle": ("shuffle.cu", "shuffle<{T}, {WARPS}>", ""),
    "ldsm": ("ldsm.cu", "ldsm<{T}, {THREADS}>", "b16"),
    "band": ("band.cu", "band<{T}, {R}, {THREADS}>", ""),
}
DEFAULTS = {"tma_tile": dict(BOX_R=64, WARPS=4, SW=128),
            "tma_pipe": dict(BOX_R=64, WARPS=4, STAGES=2, ORDER=0, BPS=8),
            "tma_wide": dict(BOX_R=64, WARPS=4, NB=2, ORDER=0), "tma_out": dict(WARPS=4, NB=2), "tma_copy": dict(SW=128), "tma_both": dict(SW=128),
            "async_tile": dict(STAGES=2, TILES=4), "shuffle": dict(WARPS=4), "ldsm": dict(THREADS=256),
            "band": dict(R=8, THREADS=256)}


def label(key, params):
    return key + "".join(f" {k}={v}" for k, v in params.items() if DEFAULTS[key].get(k) != v)


def applies(key, rows, cols, dtype):
    s = np.dtype(dtype).itemsize
    need = NEW[key][2]
    if need == "tma" and not tma_ok(rows, cols, s):
        return "row pitch not a multiple of 16 bytes"
    if need == "b16" and (s != 2 or rows % 8 or cols % 8):
        return "2-byte elements, rows and cols multiples of 8"
    return None


def instance(key, dtype, params):
    """(file, template instance name) of kernel `key` for `dtype` and `params`."""
    path, template, _ = NEW[key]
    p = dict(DEFAULTS[key], **params)
    if key == "band" and "R" not in params:            # a piece of R elements is 4, 8 or 16 bytes
        p["R"] = {1: 8, 2: 8, 4: 4, 8: 2}[np.dtype(dtype).itemsize]
    if key == "tma_out" and "NB" not in params and np.dtype(dtype).itemsize == 1:
        p["NB"] = 1                                    # two 16 KiB boxes of bytes already fill 32 of 48 KiB
    return HERE.parent / "kernels" / path, template.format(T=source.C_NAME[np.dtype(dtype)], **p)


_wanted = {}


def prepare(variants):
    """Compile every (key, dtype, params) in one NVRTC run per file (much faster than one each)."""
    by_file = {}
    for key, dtype, params in variants:
        path, name = instance(key, dtype, params)
        by_file.setdefault(path, []).append(name)
    for path, names in by_file.items():
        names = sorted(set(names))
        fns = functions(path, names)
        for n in names:
            _wanted[(str(path), n)] = fns[n]


def launcher(key, dtype, **params):
    """fn(out, a) -> None: launches kernel `key` on CuPy arrays (in a: rows x cols)."""
    p = dict(DEFAULTS[key], **params)
    if key == "band" and "R" not in params:
        p["R"] = {1: 8, 2: 8, 4: 4, 8: 2}[np.dtype(dtype).itemsize]
    if key == "tma_out" and "NB" not in params and np.dtype(dtype).itemsize == 1:
        p["NB"] = 1
    path, name = instance(key, dtype, params)
    fn = _wanted.get((str(path), name)) or functions(path, [name])[name]
    s = np.dtype(dtype).itemsize
    width = (p.get("SW") or 128) // s

    def run(out, a, maps=None):
        rows, cols = a.shape
        r, c = np.int32(rows), np.int32(cols)
        if key == "tma_tile":
            m = maps if maps is not None else map_of(a, (width, p["BOX_R"]), p["SW"])
            fn((-(-cols // width), -(-rows // p["BOX_R"])), (32 * p["WARPS"],), (out, m, r, c))
        elif key == "tma_pipe":
            m = maps if maps is not None else map_of(a, (128 // s, p["BOX_R"]), 128)
            boxes = -(-cols // (128 // s)) * -(-rows // p["BOX_R"])
            fn((min(boxes, 132 * p["BPS"]),), (32 * p["WARPS"],), (out, m, r, c))
        elif key == "tma_wide":
            m = maps if maps is not None else map_of(a, (128 // s, p["BOX_R"]), 128)
            nbx, nby = -(-cols // (p["NB"] * 128 // s)), -(-rows // p["BOX_R"])
            fn((nbx * nby,), (32 * p["WARPS"],), (out, m, r, c))
        elif key == "tma_out":
            b = 128 // s
            m = maps if maps is not None else (map_of(out, (b, b), 128), map_of(a, (b, b), 128))
            fn((-(-cols // b), -(-rows // (p["NB"] * b))), (32 * p["WARPS"],), (m[0], m[1], r, c))
        elif key == "tma_copy":
            m = maps if maps is not None else (map_of(out, (width, 32), p["SW"]), map_of(a, (width, 32), p["SW"]))
            fn((-(-cols // width), -(-rows // 32)), (128,), (m[0], m[1], r, c))
        elif key == "tma_both":
            m = maps if maps is not None else (map_of(out, (width, width), p["SW"]), map_of(a, (width, width), p["SW"]))
            fn((-(-cols // width), -(-rows // width)), (256,), (m[0], m[1], r, c))
        elif key == "async_tile":
            fn((-(-cols // 32), -(-rows // (32 * p["TILES"]))), (32, 8), (out, a, r, c))
        elif key == "shuffle":
            fn((-(-cols // 32), -(-rows // (32 * p["WARPS"]))), (32, p["WARPS"]), (out, a, r, c))
        elif key == "ldsm":
            fn((-(-cols // 64), -(-rows // 64)), (p["THREADS"],), (out, a, r, c))
        elif key == "band":
            shared = p["R"] * cols * s
            if shared > 48 * 1024:                     # above the default: the kernel must ask for it
                import cupy as cp
                cp.cuda.driver.funcSetAttribute(fn.ptr, 8, shared)   # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            fn((-(-rows // p["R"]),), (p["THREADS"],), (out, a, r, c), shared_mem=shared)

    def maps_for(out, a):
        """The tensor maps a launch on (out, a) needs, built once (timing loops reuse them)."""
        if key == "tma_tile":
            return map_of(a, (width, p["BOX_R"]), p["SW"])
        if key in ("tma_pipe", "tma_wide"):
            return map_of(a, (128 // s, p["BOX_R"]), 128)
        if key == "tma_out":
            return (map_of(out, (128 // s, 128 // s), 128), map_of(a, (128 // s, 128 // s), 128))
        if key == "tma_copy":
            return (map_of(out, (width, 32), p["SW"]), map_of(a, (width, 32), p["SW"]))
        if key == "tma_both":
            return (map_of(out, (width, width), p["SW"]), map_of(a, (width, width), p["SW"]))
        return None

    run.maps_for = maps_for
    run.is_copy = key == "tma_copy"
    return run
