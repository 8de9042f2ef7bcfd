"""Loads, stores and atomics: route each address to its space, check it, count it, record it.

For every executed ``ld``/``st`` this module
1. computes the active threads' addresses (register + offset, or symbol + offset);
2. resolves generic addresses to global, shared or local memory;
3. checks alignment and bounds, raising MemoryAccessError with buffer, offset, thread and line;
4. counts requests/sectors (global) or wavefronts/conflicts (shared) per warp (``metrics``), once
   per machine instruction where ptxas fused several PTX accesses into one (``fusion``);
5. feeds shared accesses to the race detector and records the traced block's addresses;
6. moves the data.
Atomics (``atom``/``red``) on global and shared memory are applied in thread order.
"""
from __future__ import annotations

import numpy as np

from ..compile.ptx import TYPES
from ..errors import MemoryAccessError, UnsupportedInstruction
from .instructions import reader, writer
from .memory import LOCAL_WINDOW, SHARED_START, SHARED_WINDOW, UINT, Fault, check_alignment, gather, scatter

SPACE_MODS = ("global", "shared", "local", "param", "const")


def build_memory(ins, program):
    space = next((m for m in ins.mods if m in SPACE_MODS), "generic")
    t = ins.type
    if t is None:
        return _fail(ins, "memory access without a type")
    vec = next((int(m[1:]) for m in ins.mods if m in ("v2", "v4", "v8")), 1)
    width = TYPES[t][0]
    if ins.opcode in ("atom", "red"):
        return _atomic(ins, program, space, t)
    is_load = ins.opcode in ("ld", "ldu")
    data_op = ins.operands[0] if is_load else ins.operands[1]
    addr_op = ins.operands[1] if is_load else ins.operands[0]
    if space == "param":
        return _param(ins, program, is_load, data_op, addr_op, t, vec)
    address = _address_reader(addr_op, program)
    items = data_op.items if data_op.kind == "vec" else (data_op,)
    if is_load:
        outs = [writer(x, t) for x in items]

        def run_ld(b, mask):
            addr = address(b, mask)
            vals = access(program, b, mask, ins, space, addr, width, vec, None)
            for i, w in enumerate(outs):
                w(b, mask, vals[:, i].view(TYPES[t][1]))
        return run_ld
    ins_vals = [reader(x, t, program) for x in items]

    def run_st(b, mask):
        addr = address(b, mask)
        n = addr.shape[0]
        vals = np.empty((n, vec), UINT[width])
        for i, r in enumerate(ins_vals):
            v = np.asarray(r(b, mask))
            vals[:, i] = v.view(UINT[width]) if v.dtype.itemsize == width else v.astype(UINT[width])
        access(program, b, mask, ins, space, addr, width, vec, vals)
    return run_st


def _fail(ins, why):
    def run(b, mask):
        raise UnsupportedInstruction(f"{why}: `{ins.text}`", line=ins.line or None)
    return run


def _address_reader(op, program):
    """(batch, mask) -> uint64 addresses of the active threads."""
    offset = np.uint64(op.value & 0xFFFFFFFFFFFFFFFF)
    if op.name is None:
        return lambda b, mask: np.full(b.n if mask is None else int(mask.sum()), offset, np.uint64)
    if op.name.startswith("%"):
        name = op.name

        def read(b, mask):
            v = b.reg(name)
            v = v if mask is None else v[mask]
            return v.astype(np.uint64) + offset
        return read
    base = np.uint64(program.symbol_address(op.name))
    return lambda b, mask: np.full(b.n if mask is None else int(mask.sum()), base + offset, np.uint64)


