"""Closures for the asynchronous copies: cp.async (LDGSTS), cp.async.bulk and cp.async.bulk.tensor (TMA).

    build(ins, program)          # -> run(batch, mask), like instructions.py's builders, for opcode 'cp'

The semantics live in async_copy (groups, zero-fill, counting) and tma (tensor maps, boxes,
swizzle, counting); this module reads operands, moves bytes between the simulator's memories,
completes transaction bytes on mbarriers (sync_ops) and counts what ncu counts. Per batch it keeps
the in-flight cp.async copies (``b.async_copies``); per launch the TMA counters
(``program.tma_counts``). Tensor maps are read from the kernel's parameters through
``param_ops.PARAM_WINDOW`` or from global memory.

Bytes a TMA or bulk copy delivers are tagged with their mbarrier phase (copy_races), so that a
thread reading them before it saw that phase complete is named; cp.async destinations are in
flight in ``b.async_copies`` until their wait.
"""
from __future__ import annotations

import re

import numpy as np

from ..errors import BarrierError, KernelError, UnsupportedInstruction
from . import async_copy, mbarrier, tma
from .access import address_reader, raise_fault
from .memory import Fault, check_alignment
from .operands import reader
from .param_ops import PARAM_WINDOW
from .copy_races import initialized, tag_tma, written
from .sync_ops import barriers_of, phase_completed


def _slots(b, mask):
    return np.arange(b.n) if mask is None else np.flatnonzero(mask)


def _unsupported(ins, why):
    def run(b, mask):
        raise UnsupportedInstruction(f"{why}: `{ins.text}`", line=ins.line or None)
    return run


def _flat(program, b, mask, ins, addr, width, is_load):
    """Flat offsets into the batch's shared memory for shared-space addresses (one per active thread)."""
    fault = check_alignment(addr, width)
    if fault:
        raise_fault(program, b, mask, ins, "shared", fault, is_load)
    flat = b.shared.flat_offsets(addr, b.shared_base[_slots(b, mask)], width)
    if isinstance(flat, Fault):
        raise_fault(program, b, mask, ins, "shared", flat, is_load)
    return flat


def _state(b, name, make):
    value = getattr(b, name, None)
    if value is None:
        value = make()
        setattr(b, name, value)
    return value


def _copies(b):
    return _state(b, "async_copies", lambda: async_copy.AsyncCopies(b.shared.data.size, b.n))


def _count_tma(program, counts):
    total = program.__dict__.setdefault("tma_counts", {})
    for k, v in counts.items():
        total[k] = total.get(k, 0) + v


def _read_global(program, b, mask, ins, addr, width):
    """(n, width) bytes at global addresses (bounds-checked)."""
    located = program.globals.locate(addr, width)
    if isinstance(located, Fault):
        raise_fault(program, b, mask, ins, "global", located, True)
    which, offsets = located
    out = np.empty((len(addr), width), np.uint8)
    for i in np.unique(which) if np.ndim(which) else [which]:
        sel = (which == i) if np.ndim(which) else slice(None)
        data = program.globals.buffers[int(i)].view(1)
        out[sel] = data[(offsets[sel].astype(np.int64)[:, None] + np.arange(width))]
    return out


# ----------------------------------------------------------------------------- cp.async
def build(ins, program):
    mods = ins.mods
    if "bulk" in mods:
        if "tensor" in mods:
            dst_space = mods[mods.index("tensor") + 2]          # cp.async.bulk.tensor.2d.<dst>.<src>...
            return _tensor_load(ins, program) if dst_space.startswith("shared") else _tensor_copy(ins, program)
        if "commit_group" in mods or "wait_group" in mods:
            return lambda b, mask: None      # bulk stores complete at once in the simulator
        return _bulk_load(ins, program)
    if "commit_group" in mods:
        return lambda b, mask: _copies(b).commit(_slots(b, mask))
    if "wait_group" in mods or "wait_all" in mods:
        keep = reader(ins.operands[0], "u32", program) if "wait_group" in mods else None

        def run_wait(b, mask):
            copies = _copies(b)
            if keep is None:
                copies.commit(_slots(b, mask))
            for pc, _, slots, dst, data in copies.wait(_slots(b, mask), 0 if keep is None else int(np.max(keep(b, mask)))):
                b.shared.data.reshape(-1)[dst[:, None] + np.arange(data.shape[1])] = data
                written(b, pc, slots, dst, data)
        return run_wait
    if "mbarrier" in mods:
        return _copies_arrive(ins, program)
    return _cp_async(ins, program)


def _copies_arrive(ins, program):
    """cp.async.mbarrier.arrive{.noinc}.shared.b64 [mbar]: an arrival once this thread's earlier
    cp.async copies are done. The simulator completes them here; without .noinc the arrival is on
    top of the expected count (the thread still arrives itself), with .noinc it is one of them."""
    bar_r = address_reader(ins.operands[0], program)
    noinc = "noinc" in ins.mods

    def run(b, mask):
        slots = _slots(b, mask)
        for pc, _, done_slots, dst, data in _copies(b).wait(slots, 0, committed_only=False):
            b.shared.data.reshape(-1)[dst[:, None] + np.arange(data.shape[1])] = data
            written(b, pc, done_slots, dst, data)
        if noinc:
            bars, addr = barriers_of(b), bar_r(b, mask)
            for blk, a in zip(b.block_of[slots].tolist(), np.asarray(addr).astype(np.int64).tolist()):
                key = (blk, a)
                before = bars.phase_of(key)
                try:
                    bars.arrive(key)
                except mbarrier.MBarrierError as exc:
                    raise BarrierError(str(exc), line=ins.line or None) from None
                phase_completed(b, key, before)
    return run


