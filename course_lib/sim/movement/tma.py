"""The Tensor Memory Accelerator's tiled copies: tensor maps, boxes, swizzle (cp.async.bulk.tensor).

    m = TensorMap(a, box=(64, 32), swizzle=128)      # a: a 2-D numpy array; box in numpy order (rows, cols)
    m.check()                                        # the driver's rules, as course_lib errors
    raw = m.encode(base_address)                     # 128 bytes the simulated kernel receives
    desc = decode(raw)                               # what the simulator's TMA reads back
    where = box_layout(desc, coords, dst=1024)       # global byte offsets, inside mask, shared addresses
    swizzled(addresses, 128)                         # the 16-byte chunk permutation the TMA applies

A tensor map describes a tensor in global memory (address, sizes, byte strides: dimension 0 is
the innermost, CUDA's order) and a *box*: the tile one copy moves, stored densely in shared
memory, innermost dimension first. A load fills box elements outside the tensor with zeros (or,
``fill="nan"``, a NaN) and always delivers the whole box's bytes to its mbarrier; a store writes
only the elements inside. With a swizzle mode of 32, 64 or 128 bytes the 16-byte chunks of the box
are permuted as they land: shared byte address b goes to ``b ^ ((b >> 3) & MASK)`` (MASK 0x10,
0x30, 0x70; bits 4..6 of the address are XORed with bits 7..9), the hardware form of notebook 07's chunk
swizzle. The rules the driver enforces (cuda.h, cuTensorMapEncodeTiled) are checked here for both
backends: a map the simulator accepts is one the GPU accepts (``gpu/tensor_map.py`` encodes it
for the driver).

The 128 bytes are the simulator's own encoding (the driver's is opaque): a magic word, the
element type, rank, box, strides and the simulated address. This module computes addresses and
values; the executor moves bytes, counts and tracks the mbarrier (``mbarrier.py``).
"""
from __future__ import annotations

import functools
import struct
from dataclasses import dataclass

import numpy as np

from ...errors import ArgumentError

MAGIC = 0x504D4154            # 'TAMP' little-endian: a simulator tensor map
SWIZZLE_MASK = {0: 0, 32: 0x10, 64: 0x30, 128: 0x70}
FLOAT_KINDS = "f"
_HEAD = struct.Struct("<IBBBBBBBB5B5B2x")      # magic, version, rank, itemsize, kind, swizzle/16, fill, l2/64, pad; box-1, estride
_BODY = struct.Struct("<Q5I4x4Q")              # address; dims-1 (u32); byte strides of dims 1..4


