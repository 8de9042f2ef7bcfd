"""Notebook 06 (more work per thread): occupancy and bytes in flight, as plain arithmetic.

    from course_lib.lessons import occupancy
    occupancy.owners(tile=32, block_rows=8)            # which row of threads moves each tile row
    launches = [occupancy.Launch.of("padded"), occupancy.Launch.of("padded_32x8")]
    occupancy.table(launches)                          # blocks and threads per SM, bytes in flight
    occupancy.waves(launches, rounds.load())           # with measured times: time per wave of blocks
    occupancy.in_flight(launches, rounds.in_flight())  # the most in flight against the measured average

An SM holds as many blocks as the tightest of four limits allows: threads (2048 on an H100),
blocks (32), registers (65536) and shared memory (228 KiB, of which each block also reserves
1 KiB). Registers per thread are only known after the GPU compiler runs (``ptxas``); without a
GPU this module assumes ``REGS`` per thread, which is more than these small kernels use, so the
register limit never decides here. It computes; it does not run or time kernels.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from .. import transposes
from ..notebook.draw import HTMLText
from . import rounds
from .measured import _table

# per-SM limits (CUDA programming guide, compute capabilities 7.5 / 8.0 / 9.0) and SM counts
SM = {
    "H100": dict(threads=2048, blocks=32, regs=65536, shared=228 * 1024, reserved=1024, sms=132),
    "A100": dict(threads=2048, blocks=32, regs=65536, shared=164 * 1024, reserved=1024, sms=108),
    "T4": dict(threads=1024, blocks=16, regs=65536, shared=64 * 1024, reserved=0, sms=40),
}
REGS = 32


@dataclass(frozen=True)
class Launch:
    """How one kernel is launched: threads per block, the piece of `in` a block moves, shared bytes."""
    name: str
    block: tuple
    tile: tuple                 # (columns, rows) of `in` one block moves
    shared_bytes: int
    itemsize: int = 4

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1]

    @property
    def elements_per_thread(self) -> float:
        return self.tile[0] * self.tile[1] / self.threads

    @classmethod
    def of(cls, key: str, dtype=np.float32, name: str | None = None, **params) -> "Launch":
        """The launch of a course kernel (transposes.SPECS), for a 8192 x 8192 matrix."""
        t = transposes.kernel(key, dtype, **params)
        _, block = t.config(8192, 8192)
        tile = t.tile
        return cls(name or key, tuple(block), tuple(tile), t.function.static_shared_bytes, np.dtype(dtype).itemsize)


def resident(launch: Launch, gpu: str = "H100", regs: int = REGS) -> tuple[int, str]:
    """(blocks one SM holds at once, the limit that decides it)."""
    sm = SM[gpu]
    limits = {"threads": sm["threads"] // launch.threads, "blocks": sm["blocks"],
              "registers": sm["regs"] // (regs * launch.threads),
              "shared memory": sm["shared"] // (launch.shared_bytes + sm["reserved"])}
    which = min(limits, key=limits.get)
    return limits[which], which


def table(launches, gpu: str = "H100", regs: int = REGS) -> HTMLText:
    """Per kernel: block, elements per thread, blocks and threads per SM (and the limit), and the
    most bytes of loads an SM can have in flight: every resident thread with all its loads issued."""
    cols = ["kernel", "block", "elements/thread", "blocks/SM", "limited by", "threads/SM",
            "loads in flight/SM (max)"]
    body = []
    for la in launches:
        n, why = resident(la, gpu, regs)
        inflight = n * la.threads * la.elements_per_thread * la.itemsize
        body.append([la.name, f"{la.block[0]}x{la.block[1]}", f"{la.elements_per_thread:g}", str(n), why,
                     str(n * la.threads), f"{inflight / 1024:.0f} KiB"])
    return _table(f"{gpu}: {SM[gpu]['sms']} SMs, at most {SM[gpu]['threads']} threads and {SM[gpu]['blocks']} "
                  f"blocks per SM ({regs} registers per thread assumed)", cols, body).sourced(
        f"computed from the {gpu}'s limits (arithmetic, not measured)")


def in_flight(launches, measured: dict, gpu: str = "H100") -> HTMLText:
    """The most loads an SM can have requested (this module's arithmetic) next to what each kernel
    keeps requested on average, by Little's law from a benchmarks/latency.py run: {kernel: Spread}
    (``rounds.in_flight()``), and the latency that average rests on."""
    run = rounds.load(rounds.LATENCY)
    body = []
    for la in launches:
        n, _ = resident(la, gpu)
        most = n * la.threads * la.elements_per_thread * la.itemsize / 1024
        got, lat = measured.get(la.name), run.get("loaded", {}).get(la.name, {}).get("ns")
        body.append([la.name, f"{most:.0f}", "-" if got is None else f"{got.median:.1f} [{got.low:.1f}-{got.high:.1f}]",
                     "-" if lat is None else f"{lat['median']:.0f}"])
    return _table(f"{gpu}, KiB of loads requested per SM: the most (arithmetic) and the average (Little's law: "
                  f"loads per SM x latency under the kernel's own load): "
                  + (rounds.named(run) if not run.get("missing") else f"{run['path']} is missing"),
                  ["kernel", "most (KiB)", "average (KiB)", "latency (ns)"], body)


def waves(launches, measured, dtype: str = "float32", gpu: str = "H100", shape=(8192, 8192)) -> HTMLText:
    """With measured times — a benchmarks/rounds.py run (the median of its rounds) or a one-run
    measured.Bench — how many blocks the launch has, how many an H100 runs at once (one 'wave'),
    and how long each wave took: the life of one block."""
    cols = ["kernel", "blocks", "resident", "waves", "measured ms", "µs per wave", "loads per SM (GB/s)"]
    body = []
    for la in launches:
        ms = _measured_ms(measured, la.name, dtype, shape)
        if ms is None:
            continue
        n, _ = resident(la, gpu)
        blocks = math.ceil(shape[1] / la.tile[0]) * math.ceil(shape[0] / la.tile[1])
        at_once = n * SM[gpu]["sms"]
        w = blocks / at_once
        per_wave = ms * 1e3 / w
        kb_per_sm = n * la.tile[0] * la.tile[1] * la.itemsize / 1024
        body.append([la.name, str(blocks), str(at_once), f"{w:.0f}", f"{ms:.3f}", f"{per_wave:.2f}",
                     f"{kb_per_sm * 1.024 / per_wave:.1f}"])
    if isinstance(measured, dict):
        source = ("median of the rounds, " + rounds.named(measured)) if not measured.get("missing") else \
            f"{measured['path']} is missing in this installation"
    else:
        source = f"{measured.device}, {measured.date} ({measured.source})"
    return _table(f"{shape[0]}x{shape[1]} {dtype}: times measured on {source}; the rest is arithmetic", cols, body)


def _measured_ms(measured, name, dtype, shape):
    if isinstance(measured, dict):                # a benchmarks/rounds.py run
        s = rounds.value(measured, dtype, shape, name, "ms") if not measured.get("missing") else None
        return None if s is None else s.median
    row = measured.get((name, dtype))
    return None if row is None else row.ms


def owners(tile: int = 32, block_rows: int = 8, rows: int = 12, cols: int = 8) -> str:
    """A corner of the tile: for each element, the threadIdx.y of the thread that moves it
    (threadIdx.x is the column). With BLOCK_ROWS = 8, rows 0, 8, 16, 24 belong to threadIdx.y 0."""
    ty = np.arange(tile)[:, None] % block_rows + np.zeros((1, tile), int)
    lines = [f"tile {tile}x{tile}, block {tile}x{block_rows}: threadIdx.y that moves each element "
             f"(first {rows} rows, {cols} columns)",
             "        " + " ".join(f"c{c:<2d}" for c in range(cols))]
    for r in range(rows):
        lines.append(f"row {r:2d}: " + " ".join(f"{ty[r, c]:3d}" for c in range(cols))
                     + f"   <- pass {r // block_rows} of the loop: j = {block_rows * (r // block_rows)}")
    return "\n".join(lines)


def block_rows_point(sim, TILE: int, BLOCK_ROWS: int, PAD: int = 1, gpu: str = "H100"):
    """One point of notebook 06's sweep over BLOCK_ROWS (None when BLOCK_ROWS > TILE): the
    modelled GB/s of kernels/tile.cu, resident threads per SM and the most loads in flight."""
    if BLOCK_ROWS > TILE:
        return None
    r = sim.run("tile", TILE=TILE, BLOCK_ROWS=BLOCK_ROWS, PAD=PAD, shape=(128, 128))
    la = Launch.of("tile", TILE=TILE, BLOCK_ROWS=BLOCK_ROWS, PAD=PAD)
    n, why = resident(la, gpu)
    return dict(gbps=r.model_gbps, threads=n * la.threads, limit=why,
                inflight_kb=n * la.threads * la.elements_per_thread * la.itemsize / 1024)


def block_rows_figures(xs, ys, TILE: int, **_):
    """The two charts of that sweep: modelled bandwidth, and loads in flight per SM."""
    from ..notebook import draw
    pts = [(f"{TILE}x{x}", y) for x, y in zip(xs, ys) if y]
    labels = [p[0] for p in pts]
    bw = draw.sweep(labels, {"modelled H100 GB/s": [round(y["gbps"]) for _, y in pts]},
                    xlabel="block (threads): TILE x BLOCK_ROWS", ylabel="GB/s (MODELLED, not measured)",
                    title=f"{TILE}x{TILE} padded tile: modelled bandwidth by block shape",
                    source="modelled for H100 from simulator counts (course_lib.model), not measured")
    occ = draw.sweep(labels, {"KiB of loads in flight per SM (most)": [round(y["inflight_kb"]) for _, y in pts]},
                     xlabel="block (threads): TILE x BLOCK_ROWS", ylabel="KiB",
                     title="loads one SM can have requested at once",
                     source="computed from the H100's limits (arithmetic, not measured)")
    return [bw, occ]


def memory_order(name: str, run) -> str:
    """Kernel `name`'s global loads and stores in machine-code order (sm_90 SASS), one per line, without its
    source lines: what the order of loads and stores says about bytes in flight (notebook 06)."""
    out = []
    for line in str(run.listing(view="sass", memory_only=True)).splitlines():
        m = re.match(r"^\s+([0-9a-f]{4})\s+(?:@!?U?P\w+\s+)?(\S+)[^/]*//\s*(global (?:ld|st)[^;]*)", line)
        if m:
            out.append(f"  {m[1]}  {m[2]:<16} {m[3]}")
    return f"{name}: global loads and stores in program order (SASS, sm_90)\n" + "\n".join(out)