def _cp_async(ins, program):
    dst_r, src_r = address_reader(ins.operands[0], program), address_reader(ins.operands[1], program)
    size = int(ins.operands[2].value)
    form = async_copy.parse(ins.mods, ins.operands, program.kernel.registers)
    extra = None if form["extra"] is None else reader(ins.operands[3], "pred" if form["extra"] == "ignore" else "u32", program)

    def run(b, mask):
        slots = _slots(b, mask)
        dst, src = dst_r(b, mask), src_r(b, mask)
        if form["extra"] == "ignore":
            n = np.where(np.broadcast_to(extra(b, mask), slots.shape), 0, size)
        elif form["extra"] == "src_size":
            n = np.broadcast_to(np.asarray(extra(b, mask)).astype(np.int64), slots.shape)
            if (n > size).any():
                raise KernelError(f"cp.async src-size {int(n.max())} is larger than its copy size {size}", line=ins.line)
        else:
            n = np.full(slots.shape, size)
        flat = _flat(program, b, mask, ins, dst, size, False)
        data = np.zeros((len(slots), size), np.uint8)
        for k in np.unique(n[n > 0]):
            sel = n == k
            fault = check_alignment(src[sel], size)
            if fault:
                raise_fault(program, b, mask, ins, "global", fault, True)
            data[sel, :k] = _read_global(program, b, mask, ins, src[sel], int(k))
        _copies(b).issue(ins.index, ins.line, slots, flat, data)
        if program.count_metrics:
            s, d, r = (np.zeros(b.n, np.int64) for _ in range(3))
            s[slots], d[slots], r[slots] = src.astype(np.int64), dst.astype(np.int64), n > 0
            req, sec = async_copy.global_load_counts(s.reshape(-1, 32), d.reshape(-1, 32), r.reshape(-1, 32).astype(bool),
                                                     form["level"])
            c = program.counters
            c.global_requests[ins.index] += req
            c.sectors[ins.index] += sec
            c.global_bytes[ins.index] += int((n > 0).sum()) * size
    return run


# ----------------------------------------------------------------------------- bulk and tensor copies
_TENSOR = re.compile(r"^([%\w$.]+)(?:\+(\d+))?,\{(.*)\}$")


def _tensor_operand(op, program):
    """[tmap, {c0, c1, ...}] -> (address reader, [coordinate readers])."""
    m = _TENSOR.match(op.name or "")
    if not m:
        raise UnsupportedInstruction(f"cannot read the tensor operand `[{op.name}]`")
    from ..compile.ptx import Operand
    base = address_reader(Operand("addr", name=m[1], value=int(m[2] or 0)), program)
    coords = [reader(Operand("reg", name=c.strip()), "s32", program) for c in m[3].split(",")]
    return base, coords


def _tensor_map(program, b, mask, ins, address: int) -> tma.Desc:
    if PARAM_WINDOW <= address < PARAM_WINDOW + (1 << 32):
        off = address - PARAM_WINDOW
        raw = program.params[off:off + 128]
    else:
        raw = _read_global(program, b, mask, ins, np.array([address], np.uint64), 128)[0].tobytes()
    d = tma.decode(raw)
    if d is None:
        raise KernelError("the tensor map this copy reads is not one the simulator made (pass a course_lib.TensorMap "
                          "as the kernel's CUtensorMap argument)", line=ins.line)
    return d


def _box(program, b, mask, ins, d, coords, shared_addr):
    """(global addresses of the box's elements, inside mask, flat shared offsets), storage order."""
    off, inside, shared = tma.box_layout(d, coords, shared_addr)
    flat = b.shared.flat_offsets(shared.astype(np.uint64), np.full(len(shared), b.shared_base[_slots(b, mask)[0]]),
                                 d.itemsize)
    if isinstance(flat, Fault):
        raise KernelError(f"the TMA box does not fit in shared memory: {flat.detail}", line=ins.line)
    return np.uint64(d.address) + off.astype(np.uint64), inside, flat


