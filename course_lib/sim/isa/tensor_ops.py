"""Closures for the bulk copies: cp.async.bulk (whole byte ranges) and cp.async.bulk.tensor (TMA boxes).

    tensor_load(ins, program)    # cp.async.bulk.tensor.Nd.shared::cluster.global...: a box into shared memory
    tensor_store(ins, program)   # cp.async.bulk.tensor.Nd.global.shared::cta...: a box out to the tensor
    bulk_load(ins, program)      # cp.async.bulk.shared::cluster.global.mbarrier...: bytes into shared memory
    read_global(program, b, mask, ins, addr, width)    # (n, width) bytes of global memory, bounds-checked

``copy_ops.build`` dispatches to these. The semantics live in ``tma`` (tensor maps, boxes, swizzle,
counting) and ``mbarrier``; here operands are read, bytes moved between the simulator's memories,
the transaction bytes completed on the mbarrier the copy names, and the TMA counters ncu keeps
added up per launch (``program.tma_counts``). A tensor map is read from the kernel's parameters
(``param_ops.PARAM_WINDOW``) or from global memory. Loads complete at once in the simulator: the
bytes they deliver are tagged with their mbarrier's phase (``copy_races``), so that a thread that
reads them before it saw that phase complete is named, as the hardware's timing could make it wrong.
"""
from __future__ import annotations

import re

import numpy as np

from ...compile.ptx import Operand
from ...errors import BarrierError, KernelError, UnsupportedInstruction
from ..checks.copy_races import barriers_of, initialized, phase_completed, tag_tma
from ..movement import mbarrier, tma
from ..spaces.memory import Fault
from .access import address_reader, raise_fault
from .operands import reader
from .param_ops import PARAM_WINDOW

_TENSOR = re.compile(r"^([%\w$.]+)(?:\+(\d+))?,\{(.*)\}$")


def _slots(b, mask):
    return np.arange(b.n) if mask is None else np.flatnonzero(mask)


def _one(b, slot):
    one = np.zeros(b.n, np.bool_)
    one[slot] = True
    return one


def read_global(program, b, mask, ins, addr, width):
    """(n, width) bytes at global addresses `addr` (bounds-checked, a fault named at `ins`)."""
    located = program.globals.locate(addr, width)
    if isinstance(located, Fault):
        raise_fault(program, b, mask, ins, "global", located, True)
    which, offsets = located
    if program.owners is not None:
        program.owners.note(program, b, mask, which, offsets, width, True)
    out = np.empty((len(addr), width), np.uint8)
    for i in np.unique(which) if np.ndim(which) else [which]:
        sel = (which == i) if np.ndim(which) else slice(None)
        data = program.globals.buffers[int(i)].view(1)
        out[sel] = data[(offsets[sel].astype(np.int64)[:, None] + np.arange(width))]
    return out


def _count_tma(program, counts):
    total = program.__dict__.setdefault("tma_counts", {})
    for k, v in counts.items():
        total[k] = total.get(k, 0) + v


def _complete(ins, b, key, nbytes):
    """A copy delivered `nbytes` to mbarrier `key` (mbarrier::complete_tx::bytes)."""
    bars = barriers_of(b)
    try:
        before = bars.phase_of(key)
        bars.complete_tx(key, nbytes)
    except mbarrier.MBarrierError as exc:
        raise BarrierError(str(exc), line=ins.line or None) from None
    phase_completed(b, key, before)


def _tensor_operand(op, program):
    """[tmap, {c0, c1, ...}] -> (address reader, [coordinate readers])."""
    m = _TENSOR.match(op.name or "")
    if not m:
        raise UnsupportedInstruction(f"cannot read the tensor operand `[{op.name}]`")
    base = address_reader(Operand("addr", name=m[1], value=int(m[2] or 0)), program)
    coords = [reader(Operand("reg", name=c.strip()), "s32", program) for c in m[3].split(",")]
    return base, coords


def _tensor_map(program, b, mask, ins, address: int) -> tma.Desc:
    if PARAM_WINDOW <= address < PARAM_WINDOW + (1 << 32):
        off = address - PARAM_WINDOW
        raw = program.params[off:off + 128]
    else:
        raw = read_global(program, b, mask, ins, np.array([address], np.uint64), 128)[0].tobytes()
    d = tma.decode(raw)
    if d is None:
        raise KernelError("the tensor map this copy reads is not one the simulator made (pass a course_lib.TensorMap "
                          "as the kernel's CUtensorMap argument)", line=ins.line)
    return d


def _box(program, b, slot, ins, d, coords, shared_addr):
    """(global addresses of the box's elements, inside mask, flat shared offsets), storage order."""
    off, inside, shared = tma.box_layout(d, coords, shared_addr)
    flat = b.shared.flat_offsets(shared.astype(np.uint64), np.full(len(shared), b.shared_base[slot]), d.itemsize)
    if isinstance(flat, Fault):
        raise KernelError(f"the TMA box does not fit in shared memory: {flat.detail}", line=ins.line)
    return np.uint64(d.address) + off.astype(np.uint64), inside, flat


def _boxes(program, b, mask, ins, maps, coords):
    """Per thread that issues the copy (usually one): (position, slot, its one-thread mask, the
    tensor map, the box's coordinates)."""
    slots = _slots(b, mask)
    cs = [np.broadcast_to(np.asarray(c(b, mask)).astype(np.int64), slots.shape) for c in coords]
    for i, slot in enumerate(slots):
        one = _one(b, slot)
        yield i, slot, one, _tensor_map(program, b, one, ins, int(maps[i])), [int(c[i]) for c in cs]


