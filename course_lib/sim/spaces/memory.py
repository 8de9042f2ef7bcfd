"""Global memory of a simulated launch, and the address windows of the other spaces.

- **global**: each kernel argument array (and each module-level ``__device__``/``__constant__``
  variable) lives at its own fake device address, 4 KiB-aligned with a 64 GiB gap between
  buffers, so sector counts see the same alignment as ``cudaMalloc`` memory and any access
  that misses a buffer is caught — even one through a 32-bit index that overflowed, which
  lands up to 2^31 elements away (on a GPU it may land in another allocation). Loads and
  stores read and write the caller's numpy arrays in place. A :class:`StandIn` buffer has a
  buffer's exact size but no copy of its data: reads come from a function (the real host
  array, pages fetched from a device array, or zeros) and writes go to a small overlay, so
  a few blocks of a launch over gigabytes can be checked without allocating gigabytes.
- **generic**: addresses inside the shared or local window map to those spaces (``block_memory``
  holds them, per block and per thread); the rest are global, like the hardware's generic
  addressing.

Errors are raised as :class:`~course_lib.errors.MemoryAccessError` by the executor, which
knows the instruction, thread and line; this module only answers *what* and *where*.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GLOBAL_BASE = 0x0000_0100_0000_0000
BUFFER_GAP = 1 << 36   # > 2**31 elements of 8 bytes: an overflowed int index stays in the gap
SHARED_WINDOW = 0x0000_7F00_0000_0000
LOCAL_WINDOW = 0x0000_7E00_0000_0000
WINDOW_SIZE = 1 << 32
SHARED_START = 1024
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
NULL_REACH = 1 << 24   # an address this close to 0 is a null pointer plus an index, not a stray one


@dataclass
class Buffer:
    name: str          # what the student called it: argument name, or the variable name
    label: str         # e.g. "argument 1 'in' (1000x1030 float32)"
    base: int
    data: np.ndarray   # uint8 view of the caller's memory
    itemsize: int
    writable: bool = True

    @property
    def nbytes(self):
        return self.data.size

    def view(self, width):
        n = self.data.size // width * width
        return self.data[:n].view(UINT[width])


class StandIn(Buffer):
    """A buffer of `size` bytes whose contents are read on demand and never written back.

    ``read(byte_offsets) -> uint8 values`` supplies the original bytes; stores go to an
    overlay (sorted byte offsets and values) that later loads see, so a kernel that reads
    what it wrote behaves as on the GPU while the caller's data stays untouched."""

    def __init__(self, name, label, base, size, itemsize, read, writable=True):
        super().__init__(name, label, base, np.zeros(0, np.uint8), itemsize, writable)
        self.size, self.read = int(size), read
        self.ov_off = np.zeros(0, np.int64)
        self.ov_val = np.zeros(0, np.uint8)

    @property
    def nbytes(self):
        return self.size

    def view(self, width):
        return _StandInView(self, width)

    def get_bytes(self, off):
        off = np.asarray(off, np.int64)
        vals = np.asarray(self.read(off), np.uint8).reshape(off.shape)
        if self.ov_off.size and off.size:
            pos = np.minimum(np.searchsorted(self.ov_off, off), self.ov_off.size - 1)
            hit = self.ov_off[pos] == off
            vals = np.where(hit, self.ov_val[pos], vals)
        return vals

    def put_bytes(self, off, vals):
        off = np.concatenate([self.ov_off, np.asarray(off, np.int64).ravel()])
        vals = np.concatenate([self.ov_val, np.asarray(vals, np.uint8).ravel()])
        _, last = np.unique(off[::-1], return_index=True)   # the latest store of a byte wins
        keep = off.size - 1 - last
        self.ov_off, self.ov_val = off[keep], vals[keep]


class _StandInView:
    """Indexable like ``Buffer.view(width)``: element i is bytes [i*width, (i+1)*width)."""

    def __init__(self, buf, width):
        self.buf, self.width = buf, width

    def _bytes(self, idx):
        return np.asarray(idx, np.int64)[..., None] * self.width + np.arange(self.width)

    def __getitem__(self, idx):
        raw = self.buf.get_bytes(self._bytes(idx))
        return np.ascontiguousarray(raw).view(UINT[self.width])[..., 0]

    def __setitem__(self, idx, values):
        idx = np.asarray(idx, np.int64)
        vals = np.broadcast_to(np.asarray(values, UINT[self.width]), idx.shape)
        self.buf.put_bytes(self._bytes(idx), np.ascontiguousarray(vals)[..., None].view(np.uint8))

    def __len__(self):
        return self.buf.size // self.width


@dataclass
class Fault:
    """Why an access failed; the executor turns it into a MemoryAccessError."""
    kind: str           # 'out of bounds' | 'null pointer' | 'misaligned' | 'read-only'
    position: int       # index into the instruction's active threads
    address: int
    detail: str
    hint: str | None = None   # overrides the executor's hint for this kind


