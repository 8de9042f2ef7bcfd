"""The state of one batch of blocks: registers, special registers, memories, and what is recorded.

Threads are laid out block after block; each block gets its thread count rounded up to a
multiple of 32 "slots", so warp ``w`` of the batch is exactly slots ``32w .. 32w+31`` and a
partial last warp simply has dead slots. Registers are numpy arrays over all slots, stored
as unsigned integers of the declared width; instructions view them as the type they need.

A launch's batches share one :class:`Workspace`: register storage, shared and local memory and
the race detector's shadow are allocated once, for the largest batch, and every batch takes
views of its first slots. Handing them back to the allocator after each batch cost more than
the simulation itself (every batch faulted its pages in again); reusing them keeps the memory
of a launch at one batch's worth. Registers never live at the same time share one array
(``registers.plan_storage``); a register a batch may read before writing has its own, and reads
zeros, as when each batch had fresh arrays.
"""
from __future__ import annotations

import numpy as np

from ..compile.ptx import TYPES
from .spaces.block_memory import LocalMemory, SharedMemory
from .spaces.memory import SHARED_START, UINT

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


class Workspace:
    """The arrays every batch of one launch reuses, sized for `max_blocks` blocks."""

    def __init__(self, launch, max_blocks: int):
        self.launch = launch
        tp = launch.slots_per_block
        self.max_slots = max_blocks * tp
        slot = np.arange(self.max_slots, dtype=np.int64)
        self.slot = slot
        self.slot32 = slot.astype(np.int32)             # the race detector's thread numbers
        self.block_of = slot // tp
        self.tlin = slot % tp
        self.live = self.tlin < launch.threads_per_block
        self.all_true = np.ones(self.max_slots, np.bool_)
        self.storage = launch.register_storage
        self.arrays: dict = {}          # storage key -> array over max_slots
        self.shared = SharedMemory(max_blocks, launch.shared_bytes, launch.shared_vars)
        self.shared_base = self.block_of * self.shared.row_bytes - SHARED_START   # block's row, less the window start
        self.local = LocalMemory(self.max_slots, launch.local_bytes) if launch.local_bytes else None
        self.races = launch.new_race_detector(max_blocks, tp)

    def register(self, name: str, n: int) -> np.ndarray:
        """Storage for register `name` over the first `n` slots (contents left from earlier use):
        an array of its own, or one it shares with registers never live at the same time."""
        key = self.storage.key.get(name)
        if key is None:                       # not in the kernel's code (a call's parameter...)
            t = self.launch.kernel.registers.get(name, "b64")
            key = ("pred" if t == "pred" else TYPES[t][0] if t in TYPES else 8, "own", name)
        arr = self.arrays.get(key)
        if arr is None:
            arr = np.empty(self.max_slots, np.bool_ if key[0] == "pred" else UINT[key[0]])
            self.arrays[key] = arr
        return arr[:n]

    def shared_storage(self, name: str) -> bool:
        key = self.storage.key.get(name)
        return key is not None and key[1] == "shared"


