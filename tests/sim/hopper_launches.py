"""Test helper: the launches the H100 measured for issue 19 (benchmarks/hopper_probe.py under ncu),
rebuilt for the simulator with numpy arrays and course_lib TensorMaps.

    fn, grid, block, args, a, out = kernel_launch("tma_tile", np.float32, 96, 160)   # as hopper_common launches it
    fn, grid, block, args, shared = probe_launch("ldsm x4 trans=true rows=(l*1+0)%64 pitch=16")
    kernel_records(records), pattern_records(records)    # a run's ncu records, split
    metrics, notes = simulated(label)                    # either launch simulated, once per process
"""
import sys
from pathlib import Path

import numpy as np

import course_lib as cl
from course_lib.sim.movement.tma import TensorMap

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import hopper_common as hc  # noqa: E402
import hopper_probe as hp  # noqa: E402

_FUNCTIONS: dict = {}


def prepare(instances):
    """Compile the (key, dtype, params) instances not compiled yet, one NVRTC run per file
    (compiling each alone takes a second or two)."""
    by_file = {}
    for key, dt, params in instances:
        path, name = hc.instance(key, dt, params)
        if (str(path), name) not in _FUNCTIONS:
            by_file.setdefault(str(path), set()).add(name)
    for path, names in by_file.items():
        module = cl.RawModule(path=path, name_expressions=sorted(names))
        _FUNCTIONS.update({(path, n): module.get_function(n) for n in names})


def _function(key, dtype, params):
    path, name = hc.instance(key, dtype, params)
    prepare([(key, dtype, params)])
    return _FUNCTIONS[(str(path), name)]


def _params(key, dtype, params):
    """hopper_common's parameters for this instance (band's R and tma_out's NB follow the element size)."""
    p = dict(hc.DEFAULTS[key], **(params or {}))
    if key == "band" and "R" not in (params or {}):
        p["R"] = {1: 8, 2: 8, 4: 4, 8: 2}[np.dtype(dtype).itemsize]
    if key == "tma_out" and "NB" not in (params or {}) and np.dtype(dtype).itemsize == 1:
        p["NB"] = 1
    return p


def kernel_launch(key, dtype, rows, cols, params=None, seed=0):
    """(function, grid, block, args, input, output, shared_mem) of a new kernel on a random rows x cols
    matrix, the grid and tensor maps as hopper_common.launcher gives them on a GPU."""
    dt, s = np.dtype(dtype), np.dtype(dtype).itemsize
    p = _params(key, dt, params)
    fn = _function(key, dt, params or {})
    a = (np.random.default_rng(seed).random((rows, cols)) * 200 + 1).astype(dt)
    out = np.zeros((rows, cols) if key == "tma_copy" else (cols, rows), dt)
    out.view(np.uint8)[...] = 0xA5
    w, b, n = (p.get("SW") or 128) // s, 128 // s, np.int32
    cdiv = lambda x, y: -(-x // y)
    tm = lambda arr, box, sw=128: TensorMap(arr, box=box, swizzle=sw)
    r, c, shared = n(rows), n(cols), 0
    if key in ("tma_tile", "tma_pipe", "tma_wide"):
        args = (out, tm(a, (p["BOX_R"], w if key == "tma_tile" else b), p.get("SW", 128)), r, c)
        boxes = cdiv(cols, b) * cdiv(rows, p["BOX_R"])
        grid = ((cdiv(cols, w), cdiv(rows, p["BOX_R"])) if key == "tma_tile" else
                (min(boxes, 132 * p["BPS"]),) if key == "tma_pipe" else (cdiv(cols, p["NB"] * b) * cdiv(rows, p["BOX_R"]),))
        block = (32 * p["WARPS"],)
    elif key == "tma_copy":
        args, grid, block = (tm(out, (32, w), p["SW"]), tm(a, (32, w), p["SW"]), r, c), (cdiv(cols, w), cdiv(rows, 32)), (128,)
    elif key == "tma_both":
        args, grid, block = (tm(out, (w, w), p["SW"]), tm(a, (w, w), p["SW"]), r, c), (cdiv(cols, w), cdiv(rows, w)), (256,)
    elif key == "tma_out":
        args = (tm(out, (b, b)), tm(a, (b, b)), r, c)
        grid, block = (cdiv(cols, b), cdiv(rows, p["NB"] * b)), (32 * p["WARPS"],)
    elif key == "band":
        args, grid, block, shared = (out, a, r, c), (cdiv(rows, p["R"]),), (p["THREADS"],), p["R"] * cols * s
    else:
        args = (out, a, r, c)
        grid, block = (((cdiv(cols, 32), cdiv(rows, 32 * p["TILES"])), (32, 8)) if key == "async_tile" else
                       ((cdiv(cols, 32), cdiv(rows, 32 * p["WARPS"])), (32, p["WARPS"])) if key == "shuffle" else
                       ((cdiv(cols, 64), cdiv(rows, 64)), (p["THREADS"],)))
    return fn, grid, block, args, a, out, shared


_PROBES: dict = {}


def probe_launch(label):
    """(function, grid, block, args, shared_mem) of the probe launch `label` (hopper_probe.patterns()),
    on fresh buffers like the ncu worker's."""
    if not _PROBES:
        module = cl.RawModule(path=str(hp.PROBE), name_expressions=hp.names())
        _PROBES.update({n: module.get_function(n) for n in hp.names()})
        _PROBES["patterns"] = {p[0]: p[1:] for p in hp.patterns()}
    name, grid, block, spec = _PROBES["patterns"][label]
    bufs = dict(g=np.ones(65536 * 4, np.uint8), o8=np.zeros(8192, np.uint8), regs=np.zeros(64 * 4, np.uint32),
                sh=np.zeros(2048, np.uint16), mv=np.zeros(32, np.uint32))
    if spec and spec[0] == "map":
        sw, outside = spec[1], spec[2]
        maps = (TensorMap(np.ones((64, 80), np.float32), box=(32, 32), swizzle=sw),
                TensorMap(np.zeros((64, 80), np.float32), box=(32, 32), swizzle=sw))
        args = (*maps, bufs["o8"], np.int32(outside), np.int32(0), np.int32(0), np.int32(outside), np.int32(0))
    else:
        args = tuple(bufs[x] if isinstance(x, str) else np.int32(x) for x in spec)
    return _PROBES[name], grid, block, args, 0


def is_kernel_record(record) -> bool:
    words = record["label"].split()
    return len(words) == 4 and words[0] in hc.NEW


def kernel_records(records):
    return [r for r in records if is_kernel_record(r)]


def pattern_records(records):
    return [r for r in records if not is_kernel_record(r)]


_SIMULATED: dict = {}


def simulated(label) -> tuple[dict, set]:
    """(metrics, warnings' messages) of the measured launch `label` (a kernel's or a probe's), simulated the first
    time a test asks: the runs repeat launches (run 2 measured run 1's patterns again, the 'few' stages launches
    ncu measured once more with every counter, and tests/sim/test_ldgsts_agreement.py asks for some of them
    too), and the simulator gives a launch one answer, so each record is still compared with it."""
    if label not in _SIMULATED:
        if is_kernel_record({"label": label}):
            key, dtype, rows, cols = label.split()
            fn, grid, block, args, _, _, shared = kernel_launch(key, dtype, int(rows), int(cols))
        else:
            fn, grid, block, args, shared = probe_launch(label)
        run = fn.simulate(grid, block, args, shared_mem=shared, check_races=False, echo=False, progress=False)
        _SIMULATED[label] = dict(run.metrics), {w.message for w in run.warnings}
    return _SIMULATED[label]