def tensor_load(ins, program):
    dst_r = address_reader(ins.operands[0], program)
    base, coords = _tensor_operand(ins.operands[1], program)
    bar_r = address_reader(ins.operands[2], program)

    def run(b, mask):
        dsts, bars = dst_r(b, mask), bar_r(b, mask)
        for i, slot, one, d, at in _boxes(program, b, mask, ins, base(b, mask), coords):
            why = tma.check_destination(int(dsts[i]), d.swizzle)
            if why and "aligned" in why:
                raise KernelError(why, line=ins.line)
            gaddr, inside, flat = _box(program, b, slot, ins, d, at, int(dsts[i]))
            data = np.tile(np.frombuffer(tma.fill_value(d), np.uint8), (len(flat), 1))
            if inside.any():
                data[inside] = read_global(program, b, one, ins, gaddr[inside], d.itemsize)
            b.shared.data.reshape(-1)[flat[:, None] + np.arange(d.itemsize)] = data
            initialized(b, flat, d.itemsize)
            key = (int(b.block_of[slot]), int(bars[i]))
            tag_tma(b, flat, d.itemsize, key, ins.index)
            _complete(ins, b, key, d.box_bytes)
            _count_tma(program, tma.load_counts(d.box_bytes))
    return run


def tensor_store(ins, program):
    """cp.async.bulk.tensor.Nd.global.shared::cta: a box from shared memory out to the tensor."""
    base, coords = _tensor_operand(ins.operands[0], program)
    src_r = address_reader(ins.operands[1], program)

    def run(b, mask):
        srcs = src_r(b, mask)
        for i, slot, one, d, at in _boxes(program, b, mask, ins, base(b, mask), coords):
            if min(at) < 0:
                raise KernelError(
                    f"a TMA store of a box at coordinates {tuple(at)}: an H100 stops the kernel with an illegal "
                    "instruction when a store's box starts at a negative coordinate (measured 2026-11-26; a load "
                    "may start there and fills with zeros, a store may only run past the far edges, clipped)",
                    hint="store the boxes of a tile grid from (0, 0): column blockIdx.x * BOX_C, row blockIdx.y * BOX_R",
                    line=ins.line or None)
            gaddr, inside, flat = _box(program, b, slot, ins, d, at, int(srcs[i]))
            if inside.any():
                _write_global(program, b, one, ins, gaddr[inside],
                              b.shared.data.reshape(-1)[flat[inside][:, None] + np.arange(d.itemsize)])
            _count_tma(program, tma.store_counts(gaddr - np.uint64(d.address), inside, d.itemsize, d.address))
    return run


def _write_global(program, b, one, ins, addr, raw):
    """Bytes raw (n, width) to global addresses `addr` (bounds- and read-only-checked)."""
    width = raw.shape[1]
    located = program.globals.locate(addr, width)
    if isinstance(located, Fault):
        raise_fault(program, b, one, ins, "global", located, False)
    which, offsets = located
    if program.owners is not None:
        program.owners.note(program, b, one, which, offsets, width, False)
    for w in np.unique(which) if np.ndim(which) else [which]:
        sel = (which == w) if np.ndim(which) else slice(None)
        buf = program.globals.buffers[int(w)]
        if not buf.writable:
            raise_fault(program, b, one, ins, "global", Fault("read-only", 0, int(addr[0]), f"{buf.label} is read-only"),
                        False)
        buf.view(1)[offsets[sel].astype(np.int64)[:, None] + np.arange(width)] = raw[sel]


def bulk_load(ins, program):
    """cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]."""
    dst_r, src_r = address_reader(ins.operands[0], program), address_reader(ins.operands[1], program)
    size_r = reader(ins.operands[2], "u32", program)
    bar_r = address_reader(ins.operands[3], program)

    def run(b, mask):
        slots = _slots(b, mask)
        dsts, srcs, bars = dst_r(b, mask), src_r(b, mask), bar_r(b, mask)
        sizes = np.broadcast_to(np.asarray(size_r(b, mask)).astype(np.int64), slots.shape)
        for i, slot in enumerate(slots):
            one, n = _one(b, slot), int(sizes[i])
            if n % 16 or int(dsts[i]) % 16 or int(srcs[i]) % 16:
                raise KernelError("a bulk copy moves a multiple of 16 bytes between 16-byte aligned addresses",
                                  line=ins.line)
            data = read_global(program, b, one, ins, np.array([srcs[i]], np.uint64), n)[0]
            flat = b.shared.flat_offsets(np.array([dsts[i]], np.uint64), b.shared_base[[slot]], n)
            if isinstance(flat, Fault):
                raise_fault(program, b, one, ins, "shared", flat, False)
            start = int(flat[0])
            b.shared.data.reshape(-1)[start:start + n] = data
            chunks = start + np.arange(0, n, 16)
            initialized(b, chunks, 16)
            key = (int(b.block_of[slot]), int(bars[i]))
            tag_tma(b, chunks, 16, key, ins.index)
            _complete(ins, b, key, n)
            _count_tma(program, tma.bulk_load_counts(int(srcs[i]), int(dsts[i]), n))
    return run