def _param(ins, program, is_load, data_op, addr_op, t, vec):
    name, off = addr_op.name, addr_op.value
    if is_load:
        items = data_op.items if data_op.kind == "vec" else (data_op,)
        outs = [writer(x, t) for x in items]
        w = TYPES[t][0]

        def run(b, mask):
            for i, out in enumerate(outs):
                raw = program.read_param(b, name, off + i * w, w, mask)
                out(b, mask, raw.view(TYPES[t][1]) if raw.dtype.itemsize == w else raw)
        return run
    val = reader(data_op, t, program)

    def run_st(b, mask):  # call sequences: st.param [param0+0], %rd
        v = np.asarray(val(b, mask))
        store = b.callparams.setdefault(name, {})
        full = store.setdefault(off, np.zeros(b.n, UINT[TYPES[t][0]]))
        if mask is None:
            full[...] = v.view(full.dtype) if v.dtype.itemsize == full.itemsize else v.astype(full.dtype)
        else:
            full[mask] = v.view(full.dtype) if v.dtype.itemsize == full.itemsize else v.astype(full.dtype)
    return run_st


def _slots(b, mask):
    return np.arange(b.n) if mask is None else np.flatnonzero(mask)


HINTS = {
    ("out of bounds", "global"): "check the bounds test (< not <=), that the grid is not larger than the data "
                                 "without one, and which of rows/cols each index is compared with",
    ("out of bounds", "shared"): "a __shared__ array holds exactly what you declared: check its size "
                                 "(halo cells, padding) against the largest index a thread of the block uses",
    ("out of bounds", "local"): "check the index into the kernel's local array",
    ("misaligned", None): "vector types (float4, int2, double2) need addresses that are multiples of their size; "
                          "check the pointer cast and that the row length is a multiple of the vector width",
    ("read-only", None): "the kernel writes to memory it may only read (a __constant__ variable?)",
}


def raise_fault(program, b, mask, ins, space, fault: Fault, is_load):
    slot = int(_slots(b, mask)[fault.position])
    what = "load from" if is_load else "store to"
    detail = fault.detail
    if fault.kind == "misaligned" and space in ("global", "const"):
        detail = f"{program.globals.where(fault.address)}: {detail}"
    hint = fault.hint or HINTS.get((fault.kind, space)) or HINTS.get((fault.kind, None))
    raise MemoryAccessError(
        f"{fault.kind.capitalize()} {what} {space} memory: {detail}",
        hint=hint, line=ins.line or None,
        source_line=program.source_line(ins.line), filename=program.filename,
        thread=program.thread_of(b, slot), block=program.block_of(b, slot))


def access(program, b, mask, ins, space, addr, width, vec, values):
    """Perform one warp-level memory instruction for all active threads of the batch."""
    is_load = values is None
    total = width * vec
    if space == "generic":
        return _generic(program, b, mask, ins, addr, width, vec, values)
    fault = check_alignment(addr, total)
    if fault:
        raise_fault(program, b, mask, ins, space, fault, is_load)
    if space in ("global", "const"):
        located = program.globals.locate(addr, total)
        if isinstance(located, Fault):
            raise_fault(program, b, mask, ins, space, located, is_load)
        which, offsets = located
        _count(program, b, mask, ins, "global", addr, total, is_load)
        if np.isscalar(which) or np.ndim(which) == 0:
            buf = program.globals.buffers[int(which)]
            if not is_load and not buf.writable:
                raise_fault(program, b, mask, ins, space, Fault("read-only", 0, int(addr[0]), f"{buf.label} is read-only"), False)
            view = buf.view(width)
            if is_load:
                return gather(view, offsets, width, vec)
            scatter(view, offsets, width, values)
            return None
        out = np.empty((addr.shape[0], vec), UINT[width]) if is_load else None
        for i in np.unique(which):
            sel = which == i
            view = program.globals.buffers[int(i)].view(width)
            if is_load:
                out[sel] = gather(view, offsets[sel], width, vec)
            else:
                scatter(view, offsets[sel], width, values[sel])
        return out
    if space == "shared":
        slots = _slots(b, mask)
        blocks = b.block_of[slots]
        flat = b.shared.flat_offsets(addr, blocks, total)
        if isinstance(flat, Fault):
            raise_fault(program, b, mask, ins, space, flat, is_load)
        _count(program, b, mask, ins, "shared", addr, total, is_load)
        view = b.shared.data.reshape(-1).view(UINT[width])
        flat_u = flat.astype(np.uint64)
        fresh = None
        if b.races is not None and ins.index >= 0:
            g = b.races.granule
            entries = b.races.entries(addr.astype(np.int64) - SHARED_START, blocks, total)
            gvals = None if is_load else values.view(np.uint8).reshape(len(addr), -1).view(UINT[g])
            fresh = b.races.access(ins.index, slots, entries, not is_load, gvals)
        if is_load:
            if fresh is not None:
                program.note_uninitialized(b, slots[fresh], ins, addr[fresh])
            return gather(view, flat_u, width, vec)
        scatter(view, flat_u, width, values)
        return None
    if space == "local":
        if b.local is None:
            raise_fault(program, b, mask, ins, space, Fault("out of bounds", 0, int(addr[0]), "this kernel has no local memory"), is_load)
        slots = _slots(b, mask)
        flat = b.local.flat_offsets(addr, slots, total)
        if isinstance(flat, Fault):
            raise_fault(program, b, mask, ins, space, flat, is_load)
        view = b.local.data.reshape(-1).view(UINT[width])
        if is_load:
            return gather(view, flat.astype(np.uint64), width, vec)
        scatter(view, flat.astype(np.uint64), width, values)
        return None
    raise UnsupportedInstruction(f"memory space .{space} is not simulated: `{ins.text}`", line=ins.line or None)