def _tensor_load(ins, program):
    dst_r = address_reader(ins.operands[0], program)
    base, coords = _tensor_operand(ins.operands[1], program)
    bar_r = address_reader(ins.operands[2], program)

    def run(b, mask):
        slots = _slots(b, mask)
        dsts, maps, bars = dst_r(b, mask), base(b, mask), bar_r(b, mask)
        cs = [np.broadcast_to(np.asarray(c(b, mask)).astype(np.int64), slots.shape) for c in coords]
        for i, slot in enumerate(slots):                # one box per thread that asks (usually one thread)
            one = np.zeros(b.n, np.bool_)
            one[slot] = True
            d = _tensor_map(program, b, one, ins, int(maps[i]))
            why = tma.check_destination(int(dsts[i]), d.swizzle)
            if why and "aligned" in why:
                raise KernelError(why, line=ins.line)
            gaddr, inside, flat = _box(program, b, one, ins, d, [int(c[i]) for c in cs], int(dsts[i]))
            data = np.tile(np.frombuffer(tma.fill_value(d), np.uint8), (len(flat), 1))
            if inside.any():
                data[inside] = _read_global(program, b, one, ins, gaddr[inside], d.itemsize)
            b.shared.data.reshape(-1)[flat[:, None] + np.arange(d.itemsize)] = data
            initialized(b, flat, d.itemsize)
            key = (int(b.block_of[slot]), int(bars[i]))
            tag_tma(b, flat, d.itemsize, key, ins.index)
            _complete(ins, b, key, d.box_bytes)
            _count_tma(program, tma.load_counts(d.box_bytes))
    return run


def _tensor_copy(ins, program):
    """cp.async.bulk.tensor.Nd.global.shared::cta: a box from shared memory out to the tensor."""
    base, coords = _tensor_operand(ins.operands[0], program)
    src_r = address_reader(ins.operands[1], program)

    def run(b, mask):
        slots = _slots(b, mask)
        srcs, maps = src_r(b, mask), base(b, mask)
        cs = [np.broadcast_to(np.asarray(c(b, mask)).astype(np.int64), slots.shape) for c in coords]
        for i, slot in enumerate(slots):
            one = np.zeros(b.n, np.bool_)
            one[slot] = True
            d = _tensor_map(program, b, one, ins, int(maps[i]))
            at = [int(c[i]) for c in cs]
            if min(at) < 0:
                raise KernelError(
                    f"a TMA store of a box at coordinates {tuple(at)}: an H100 stops the kernel with an illegal "
                    "instruction when a store's box starts at a negative coordinate (measured 2026-11-26; a load "
                    "may start there and fills with zeros, a store may only run past the far edges, clipped)",
                    hint="store the boxes of a tile grid from (0, 0): column blockIdx.x * BOX_C, row blockIdx.y * BOX_R",
                    line=ins.line or None)
            gaddr, inside, flat = _box(program, b, one, ins, d, at, int(srcs[i]))
            if inside.any():
                located = program.globals.locate(gaddr[inside], d.itemsize)
                if isinstance(located, Fault):
                    raise_fault(program, b, one, ins, "global", located, False)
                which, offsets = located
                raw = b.shared.data.reshape(-1)[flat[inside][:, None] + np.arange(d.itemsize)]
                for w in np.unique(which) if np.ndim(which) else [which]:
                    sel = (which == w) if np.ndim(which) else slice(None)
                    view = program.globals.buffers[int(w)].view(1)
                    view[offsets[sel].astype(np.int64)[:, None] + np.arange(d.itemsize)] = raw[sel]
            _count_tma(program, tma.store_counts(gaddr - np.uint64(d.address), inside, d.itemsize, d.address))
    return run


def _bulk_load(ins, program):
    """cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]."""
    dst_r, src_r = address_reader(ins.operands[0], program), address_reader(ins.operands[1], program)
    size_r = reader(ins.operands[2], "u32", program)
    bar_r = address_reader(ins.operands[3], program)

    def run(b, mask):
        slots = _slots(b, mask)
        dsts, srcs, bars = dst_r(b, mask), src_r(b, mask), bar_r(b, mask)
        sizes = np.broadcast_to(np.asarray(size_r(b, mask)).astype(np.int64), slots.shape)
        for i, slot in enumerate(slots):
            one = np.zeros(b.n, np.bool_)
            one[slot] = True
            n = int(sizes[i])
            if n % 16 or int(dsts[i]) % 16 or int(srcs[i]) % 16:
                raise KernelError("a bulk copy moves a multiple of 16 bytes between 16-byte aligned addresses",
                                  line=ins.line)
            data = _read_global(program, b, one, ins, np.array([srcs[i]], np.uint64), n)[0]
            flat = b.shared.flat_offsets(np.array([dsts[i]], np.uint64), b.shared_base[[slot]], n)
            if isinstance(flat, Fault):
                raise_fault(program, b, one, ins, "shared", flat, False)
            b.shared.data.reshape(-1)[int(flat[0]):int(flat[0]) + n] = data
            initialized(b, int(flat[0]) + np.arange(0, n, 16), 16)
            tag_tma(b, int(flat[0]) + np.arange(0, n, 16), 16, (int(b.block_of[slot]), int(bars[i])), ins.index)
            _complete(ins, b, (int(b.block_of[slot]), int(bars[i])), n)
            _count_tma(program, tma.load_counts(n))
    return run


def _complete(ins, b, key, nbytes):
    bars = barriers_of(b)
    try:
        before = bars.phase_of(key)
        bars.complete_tx(key, nbytes)
    except mbarrier.MBarrierError as exc:
        raise BarrierError(str(exc), line=ins.line or None) from None
    phase_completed(b, key, before)
