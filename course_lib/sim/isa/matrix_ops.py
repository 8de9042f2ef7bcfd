"""Closures for ldmatrix, stmatrix and movmatrix (warp-wide, .sync.aligned, .m8n8 .b16).

    build(ins, program)          # -> run(batch, mask) for opcodes 'ldmatrix', 'stmatrix', 'movmatrix'

Which lane gets which value is matrix_moves'. Here: every lane of each warp that executes the
instruction must be there (a KernelError names the first missing lane otherwise: on a GPU the
result is undefined); row addresses must be 16-byte aligned and inside the block's shared
memory; each access is counted as ncu counts it, shared wavefronts of the 8 x count lanes that give
row addresses at 16 bytes each; the race detector sees the row lanes read or write the rows, and
``copy_races`` names rows an asynchronous copy is still writing.
"""
from __future__ import annotations

import numpy as np

from ...errors import KernelError
from ..checks.copy_races import check_shared as check_copies
from ..movement import matrix_moves as mm
from ..spaces.memory import SHARED_START, Fault
from .access import address_reader, raise_fault
from .operands import reader, writer


def _warps(program, b, mask, ins):
    """Warps (batch warp numbers) executing the instruction; all their lanes must be active."""
    slots = np.arange(b.n) if mask is None else np.flatnonzero(mask)
    warps = np.unique(slots // 32)
    if len(slots) != 32 * len(warps):
        have = np.zeros(b.n, np.bool_)
        have[slots] = True
        missing = np.flatnonzero(~have.reshape(-1, 32)[warps].reshape(-1))[0]
        w, lane = int(warps[missing // 32]), int(missing % 32)
        raise KernelError(f"{ins.opcode} is a warp-wide instruction (.sync.aligned): all 32 lanes of a warp must "
                          f"execute it together, and lane {lane} of warp {w % (b.tp // 32)} did not",
                          hint="keep it out of branches that split a warp, and launch whole warps (blockDim a "
                               "multiple of 32)", line=ins.line or None)
    return slots, warps


def _rows(program, b, mask, ins, addr, warps, count, is_load):
    """Row addresses (nw, count, 8), their flat shared offsets, and per-warp full address arrays."""
    full = np.zeros(b.n, np.int64)
    full[np.arange(b.n) if mask is None else np.flatnonzero(mask)] = np.asarray(addr).astype(np.int64)
    a2 = full.reshape(-1, 32)[warps]
    rows = mm.row_lanes(a2, count)
    bad = mm.check_rows(rows)
    if bad is not None:
        w, m, r = bad
        raise KernelError(f"{ins.opcode}: lane {8 * m + r} gives row address {int(rows[bad]) - SHARED_START} of shared "
                          "memory, which is not 16-byte aligned (each row is 16 bytes)", line=ins.line or None)
    bases = np.repeat(b.shared_base[warps * 32], count * 8)
    flat = b.shared.flat_offsets(rows.reshape(-1).astype(np.uint64), bases, 16)
    if isinstance(flat, Fault):
        raise_fault(program, b, mask, ins, "shared", flat, is_load)
    return rows, flat, a2


def _account(program, b, ins, warps, a2, count, rows, flat, is_load, values=None):
    if program.count_metrics and ins.index >= 0:
        a, act, width = mm.access_pattern(a2, np.ones(a2.shape, np.bool_), count)
        program.counters.add_shared(ins.index, a, act, width, is_load)
    row_slots = (warps[:, None] * 32 + np.arange(8 * count)).reshape(-1)
    if (b.async_copies is not None or b.tma_bar is not None) and ins.index >= 0:
        rows_mask = np.zeros(b.n, np.bool_)
        rows_mask[row_slots] = True
        check_copies(program, b, rows_mask, ins, flat, 16, is_load)      # rows a copy is still writing?
    if b.races is not None and ins.index >= 0:
        entries = b.races.entries(flat, 16)
        g = b.races.granule
        gvals = None if is_load else values.reshape(len(row_slots), -1).view({1: np.uint8, 2: np.uint16, 4: np.uint32,
                                                                              8: np.uint64, 16: np.uint64}[g])
        fresh = b.races.access(ins.index, row_slots, entries, not is_load, gvals)
        if is_load and fresh is not None:
            program.note_uninitialized(b, row_slots[fresh], ins, rows.reshape(-1)[fresh].astype(np.uint64))


def build(ins, program):
    if ins.opcode == "movmatrix":
        return _movmatrix(ins, program)
    count, trans = mm.parse_shape(ins.mods)
    if ins.opcode == "ldmatrix":
        outs = [writer(x, "b32") for x in (ins.operands[0].items if ins.operands[0].kind == "vec" else (ins.operands[0],))]
        addr_r = address_reader(ins.operands[1], program)

        def run_ld(b, mask):
            slots, warps = _warps(program, b, mask, ins)
            rows, flat, a2 = _rows(program, b, mask, ins, addr_r(b, mask), warps, count, True)
            data = b.shared.data.reshape(-1)[flat[:, None] + np.arange(16)].reshape(len(warps), count, 8, 16)
            regs = mm.fragments(mm.rows_to_matrices(data), trans)
            for k, w in enumerate(outs):
                w(b, mask, regs[:, :, k].reshape(-1))
            _account(program, b, ins, warps, a2, count, rows, flat, True)
        return run_ld
    addr_r = address_reader(ins.operands[0], program)
    ins_r = [reader(x, "b32", program) for x in (ins.operands[1].items if ins.operands[1].kind == "vec" else (ins.operands[1],))]

    def run_st(b, mask):
        slots, warps = _warps(program, b, mask, ins)
        rows, flat, a2 = _rows(program, b, mask, ins, addr_r(b, mask), warps, count, False)
        regs = np.stack([np.asarray(r(b, mask)).astype(np.uint32).reshape(len(warps), 32) for r in ins_r], axis=2)
        data = mm.matrices_to_rows(mm.matrices_of(regs, trans)).reshape(-1, 16)
        b.shared.data.reshape(-1)[flat[:, None] + np.arange(16)] = data
        _account(program, b, ins, warps, a2, count, rows, flat, False, data)
    return run_st


def _movmatrix(ins, program):
    out, src = writer(ins.operands[0], "b32"), reader(ins.operands[1], "b32", program)

    def run(b, mask):
        slots, warps = _warps(program, b, mask, ins)
        regs = np.asarray(src(b, mask)).astype(np.uint32).reshape(len(warps), 32)
        out(b, mask, mm.movmatrix(regs).reshape(-1))
    return run