def _generic(program, b, mask, ins, addr, width, vec, values):
    """Split a generic access by window; each part keeps its own thread subset."""
    in_shared = (addr >= SHARED_WINDOW) & (addr < SHARED_WINDOW + (1 << 32))
    in_local = (addr >= LOCAL_WINDOW) & (addr < LOCAL_WINDOW + (1 << 32))
    parts = [("shared", in_shared, SHARED_WINDOW), ("local", in_local, LOCAL_WINDOW),
             ("global", ~(in_shared | in_local), 0)]
    out = np.empty((addr.shape[0], vec), UINT[width]) if values is None else None
    slots = _slots(b, mask)
    for space, sel, window in parts:
        if not sel.any():
            continue
        sub_mask = np.zeros(b.n, np.bool_)
        sub_mask[slots[sel]] = True
        res = access(program, b, sub_mask, ins, space, addr[sel] - np.uint64(window), width, vec,
                     None if values is None else values[sel])
        if out is not None:
            out[sel] = res
    return out


def _count(program, b, mask, ins, space, addr, width, is_load):
    """Per-warp metrics, and the traced block's addresses for the pictures.

    Where ptxas fused this access with its neighbours into one wider machine instruction
    (``fusion.Plan.widths``), the group is counted once, here at the access the SASS carries,
    at the SASS width and at the address rounded down to it; the other members count nothing.
    Where it narrowed the access, only the bytes the SASS reads count (``Plan.shifts``)."""
    if ins.index < 0 or not program.count_metrics:
        return
    plan = getattr(program, "fusion", None)
    fused = plan.widths.get(ins.index) if plan is not None else None
    if fused is not None and fused != width:
        if fused == 0:
            return
        shift = plan.shifts.get(ins.index)    # a narrowed access reads part of the PTX's bytes
        if shift:
            addr = addr + np.uint64(shift)
        addr = addr & ~np.uint64(fused - 1)   # the machine access is aligned to its width
        width = fused
    if mask is None:
        full = addr.view(np.int64)
        active = b.all_true
    else:
        full = np.zeros(b.n, np.int64)
        full[mask] = addr.view(np.int64)
        active = mask
    a2, act2 = full.reshape(-1, 32), active.reshape(-1, 32)
    if space == "global":
        program.counters.add_global(ins.index, a2, act2, width)
    else:
        program.counters.add_shared(ins.index, a2, act2, width, is_load)
    program.trace(b, ins, space, width, a2, act2, is_load)


# ----------------------------------------------------------------------------- atomics

_ATOM = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
         "or": np.bitwise_or, "xor": np.bitwise_xor}


