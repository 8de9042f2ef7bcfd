"""ldmatrix, stmatrix and movmatrix (PTX ``.m8n8 .b16``): which lane gets which 16-bit value.

    rows = row_lanes(addr, count)                 # (nw, count, 8): the lanes' row addresses that count
    regs = fragments(matrices, trans)             # (nw, 8*count... ) 8x8 matrices -> (nw, 32, count) uint32
    mats = matrices_of(regs, trans)               # the inverse, for stmatrix
    out  = movmatrix(regs)                        # (nw, 32) -> (nw, 32): the fragment of the transpose

The layout (PTX ISA, "Warp-level matrix load/store/move"; checked on an H100 by
benchmarks/hopper_probe.py, ``semantics``). An 8 x 8 matrix of 16-bit values lives in a warp as
one 32-bit register per lane: lane l holds row l // 4, columns 2 (l % 4) and 2 (l % 4) + 1 (the
first in the low half). ``ldmatrix .x1/.x2/.x4`` reads 1, 2 or 4 such matrices from shared memory:
matrix m's 8 rows are 16 bytes each, at the addresses lanes 8 m .. 8 m + 7 give (the other lanes'
addresses are ignored), and register m of every lane receives matrix m. With ``.trans`` each
matrix is transposed on the way: lane l receives row l // 4 of the *transpose*, i.e. column l // 4
of the matrix. ``stmatrix`` is the same movement backwards; ``movmatrix .trans`` transposes a
matrix held in registers.

Cost: a matrix is 8 rows of 16 bytes, which the hardware reads like a quarter-warp of 16-byte
accesses (``access_pattern`` gives the metrics code the addresses and width). This module only
computes values and addresses; the executor moves bytes and counts.
"""
from __future__ import annotations

import numpy as np

COUNTS = (1, 2, 4)


def row_lanes(addr: np.ndarray, count: int) -> np.ndarray:
    """(nw, 32) lane addresses -> (nw, count, 8): row r of matrix m comes from lane 8 m + r."""
    _check_count(count)
    return addr[:, :8 * count].reshape(addr.shape[0], count, 8)


def access_pattern(addr: np.ndarray, active: np.ndarray, count: int):
    """(addresses, active lanes, width) of the shared access an ldmatrix/stmatrix makes: the
    8 * count lanes that give row addresses, 16 bytes each (the other lanes' addresses unused)."""
    _check_count(count)
    used = np.zeros_like(active)
    used[:, :8 * count] = True
    return addr, active & used, 16


def fragments(matrices: np.ndarray, trans: bool) -> np.ndarray:
    """(nw, count, 8, 8) uint16 matrices (row, column) -> (nw, 32, count) uint32 registers."""
    m = np.asarray(matrices, np.uint16)
    if trans:
        m = m.swapaxes(2, 3)
    nw, count = m.shape[:2]
    lane = np.arange(32)
    row, col = lane // 4, 2 * (lane % 4)
    lo = m[:, :, row, col].astype(np.uint32)          # (nw, count, 32)
    hi = m[:, :, row, col + 1].astype(np.uint32)
    return (lo | (hi << np.uint32(16))).swapaxes(1, 2)


def matrices_of(regs: np.ndarray, trans: bool) -> np.ndarray:
    """(nw, 32, count) uint32 registers -> (nw, count, 8, 8) uint16: what stmatrix writes, row by row."""
    r = np.asarray(regs, np.uint32).swapaxes(1, 2)    # (nw, count, 32)
    nw, count = r.shape[:2]
    out = np.empty((nw, count, 8, 8), np.uint16)
    lane = np.arange(32)
    row, col = lane // 4, 2 * (lane % 4)
    out[:, :, row, col] = (r & np.uint32(0xFFFF)).astype(np.uint16)
    out[:, :, row, col + 1] = (r >> np.uint32(16)).astype(np.uint16)
    return out.swapaxes(2, 3).copy() if trans else out


def movmatrix(regs: np.ndarray) -> np.ndarray:
    """(nw, 32) uint32: each warp's fragment of an 8 x 8 matrix -> the fragment of its transpose."""
    mats = matrices_of(np.asarray(regs, np.uint32)[:, :, None], trans=False)
    return fragments(mats, trans=True)[:, :, 0]


def rows_to_matrices(row_bytes: np.ndarray) -> np.ndarray:
    """(nw, count, 8, 16) uint8 rows as read from shared memory -> (nw, count, 8, 8) uint16."""
    return np.ascontiguousarray(row_bytes, np.uint8).view(np.uint16)


def matrices_to_rows(matrices: np.ndarray) -> np.ndarray:
    """(nw, count, 8, 8) uint16 -> (nw, count, 8, 16) uint8: the bytes stmatrix stores per row."""
    return np.ascontiguousarray(matrices, np.uint16).view(np.uint8)


def check_rows(addr_rows: np.ndarray):
    """Index (warp, matrix, row) of the first row address that is not 16-byte aligned, or None."""
    bad = (addr_rows & 15) != 0
    if not bad.any():
        return None
    return tuple(int(i) for i in np.argwhere(bad)[0])


def _check_count(count):
    if count not in COUNTS:
        raise ValueError(f".x{count}: ldmatrix/stmatrix move 1, 2 or 4 matrices (.x1, .x2, .x4)")


def parse_shape(mods) -> tuple[int, bool]:
    """(count, trans) from an instruction's modifiers, e.g. ('sync', 'aligned', 'm8n8', 'x4', 'trans', 'shared', 'b16')."""
    count = next((int(m[1:]) for m in mods if m in ("x1", "x2", "x4")), 1)
    return count, "trans" in mods