@dataclass(frozen=True)
class Desc:
    """A decoded tensor map, innermost dimension first."""
    address: int
    itemsize: int
    kind: str                  # numpy dtype kind ('f', 'u', 'i')
    dims: tuple
    strides: tuple             # bytes, dims 1.. (dim 0 is contiguous)
    box: tuple
    element_strides: tuple
    swizzle: int
    nan_fill: bool

    @property
    def box_bytes(self) -> int:
        n = self.itemsize * self.box[0]                 # no element stride along dimension 0
        for b, e in zip(self.box[1:], self.element_strides[1:]):
            n *= -(-b // e)
        return n


class TensorMap:
    """A tensor map over a C-contiguous numpy (or CuPy) array, for a TMA kernel argument
    (``const __grid_constant__ CUtensorMap``). ``box`` and the array's shape are in numpy order
    (outermost first); the kernel's coordinates are innermost first, (column, row)."""

    def __init__(self, array, box, *, swizzle: int = 0, fill: str = "zero", l2_promotion: int = 0,
                 element_strides=None):
        self.array = array
        self.box = tuple(int(b) for b in (box if hasattr(box, "__len__") else (box,)))
        self.swizzle = swizzle
        self.fill = fill
        self.l2_promotion = l2_promotion
        self.element_strides = tuple(element_strides) if element_strides is not None else (1,) * len(self.box)
        self.check()

    def __repr__(self):
        shape = "x".join(map(str, self.array.shape))
        return (f"TensorMap({shape} {np.dtype(self.array.dtype).name}, box={self.box}, swizzle={self.swizzle}"
                + (f", fill='{self.fill}'" if self.fill != "zero" else "") + ")")

    # the driver's view: innermost first
    @property
    def dims(self):
        return tuple(int(d) for d in reversed(self.array.shape))

    @property
    def byte_strides(self):
        return tuple(int(s) for s in reversed(self.array.strides))[1:]

    @property
    def box_dims(self):
        return tuple(reversed(self.box))

    def check(self):
        """Raise ArgumentError where cuTensorMapEncodeTiled would refuse this map."""
        a, hint = self.array, "e.g. TensorMap(a, box=(32, 32), swizzle=128) for a 2-D array a"
        shape = getattr(a, "shape", None)
        if shape is None or not hasattr(a, "dtype"):
            raise ArgumentError(f"a TensorMap needs an array, not {type(a).__name__}", hint=hint)
        dt = np.dtype(a.dtype)
        if dt.itemsize not in (1, 2, 4, 8) or dt.kind not in "fiub":
            raise ArgumentError(f"the TMA moves 1-, 2-, 4- or 8-byte numbers, not {dt}", hint=hint)
        if not 1 <= len(shape) <= 5 or len(self.box) != len(shape):
            raise ArgumentError(f"box={self.box} must give one size per dimension of the {len(shape)}-D array "
                                f"(1 to 5 dimensions), outermost first", hint=hint)
        if not getattr(a, "flags", None) or not a.flags.c_contiguous:
            # the driver takes any row pitch that is a multiple of 16 bytes; this wrapper (and the
            # simulator's copy of the array) assumes rows one after another
            raise ArgumentError("course_lib's TensorMap takes only C-contiguous arrays (rows one after another)",
                                hint="np.ascontiguousarray(a); " + hint)
        if self.swizzle not in SWIZZLE_MASK:
            raise ArgumentError(f"swizzle={self.swizzle!r}: the modes are 0 (none), 32, 64 and 128 (bytes)", hint=hint)
        if self.fill not in ("zero", "nan") or (self.fill == "nan" and dt.kind != "f"):
            raise ArgumentError(f"fill={self.fill!r}: 'zero', or 'nan' for floating-point arrays only", hint=hint)
        if self.l2_promotion not in (0, 64, 128, 256):
            raise ArgumentError(f"l2_promotion={self.l2_promotion!r}: 0, 64, 128 or 256 (bytes)", hint=hint)
        if any(d < 1 or d > 1 << 32 for d in shape):
            raise ArgumentError(f"every dimension must hold 1 to 2^32 elements, not {tuple(shape)}", hint=hint)
        for s in self.byte_strides:
            if s % 16 or s >= 1 << 40:
                raise ArgumentError(
                    f"the TMA needs rows whose starts are a multiple of 16 bytes apart: this array's rows are {s} "
                    f"bytes apart ({shape[-1]} elements of {dt.itemsize} bytes), not a multiple of 16",
                    hint="copy it into an array with padded rows (shape (rows, cols + pad), a pitch that is a multiple "
                         "of 16 bytes): the driver would take the view of its first cols columns, but this TensorMap "
                         "takes only C-contiguous arrays; or use a kernel without the TMA")
        if any(not 1 <= b <= 256 for b in self.box):
            raise ArgumentError(f"box={self.box}: each box size must be 1 to 256 elements", hint=hint)
        inner = self.box[-1] * dt.itemsize
        if inner % 16:
            raise ArgumentError(f"box={self.box}: a box row must be whole 16-byte chunks ({inner} bytes here)", hint=hint)
        if self.swizzle and inner > self.swizzle:
            raise ArgumentError(f"box={self.box}: with swizzle={self.swizzle} a box row may be at most {self.swizzle} "
                                f"bytes, and it is {inner}", hint=f"box=({self.box[0]}, {self.swizzle // dt.itemsize}) "
                                "fits; or a larger swizzle mode")
        if any(not 1 <= e <= 8 for e in self.element_strides) or len(self.element_strides) != len(self.box):
            raise ArgumentError(f"element_strides={self.element_strides}: one per dimension, each 1 to 8", hint=hint)

    def desc(self, address: int) -> Desc:
        dt = np.dtype(self.array.dtype)
        return Desc(int(address), dt.itemsize, dt.kind, self.dims, self.byte_strides, self.box_dims,
                    tuple(reversed(self.element_strides)), self.swizzle, self.fill == "nan")

    def over(self, array) -> "TensorMap":
        """The same box, swizzle and fill over another array of the same shape and type (a copy)."""
        return TensorMap(array, self.box, swizzle=self.swizzle, fill=self.fill, l2_promotion=self.l2_promotion,
                         element_strides=self.element_strides)

    def driver_args(self, address: int) -> dict:
        """What ``gpu.tensor_map.encode_tiled`` takes for this map with the tensor at device `address`."""
        return dict(dtype=np.dtype(self.array.dtype), address=int(address), dims=self.dims, strides=self.byte_strides,
                    box=self.box_dims, element_strides=tuple(reversed(self.element_strides)), swizzle=self.swizzle,
                    l2_promotion=self.l2_promotion, nan_fill=self.fill == "nan")

    def encode(self, address: int) -> bytes:
        """The simulator's 128 bytes for this map with the tensor at simulated `address`."""
        return encode(self.desc(address), self.l2_promotion)


def encode(d: Desc, l2_promotion: int = 0) -> bytes:
    rank = len(d.dims)
    pad = lambda xs, n, v=0: tuple(xs) + (v,) * (n - len(xs))
    head = _HEAD.pack(MAGIC, 1, rank, d.itemsize, ord(d.kind), d.swizzle // 16, int(d.nan_fill),
                      l2_promotion // 64, 0, *pad([b - 1 for b in d.box], 5), *pad(d.element_strides, 5, 1))
    body = _BODY.pack(d.address, *pad([x - 1 for x in d.dims], 5), *pad(d.strides, 4))
    return (head + body).ljust(128, b"\0")


def decode(raw: bytes) -> Desc | None:
    """The map in 128 bytes, or None when they are not a simulator tensor map."""
    raw = bytes(raw)
    if len(raw) < 128 or struct.unpack_from("<I", raw)[0] != MAGIC:
        return None
    h = _HEAD.unpack_from(raw)
    rank, itemsize, kind, sw, nan = h[2], h[3], chr(h[4]), h[5] * 16, bool(h[6])
    box, estr = tuple(b + 1 for b in h[9:9 + rank]), tuple(h[14:14 + rank])
    b = _BODY.unpack_from(raw, _HEAD.size)
    dims, strides = tuple(x + 1 for x in b[1:1 + rank]), tuple(b[6:6 + rank - 1])
    return Desc(b[0], itemsize, kind, dims, strides, box, estr, sw, nan)


def swizzled(addresses, swizzle: int):
    """Shared byte addresses as the TMA's swizzle mode places them (absolute shared addresses)."""
    a = np.asarray(addresses, np.int64)
    mask = SWIZZLE_MASK[swizzle]
    return a ^ ((a >> 3) & mask) if mask else a


def box_elements(d: Desc, coords) -> tuple[np.ndarray, np.ndarray]:
    """Global element coordinates of every element of the box at `coords` (innermost first), in
    the order the box is stored, and whether each is inside the tensor: ((n, rank) int64, (n,) bool)."""
    rank = min(len(coords), len(d.box), len(d.element_strides))
    pts = _box_grid(tuple(d.box[:rank]), tuple(d.element_strides[:rank])) + np.asarray(
        [int(c) for c in coords[:rank]], np.int64)
    inside = np.all((pts >= 0) & (pts < np.asarray(d.dims, np.int64)), axis=1)
    return pts, inside


@functools.lru_cache(maxsize=256)
def _box_grid(box: tuple, element_strides: tuple) -> np.ndarray:
    """Each element's coordinates relative to the box's corner, in storage order: the same for every box of a
    tensor map (a kernel copies thousands of boxes of one shape; building the grid was most of a copy's cost)."""
    axes = []
    for k, (b, e) in enumerate(zip(box, element_strides)):
        step = 1 if k == 0 else e                    # the TMA has no stride along dimension 0
        axes.append(step * np.arange(b if k == 0 else -(-b // e), dtype=np.int64))
    grid = np.meshgrid(*reversed(axes), indexing="ij")          # outermost first: row-major order
    pts = np.stack([g.reshape(-1) for g in reversed(grid)], axis=1)
    pts.setflags(write=False)
    return pts


def box_layout(d: Desc, coords, dst: int):
    """For a box at `coords` copied to / from shared address `dst`: (global byte offsets from the
    tensor's address, inside mask, shared byte address of each element) in storage order."""
    pts, inside = box_elements(d, coords)
    strides = np.asarray((d.itemsize,) + tuple(d.strides), np.int64)
    offsets = (np.where(inside[:, None], pts, 0) * strides).sum(axis=1)
    shared = swizzled(dst + np.arange(len(pts), dtype=np.int64) * d.itemsize, d.swizzle)
    return offsets, inside, shared


# The NaN an H100 writes for fill="nan" (CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA): the 16-bit
# pattern 0x7FF7 repeated, read as a float32 0x7FF77FF7 (benchmarks/hopper_probe.py, 2026-11-26);
# repeated likewise it is a NaN of every float width (f16 0x7FF7, f64 0x7FF77FF77FF77FF7).
NAN_FILL_HALF = b"\xf7\x7f"


def fill_value(d: Desc) -> bytes:
    """The bytes of an out-of-bounds element of a load."""
    if not d.nan_fill:
        return bytes(d.itemsize)
    return NAN_FILL_HALF * (d.itemsize // 2)


def check_destination(dst: int, swizzle: int):
    """Why a box cannot land at shared address `dst` ('' when it can): 128-byte alignment, and the
    swizzle's repeat (1024 bytes for 128, 512 for 64, 256 for 32) for the pattern to be the one
    the kernel computes."""
    if dst % 128:
        return f"a TMA box must land at a 128-byte aligned shared address; this one is {dst % 128} bytes past one"
    repeat = {0: 128, 32: 256, 64: 512, 128: 1024}[swizzle]
    if dst % repeat:
        return (f"with swizzle {swizzle} the box should start at a multiple of {repeat} bytes (__shared__ alignas({repeat})): "
                f"the swizzle pattern follows the shared address")
    return ""


# What ncu counts for TMA and bulk copies (H100, benchmarks/results/h100_2026-11-26_hopper): none of
# the course's eight LSU metrics (global requests/sectors, shared wavefronts/conflicts) moves; the
# traffic shows in these counters, which a SimRun reports beside the eight with a note.
TMA_READ_BYTES = "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum"
TMA_READ_SECTORS = "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum"
TMA_WRITE_BYTES = "l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st.sum"
TMA_WRITE_SECTORS = "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st.sum"
TMA_LOADS = "smsp__inst_executed_op_tma_ld.sum"
TMA_STORES = "smsp__inst_executed_op_tma_st.sum"
NOTE = ("TMA and bulk copies (cp.async.bulk) do not go through the load/store unit, so ncu's global "
        "request/sector and shared wavefront counters leave them out; their bytes are counted in "
        f"{TMA_READ_BYTES} and {TMA_WRITE_BYTES}")


def load_counts(nbytes: int) -> dict:
    """One TMA box load of `nbytes` into shared memory: the whole box counts, also the
    parts outside the tensor (measured: a box wholly outside still reads its 4096 bytes)."""
    return {TMA_READ_BYTES: int(nbytes), TMA_READ_SECTORS: -(-int(nbytes) // 32), TMA_LOADS: 1}


def bulk_load_counts(src: int, dst: int, nbytes: int) -> dict:
    """One bulk copy (cp.async.bulk, no tensor map) of `nbytes` from global `src` to shared `dst`. The copy
    engine moves it in pieces of the destination's 128-byte lines, and each piece counts the 32-byte
    sectors of global memory it reads, bytes as whole sectors (measured, run 4: band's 1040-byte copies
    from rows 16 bytes off a 32-byte boundary into a 128-byte aligned buffer count 41 sectors, 1312
    bytes; from aligned rows 33; a 4096-byte aligned copy 128)."""
    sectors, d, end = 0, int(dst), int(dst) + int(nbytes)
    while d < end:
        piece = min(end, (d // 128 + 1) * 128) - d
        first = int(src) + (d - int(dst))
        sectors += (first + piece - 1) // 32 - first // 32 + 1
        d += piece
    return {TMA_READ_BYTES: 32 * sectors, TMA_READ_SECTORS: sectors, TMA_LOADS: 1}


def store_counts(global_offsets, inside, itemsize: int, address: int) -> dict:
    """One TMA box store: only the elements inside the tensor are written (measured: half a box
    outside writes 2048 of 4096 bytes, 64 sectors)."""
    off = np.asarray(global_offsets, np.int64)[np.asarray(inside, np.bool_)]
    sectors = np.unique((int(address) + off[:, None] + np.arange(itemsize)) >> 5).size if off.size else 0
    return {TMA_WRITE_BYTES: int(off.size * itemsize), TMA_WRITE_SECTORS: int(sectors), TMA_STORES: 1}
