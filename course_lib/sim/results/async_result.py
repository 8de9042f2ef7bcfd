"""What a SimRun reports for the asynchronous copies and matrix moves (issue 19), beside its ld/st rows.

    rows(program)          # per-instruction rows for cp.async (global loads), ldmatrix / stmatrix (shared)
    extra_metrics(program) # the TMA counters ncu has (bytes, sectors, instructions), by their ncu names
    notes(program)         # what the course's counters leave out, as findings for run.warnings

A note also covers what the simulator cannot count: on an H100 a TMA store reading one block's tile
while another block on the same SM loads or stores shared memory adds wavefronts that ncu counts as
bank conflicts of the load/store unit. How many depends on timing (measured 2026-11-26, benchmarks/
results/h100_2026-11-26_final: tma_both float64 1024x1024 +27 to +28 % shared load wavefronts, three
launches, three counts; none at all with one block per SM); the simulator counts each instruction's own.

SimRun's own rows cover ld/st; the instructions here are counted in the same Counters arrays
(``copy_ops``, ``matrix_ops``) and need rows of the same shape, so that run.metrics, run.by_line,
the tables and the listings include them exactly as Nsight Compute does: a cp.async is a global
load, an ldmatrix a shared load, an stmatrix a shared store. A cp.async has a second row, space
"shared" and op "ldgsts": its writes into shared memory, which ncu counts under op_ldgsts (bank
conflicts; wavefronts in its smsp__sass_ counter), never as stores. The row's requests are the warps
that executed the copy, the same instruction as the global row's: not a second instruction. TMA and bulk copies have no rows: ncu
counts them in counters of their own, which ``extra_metrics`` gives and ``notes`` explains.
"""
from __future__ import annotations

from ..checks.finding import Finding
from ..movement.async_copy import NOTE as CP_ASYNC_NOTE
from ..movement.tma import NOTE as TMA_NOTE
from ..movement.tma import TMA_READ_BYTES, TMA_WRITE_BYTES

KINDS = {"cp": ("global", "ld"), "ldmatrix": ("shared", "ld"), "stmatrix": ("shared", "st")}


def rows(program) -> list[dict]:
    """SimRun.instructions rows for the kernel's cp.async, ldmatrix and stmatrix instructions."""
    c, out = program.counters, []
    for ins in program.kernel.instructions:
        kind = KINDS.get(ins.opcode)
        if kind is None or (ins.opcode == "cp" and "bulk" in ins.mods):
            continue
        i, (space, op) = ins.index, kind
        common = dict(pc=i, line=ins.line, text=ins.text, op=op, width=_width(ins), space=space)
        if space == "global" and c.global_requests[i]:
            out.append(dict(common, requests=int(c.global_requests[i]), sectors=int(c.sectors[i]), wavefronts=0,
                            conflicts=0, bytes=int(c.global_bytes[i])))
        if ins.opcode == "cp" and c.ldgsts_requests[i]:          # the same copy's writes into shared memory
            out.append(dict(common, space="shared", op="ldgsts", requests=int(c.ldgsts_requests[i]), sectors=0,
                            wavefronts=int(c.ldgsts_wavefronts[i]), conflicts=int(c.ldgsts_conflicts[i]),
                            bytes=int(c.ldgsts_bytes[i])))
        elif space == "shared" and c.shared_requests[i]:
            out.append(dict(common, requests=int(c.shared_requests[i]), sectors=0, wavefronts=int(c.wavefronts[i]),
                            conflicts=int(c.conflicts[i]), bytes=int(c.shared_bytes[i])))
    return out


def _width(ins) -> int:
    if ins.opcode == "cp":
        value = ins.operands[2].value if len(ins.operands) > 2 else 0
        return int(value) if isinstance(value, int) else 0
    return 16                                         # a row of an 8x8 matrix of 16-bit values


def extra_metrics(program) -> dict:
    return dict(getattr(program, "tma_counts", {}) or {})


SHARED_BY_BLOCKS_NOTE = (
    "TMA stores and shared loads/stores of several blocks: on a GPU, when another block on the same SM "
    "loads or stores shared memory while a TMA store reads a tile, ncu counts extra shared wavefronts and "
    "bank conflicts that depend on timing and vary launch to launch (H100, tma_both float64 1024x1024: "
    "+27 % shared load wavefronts); the simulator counts each instruction's own, what ncu shows when each "
    "block has its SM to itself")


def notes(program) -> list[Finding]:
    found = []
    tma = extra_metrics(program)
    if tma:
        moved = f"{tma.get(TMA_READ_BYTES, 0)} bytes in, {tma.get(TMA_WRITE_BYTES, 0)} bytes out"
        found.append(Finding("tma", 0, f"{TMA_NOTE} ({moved})", 1, None, None))
    blocks = program.grid[0] * program.grid[1] * program.grid[2]
    if tma.get(TMA_WRITE_BYTES) and blocks > 1 and program.counters.shared_requests.any():
        found.append(Finding("tma_shared", 0, SHARED_BY_BLOCKS_NOTE, 1, None, None))
    if any(ins.opcode == "cp" and "bulk" not in ins.mods and "commit_group" not in ins.mods and
           "wait_group" not in ins.mods and "wait_all" not in ins.mods for ins in program.kernel.instructions):
        found.append(Finding("cp.async", 0, CP_ASYNC_NOTE, 1, None, None))
    return found