def _atomic(ins, program, space, t):
    op = next((m for m in ins.mods if m in ("add", "min", "max", "and", "or", "xor", "exch", "cas", "inc", "dec")), None)
    if op is None or TYPES[t][1] is None:
        return _fail(ins, "this atomic operation is not simulated")
    has_dst = ins.opcode == "atom"
    ops = ins.operands[1:] if has_dst else ins.operands
    address = _address_reader(ops[0], program)
    srcs = [reader(o, t, program) for o in ops[1:]]
    out = writer(ins.operands[0], t) if has_dst else None
    width = TYPES[t][0]
    npt = TYPES[t][1]

    def run(b, mask):
        addr = address(b, mask)
        vals = [np.broadcast_to(np.asarray(s(b, mask)), addr.shape).astype(npt) for s in srcs]
        # Nsight Compute counts atomics apart from loads and stores (op_atom): keep them out
        old = access(program, b, mask, _Silent(ins), space, addr, width, 1, None)[:, 0].view(npt).copy()
        # apply in thread order: threads sharing an address see each other's updates. Shared
        # memory is per block: one address in two blocks of the batch is two different words.
        in_shared = np.full(addr.shape, space == "shared") | (
            (space == "generic") & (addr >= SHARED_WINDOW) & (addr < SHARED_WINDOW + (1 << 32)))
        group = np.where(in_shared, b.block_of[_slots(b, mask)], -1)
        order = np.lexsort((addr, group))
        sa, sg = addr[order], group[order]
        first = np.ones(len(sa), np.bool_)
        first[1:] = (sa[1:] != sa[:-1]) | (sg[1:] != sg[:-1])
        if op == "add" and t[0] in "us":   # integer add: a prefix sum per address, no loop
            v = vals[0][order]
            seg = np.cumsum(first) - 1
            csum = np.cumsum(v)
            base = (csum - v)[first][seg]               # running total before each segment
            before = (csum - v) - base                  # what earlier threads added
            result_old = np.empty_like(old)
            result_old[order] = (old[order] + before).astype(npt)
            last = np.append(first[1:], True)
            idx = order[last]
            finals = (old[idx] + (csum[last] - base[last])).astype(npt).view(UINT[width])[:, None]
            _write_back(program, b, mask, ins, space, addr, idx, finals)
            if out is not None:
                out(b, mask, result_old)
            return
        result_old = np.empty_like(old)
        new_final = {}
        cur = None
        for pos, i in enumerate(order):  # plain loop: atomics are rare in the course's kernels
            if first[pos]:
                cur = old[i]
            result_old[i] = cur
            v = [x[i] for x in vals]
            if op == "add" and t == "f32":   # flushes subnormal inputs and results (ISA; H100 too)
                cur = _flush(npt(_flush(cur) + _flush(v[0])))
            elif op in _ATOM:
                cur = _ATOM[op](cur, v[0]).astype(npt) if t[0] != "f" else npt(cur + v[0]) if op == "add" else _ATOM[op](cur, v[0])
            elif op == "exch":
                cur = v[0]
            elif op == "cas":
                cur = v[1] if cur == v[0] else cur
            elif op == "inc":
                cur = npt(0) if cur >= v[0] else npt(cur + 1)
            elif op == "dec":
                cur = v[0] if (cur == 0 or cur > v[0]) else npt(cur - 1)
            new_final[(int(sg[pos]), int(sa[pos]))] = (i, cur)
        idx = np.array([i for i, _ in new_final.values()], np.int64)
        finals = np.array([c for _, c in new_final.values()], npt).view(UINT[width])[:, None]
        _write_back(program, b, mask, ins, space, addr, idx, finals)
        if out is not None:
            out(b, mask, result_old)
    return run


def _flush(x):
    """An f32 subnormal -> zero of its sign."""
    return np.copysign(np.float32(0), x) if abs(x) < np.float32(1.1754944e-38) else x


def _write_back(program, b, mask, ins, space, addr, idx, finals):
    """Store each address's final value (one thread per address), uncounted."""
    sub = np.zeros(b.n, np.bool_)
    sub[_slots(b, mask)[idx]] = True
    order_idx = np.argsort(_slots(b, mask)[idx])
    access(program, b, sub, _Silent(ins), space, addr[idx][order_idx], finals.dtype.itemsize, 1, finals[order_idx])


class _Silent:
    """The write-back half of an atomic: same instruction for errors, not counted twice."""
    def __init__(self, ins):
        self.__dict__.update(ins.__dict__)
        self.index = -1