class Batch:
    """Blocks [first, first + nblocks) of a launch, executed together."""
    ids = None          # the grid's linear block indices, for a batch of chosen blocks
    # Hopper's data movement, made when a kernel first uses it (copy_ops, copy_races, sync_ops):
    async_copies = None     # async_copy.AsyncCopies: cp.async copies in flight
    mbarriers = None        # mbarrier.MBarriers of the batch's blocks
    tma_bar = None          # per shared byte: the mbarrier a TMA / bulk copy completes it with (-1: none)
    arrivals = None         # {mbarrier key: [slots]}: who arrived in its current phase (copy_races)

    def __init__(self, workspace: Workspace, first: int, nblocks: int):
        launch = workspace.launch
        self.launch, self.workspace = launch, workspace
        self.first = first
        self.nblocks = nblocks
        self.tp = launch.slots_per_block
        self.n = n = nblocks * self.tp
        self.slot = workspace.slot[:n]
        self.slot32 = workspace.slot32[:n]
        self.block_of = workspace.block_of[:n]          # block index within the batch
        self.shared_base = workspace.shared_base[:n]
        self.tlin = workspace.tlin[:n]                  # linear thread index within the block
        self.alive = workspace.live[:n].copy()
        self.all_alive = launch.threads_per_block == self.tp
        self.all_true = workspace.all_true[:n]
        self.regs: dict[str, np.ndarray] = {}
        self.callparams: dict[str, dict] = {}
        self._special: dict[str, np.ndarray] = {}
        self.shared = workspace.shared.reset(nblocks)
        self.local = workspace.local.reset(n) if workspace.local is not None else None
        self.races = workspace.races.reset(nblocks) if workspace.races is not None else None
        self.steps = 0
        self.exit_pc = None     # per slot: where a thread left the kernel (-1: still running)
        self.trace_at = -1      # the traced block's index in this batch (-1: not in it)

    # ------------------------------------------------------------------ registers
    def reg(self, name: str, overwrite=False) -> np.ndarray:
        """A register's storage. One of its own is zeroed on first use in this batch (unless about
        to be overwritten whole); a shared one is always written before it is read (``registers``)."""
        arr = self.regs.get(name)
        if arr is None:
            arr = self.workspace.register(name, self.n)
            if not overwrite and not self.workspace.shared_storage(name):
                arr.fill(0)
            self.regs[name] = arr
        return arr

    def special(self, name: str) -> np.ndarray:
        v = self._special.get(name)
        if v is None:
            v = self._compute_special(name)
            self._special[name] = v
        return v

    def _block_index(self, axis):
        """Each slot's block coordinate along `axis` (0 = x)."""
        gx, gy, _ = self.launch.grid
        ids = self.ids if self.ids is not None else np.arange(self.first, self.first + self.nblocks)
        one = (ids % gx, (ids // gx) % gy, ids // (gx * gy))[axis].astype(np.uint32)
        return np.repeat(one, self.tp)

    def _compute_special(self, name):
        L = self.launch
        base, _, comp = name.partition(".")
        axis = "xyz".index(comp) if comp in ("x", "y", "z") else 0
        bx, by, _ = L.block
        if base == "%tid":  # one block's pattern, tiled: cheaper than dividing a million ints
            t = np.arange(self.tp, dtype=np.uint32)
            one = (t % bx, (t // bx) % by, t // (bx * by))[axis].astype(np.uint32)
            return np.tile(one, self.nblocks)
        if base == "%ctaid":
            return self._block_index(axis)
        if base in ("%laneid", "%warpid") or base.startswith("%lanemask"):
            return _lane_register(base, self.tlin)
        if base in ("%clock", "%clock64", "%globaltimer", "%globaltimer_lo"):
            wide = base.endswith("64") or base.startswith("%global")
            return np.uint64(self.steps) if wide else np.uint32(self.steps)
        return np.uint32(_uniform_register(L, base, axis, self.tp))


def _lane_register(base, tlin):
    if base == "%laneid":
        return (tlin % 32).astype(np.uint32)
    if base == "%warpid":
        return (tlin // 32).astype(np.uint32)
    lane = (tlin % 32).astype(np.uint64)
    one = np.uint64(1)
    v = {"%lanemask_eq": one << lane, "%lanemask_lt": (one << lane) - one,
         "%lanemask_le": (one << (lane + one)) - one,
         "%lanemask_gt": ~((one << (lane + one)) - one) & np.uint64(0xFFFFFFFF),
         "%lanemask_ge": ~((one << lane) - one) & np.uint64(0xFFFFFFFF)}[base]
    return v.astype(np.uint32)


def _uniform_register(L, base, axis, slots_per_block) -> int:
    """The special registers that are one number for the whole launch."""
    return {"%ntid": L.block[axis], "%nctaid": L.grid[axis], "%nwarpid": slots_per_block // 32,
            "%dynamic_smem_size": L.dynamic_shared, "%total_smem_size": L.shared_bytes,
            "%nsmid": 132}.get(base, 0)   # %smid, %gridid, cluster registers: one SM, one grid


class ChosenBatch(Batch):
    """A batch of chosen blocks (``blocks=``), not necessarily neighbours in the grid."""

    def __init__(self, workspace, ids):
        self.ids = np.asarray(ids, np.int64)
        super().__init__(workspace, int(self.ids[0]), len(self.ids))
