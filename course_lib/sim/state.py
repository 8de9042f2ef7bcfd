"""The state of one batch of blocks: registers, special registers, memories, and what is recorded.

Threads are laid out block after block; each block gets its thread count rounded up to a
multiple of 32 "slots", so warp ``w`` of the batch is exactly slots ``32w .. 32w+31`` and a
partial last warp simply has dead slots. Registers are numpy arrays over all slots, stored
as unsigned integers of the declared width; instructions view them as the type they need.
"""
from __future__ import annotations

import numpy as np

from ..compile.ptx import TYPES
from .memory import UINT, LocalMemory, SharedMemory

SINT = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def as_type(arr: np.ndarray, t: str) -> np.ndarray:
    """View register storage as PTX type t; a wider register is truncated, a narrower extended."""
    if t == "pred":
        return arr if arr.dtype == np.bool_ else arr != 0
    w, npt = TYPES[t]
    if arr.dtype == np.bool_:
        arr = arr.astype(UINT[w])
    if arr.itemsize == w:
        return arr.view(npt)
    if arr.itemsize > w:
        return arr.astype(UINT[w]).view(npt)
    src = arr.view(SINT[arr.itemsize]) if t[0] == "s" else arr
    return src.astype(SINT[w] if t[0] == "s" else UINT[w]).view(npt)


def to_storage(val, t: str, storage) -> np.ndarray:
    """Convert a typed result to a register's storage type (sign-extending signed types)."""
    val = np.asarray(val)
    if t == "pred" or storage == np.bool_:
        return val.astype(np.bool_) if storage == np.bool_ else val.astype(storage)
    w, npt = TYPES[t]
    if npt is not None and val.dtype != npt:
        val = val.astype(npt)
    sw = np.dtype(storage).itemsize
    if sw == w:
        return val.view(storage)
    if sw > w and t[0] == "s":
        return val.astype(np.int64).astype(SINT[sw]).view(storage)
    return val.view(UINT[w]).astype(storage)


class Batch:
    """Blocks [first, first + nblocks) of a launch, executed together."""

    def __init__(self, launch, first: int, nblocks: int):
        self.launch = launch
        self.first = first
        self.nblocks = nblocks
        self.tp = launch.slots_per_block
        self.n = nblocks * self.tp
        slot = np.arange(self.n, dtype=np.int64)
        self.block_of = slot // self.tp                # block index within the batch
        self.tlin = slot % self.tp                      # linear thread index within the block
        self.alive = self.tlin < launch.threads_per_block
        self.all_alive = bool(self.alive.all())
        self.all_true = np.ones(self.n, np.bool_)
        self.regs: dict[str, np.ndarray] = {}
        self.callparams: dict[str, np.ndarray] = {}
        self._special: dict[str, np.ndarray] = {}
        self.shared = SharedMemory(nblocks, launch.shared_bytes, launch.shared_vars)
        self.local = LocalMemory(self.n, launch.local_bytes) if launch.local_bytes else None
        self.races = launch.new_race_detector(nblocks, self.tp)
        self.steps = 0
        self.exit_pc = None     # per slot: where a thread left the kernel (-1: still running)

    # ------------------------------------------------------------------ registers
    def reg(self, name: str, overwrite=False) -> np.ndarray:
        """A register's storage; created on first use (zeroed, unless about to be overwritten)."""
        arr = self.regs.get(name)
        if arr is None:
            t = self.launch.kernel.registers.get(name, "b64")
            make = np.empty if overwrite else np.zeros
            arr = make(self.n, np.bool_ if t == "pred" else UINT[TYPES[t][0]])
            self.regs[name] = arr
        return arr

    def special(self, name: str) -> np.ndarray:
        v = self._special.get(name)
        if v is None:
            v = self._compute_special(name)
            self._special[name] = v
        return v

    def _compute_special(self, name):
        L = self.launch
        base, _, comp = name.partition(".")
        axis = "xyz".index(comp) if comp in ("x", "y", "z") else 0
        bx, by, _ = L.block
        gx, gy, _ = L.grid
        if base == "%tid":  # one block's pattern, tiled: cheaper than dividing a million ints
            t = np.arange(self.tp, dtype=np.uint32)
            one = (t % bx, (t // bx) % by, t // (bx * by))[axis].astype(np.uint32)
            return np.tile(one, self.nblocks)
        elif base == "%ctaid":
            b = np.arange(self.first, self.first + self.nblocks)
            one = (b % gx, (b // gx) % gy, b // (gx * gy))[axis].astype(np.uint32)
            return np.repeat(one, self.tp)
        elif base == "%ntid":
            return np.uint32(L.block[axis])
        elif base == "%nctaid":
            return np.uint32(L.grid[axis])
        elif base == "%laneid":
            v = self.tlin % 32
        elif base in ("%warpid",):
            v = self.tlin // 32
        elif base == "%nwarpid":
            return np.uint32(self.tp // 32)
        elif base.startswith("%lanemask"):
            lane = (self.tlin % 32).astype(np.uint64)
            one = np.uint64(1)
            v = {"%lanemask_eq": one << lane, "%lanemask_lt": (one << lane) - one,
                 "%lanemask_le": (one << (lane + one)) - one,
                 "%lanemask_gt": ~((one << (lane + one)) - one) & np.uint64(0xFFFFFFFF),
                 "%lanemask_ge": ~((one << lane) - one) & np.uint64(0xFFFFFFFF)}[base]
        elif base in ("%dynamic_smem_size",):
            return np.uint32(L.dynamic_shared)
        elif base == "%total_smem_size":
            return np.uint32(L.shared_bytes)
        elif base in ("%clock", "%clock64", "%globaltimer", "%globaltimer_lo"):
            return np.uint64(self.steps) if base.endswith("64") or base.startswith("%global") else np.uint32(self.steps)
        elif base == "%nsmid":
            return np.uint32(132)
        else:  # %smid, %gridid, cluster registers: one SM, one grid
            return np.uint32(0)
        return np.asarray(v).astype(np.uint32)