class GlobalMemory:
    def __init__(self):
        self.buffers: list[Buffer] = []
        self._next = GLOBAL_BASE
        self._bases = np.zeros(0, np.uint64)

    def add(self, name, array: np.ndarray, label=None, writable=True) -> int:
        data = array.reshape(-1).view(np.uint8) if array.size else np.zeros(0, np.uint8)
        return self._place(Buffer(name, label or name, self._next, data, array.itemsize, writable))

    def add_stand_in(self, name, size, itemsize, read, label=None, writable=True) -> int:
        """A buffer of `size` bytes whose bytes come from ``read(offsets)`` (see StandIn)."""
        return self._place(StandIn(name, label or name, self._next, size, itemsize, read, writable))

    def _place(self, buf) -> int:
        self.buffers.append(buf)
        self._next = (buf.base + max(buf.nbytes, 1) + BUFFER_GAP + 4095) // 4096 * 4096
        self._bases = np.array([b.base for b in self.buffers], np.uint64)
        return buf.base

    def locate(self, addr: np.ndarray, width: int):
        """Return (buffer index per address, byte offset per address) or a Fault."""
        lo, hi = int(addr.min()), int(addr.max())
        i = int(np.searchsorted(self._bases, np.uint64(lo), "right")) - 1
        if i >= 0:
            b = self.buffers[i]
            if lo >= b.base and hi + width <= b.base + b.nbytes:
                return i, addr - np.uint64(b.base)
        idx = np.searchsorted(self._bases, addr, "right").astype(np.int64) - 1
        ok = idx >= 0
        base = np.where(ok, self._bases[np.maximum(idx, 0)], 0)
        sizes = np.array([b.nbytes for b in self.buffers], np.uint64)
        end = np.where(ok, base + sizes[np.maximum(idx, 0)], 0)
        inside = ok & (addr >= base) & (addr + np.uint64(width) <= end)
        if not inside.all():
            pos = int(np.flatnonzero(~inside)[0])
            return self.fault(pos, int(addr[pos]), width)
        return idx, addr - base

    def fault(self, pos, address, width) -> Fault:
        if 0 <= address < NULL_REACH:
            return Fault("null pointer", pos, address,
                         f"address {address:#x} is a null pointer" + (f" plus {address} bytes" if address else "")
                         + " (nullptr, (T*)0, a pointer variable never set, or a pointer read from zeroed memory)",
                         hint="every pointer a kernel reads or writes through must point into an array: a kernel "
                              "argument, a __shared__ array, or a local one; check where this line's pointer was set")
        if not self.buffers:
            return Fault("out of bounds", pos, address, "the kernel has no global buffers")
        # Name the buffer the address is nearest to: usually one just past its end.
        def distance(b):
            if address < b.base:
                return b.base - address
            return max(0, address + width - (b.base + b.nbytes))
        b = min(self.buffers, key=distance)
        off = address - b.base
        size = max(b.itemsize, 1)
        n = b.nbytes // size
        valid = f"valid: elements 0..{n - 1}" if n else "the array is empty"
        wrapped = _overflowed(off, b.nbytes, (size, width, 1))
        if wrapped is not None:
            step, true_off = wrapped
            return Fault("out of bounds", pos, address,
                         f"{b.label}: element {off // size} ({-off} bytes before its start). That is exactly "
                         f"2^32 elements below element {true_off // size}, which is inside the array: the "
                         f"32-bit int index passed 2^31-1 = 2147483647 and wrapped around to a negative number",
                         hint="compute the index in 64 bits, e.g. (size_t)row * cols + col, or make the "
                              "index variables long long / size_t")
        if off < 0:
            where = f"element {off // size}, {-off} byte(s) before its start ({valid})"
        else:
            over = off + width - b.nbytes
            where = (f"element {off // size} (byte offset {off}); the access ends {over} byte(s) past "
                     f"the end ({valid})")
        return Fault("out of bounds", pos, address, f"{b.label}: {where}")

    def where(self, address) -> str:
        """'argument 1 'in' (10x30 float32), element 30 (byte offset 120)' for an address inside a buffer."""
        for b in self.buffers:
            if b.base <= address < b.base + max(b.nbytes, 1):
                off = address - b.base
                return f"{b.label}, element {off // max(b.itemsize, 1)} (byte offset {off})"
        return f"address {address:#x}"


def _overflowed(off, nbytes, strides):
    """(stride, offset) if `off` is 2^32 strides below an offset inside the buffer."""
    if off >= 0:
        return None
    for step in strides:
        true_off = off + (1 << 32) * step
        if 0 <= true_off < nbytes:
            return step, true_off
    return None


def check_alignment(addr: np.ndarray, width: int):
    if width > 1 and int(np.bitwise_or.reduce(addr)) & (width - 1):
        bad = (addr & np.uint64(width - 1)) != 0
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            return Fault("misaligned", pos, int(addr[pos]),
                         f"a {width}-byte access must start at a multiple of {width}; "
                         f"this address is {int(addr[pos]) % width} bytes past one")
    return None


def element_index(offsets: np.ndarray, width: int) -> np.ndarray:
    """Byte offsets (int64 or uint64, multiples of `width`) -> element indices, as int64."""
    idx = offsets >> (width.bit_length() - 1)
    return idx.view(np.int64) if idx.dtype == np.uint64 else idx


def gather(view: np.ndarray, offsets: np.ndarray, width: int, count: int) -> np.ndarray:
    """Read `count` consecutive `width`-byte items at each byte offset -> (n, count)."""
    idx = element_index(offsets, width)
    if count == 1:
        return view[idx][:, None]
    return view[idx[:, None] + np.arange(count)]


def scatter(view: np.ndarray, offsets: np.ndarray, width: int, values: np.ndarray):
    idx = element_index(offsets, width)
    if values.shape[1] == 1:
        view[idx] = values[:, 0]
    else:
        view[idx[:, None] + np.arange(values.shape[1])] = values
