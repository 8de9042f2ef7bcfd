"""Loads and stores: route each address to its space, check it, count it, record it.

For every executed ``ld``/``st`` this module (1) computes the active threads' addresses (register or
symbol + offset) and (2) resolves generic ones to global, shared or local memory; (3) checks alignment
and bounds (MemoryAccessError with buffer, offset, thread and line); (4) counts requests/sectors or
wavefronts/conflicts per warp (``metrics``), once per machine instruction where ptxas fused accesses
(``fusion``); (5) feeds shared accesses to the race detector (and ``copy_races``) and records the traced
block's addresses; (6) moves the data; with ``owners`` on, records which block touched which element of
an argument (``owners``); with ``scramble_shared``, xors a byte into every shared load (a checker's
second run: did out's data pass through shared memory?). Atomics are ``atomics``'s; they use :func:`access`.
"""
from __future__ import annotations

import numpy as np

from ...compile.ptx import TYPES
from ...errors import MemoryAccessError, UnsupportedInstruction
from ..checks.copy_races import check_shared as check_copies
from ..spaces.memory import LOCAL_WINDOW, SHARED_WINDOW, UINT, WINDOW_SIZE, Fault, check_alignment, gather, scatter
from .operands import reader, unsupported, writer

SPACE_MODS = ("global", "shared", "local", "param", "const")


def space_of(ins) -> str:
    return next((m for m in ins.mods if m in SPACE_MODS), "generic")


def vector_count(ins) -> int:
    return next((int(m[1:]) for m in ins.mods if m in ("v2", "v4", "v8")), 1)


def build_memory(ins, program):
    """The closure of an ``ld``, ``ldu`` or ``st``."""
    space, t = space_of(ins), ins.type
    if t is None:
        return unsupported(ins, "memory access without a type")
    vec, width = vector_count(ins), TYPES[t][0]
    is_load = ins.opcode in ("ld", "ldu")
    data_op, addr_op = ins.operands if is_load else ins.operands[::-1]
    if space == "param":
        return _param(ins, program, is_load, data_op, addr_op, t)
    address = address_reader(addr_op, program)
    items = data_op.items if data_op.kind == "vec" else (data_op,)
    if is_load:
        outs = [writer(x, t) for x in items]

        def run_ld(b, mask):
            vals = access(program, b, mask, ins, space, address(b, mask), width, vec, None)
            for i, w in enumerate(outs):
                w(b, mask, vals[:, i].view(TYPES[t][1]))
        return run_ld
    ins_vals = [reader(x, t, program) for x in items]

    def run_st(b, mask):
        addr = address(b, mask)
        vals = np.empty((addr.shape[0], vec), UINT[width])
        for i, r in enumerate(ins_vals):
            v = np.asarray(r(b, mask))
            vals[:, i] = v.view(UINT[width]) if v.dtype.itemsize == width else v.astype(UINT[width])
        access(program, b, mask, ins, space, addr, width, vec, vals)
    return run_st


def address_reader(op, program):
    """(batch, mask) -> uint64 addresses of the active threads (read-only: without an offset, a
    64-bit register's own storage)."""
    offset = np.uint64(op.value & 0xFFFFFFFFFFFFFFFF)
    if op.name is None or not op.name.startswith("%"):
        fixed = offset if op.name is None else np.uint64(program.symbol_address(op.name)) + offset
        return lambda b, mask: np.full(b.n if mask is None else int(mask.sum()), fixed, np.uint64)
    name = op.name

    def read(b, mask):
        v = b.reg(name)
        v = v if mask is None else v[mask]
        if v.dtype != np.uint64:
            v = v.astype(np.uint64)
        return v + offset if offset else v
    return read


def _param(ins, program, is_load, data_op, addr_op, t):
    name, off = addr_op.name, addr_op.value
    w = TYPES[t][0]
    if is_load:
        items = data_op.items if data_op.kind == "vec" else (data_op,)
        outs = [writer(x, t) for x in items]

        def run(b, mask):
            for i, out in enumerate(outs):
                raw = program.read_param(name, off + i * w, w)
                out(b, mask, raw.view(TYPES[t][1]) if raw.dtype.itemsize == w else raw)
        return run
    val = reader(data_op, t, program)

    def run_st(b, mask):  # call sequences: st.param [param0+0], %rd
        v = np.asarray(val(b, mask))
        full = b.callparams.setdefault(name, {}).setdefault(off, np.zeros(b.n, UINT[w]))
        v = v.view(full.dtype) if v.dtype.itemsize == full.itemsize else v.astype(full.dtype)
        if mask is None:
            full[...] = v
        else:
            full[mask] = v
    return run_st


def slots_of(b, mask):
    return b.slot if mask is None else np.flatnonzero(mask)


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


_ADDRESS_MATH = ("add", "sub", "mad", "mul", "shl")


def pointer_line(kernel, ins) -> int:
    """The source line of the arithmetic that made `ins`'s address (0: none, or a bare parameter):
    the line that reads the pointer, which for a load the compiler moved is not the load's own."""
    base = next((op.name for op in ins.operands if op.kind == "addr"), None)
    for prev in reversed(kernel.instructions[:ins.index]):
        if base and prev.operands and prev.operands[0].kind == "reg" and prev.operands[0].name == base:
            return prev.line if prev.opcode in _ADDRESS_MATH else 0
    return 0


def raise_fault(program, b, mask, ins, space, fault: Fault, is_load):
    slot = int(slots_of(b, mask)[fault.position])
    what = "load from" if is_load else "store to"
    detail = fault.detail
    if fault.kind == "misaligned" and space in ("global", "const"):
        detail = f"{program.globals.where(fault.address)}: {detail}"
    hint = fault.hint or HINTS.get((fault.kind, space)) or HINTS.get((fault.kind, None))
    line = ins.line
    if is_load and fault.kind == "misaligned" and (read := pointer_line(program.kernel, ins)) not in (0, ins.line):
        # NVRTC sank the load to where its value is used: the line that reads the pointer is the student's
        detail += (f" (the compiler moved the load itself to line {ins.line}, where its value is used: "
                   f"`{(program.source_line(ins.line) or '').strip()}`)")
        line = read
    raise MemoryAccessError(
        f"{fault.kind.capitalize()} {what} {space} memory: {detail}",
        hint=hint, line=line or None,
        source_line=program.source_line(line), filename=program.filename,
        thread=program.thread_of(b, slot), block=program.block_of(b, slot))


# ----------------------------------------------------------------------------- one instruction

def access(program, b, mask, ins, space, addr, width, vec, values):
    """Perform one warp-level memory instruction for all active threads of the batch: returns the
    loaded items (n, vec) for a load (`values` None), None for a store of `values` (n, vec)."""
    if space == "generic":
        return _generic(program, b, mask, ins, addr, width, vec, values)
    fault = check_alignment(addr, width * vec)
    if fault:
        raise_fault(program, b, mask, ins, space, fault, values is None)
    move = _SPACES.get(space)
    if move is None:
        raise UnsupportedInstruction(f"memory space .{space} is not simulated: `{ins.text}`", line=ins.line or None)
    return move(program, b, mask, ins, space, addr, width, vec, values)


def _global(program, b, mask, ins, space, addr, width, vec, values):
    is_load = values is None
    located = program.globals.locate(addr, width * vec)
    if isinstance(located, Fault):
        raise_fault(program, b, mask, ins, space, located, is_load)
    which, offsets = located
    count(program, b, mask, ins, "global", addr, width * vec, is_load)
    if program.owners is not None:
        program.owners.note(program, b, mask, which, offsets, width * vec, is_load)
    out = np.empty((addr.shape[0], vec), UINT[width]) if is_load and np.ndim(which) else None
    for i, sel in _by_buffer(which):
        buf = program.globals.buffers[i]
        if not is_load and not buf.writable:
            pos = 0 if sel is None else int(np.flatnonzero(sel)[0])
            raise_fault(program, b, mask, ins, space, Fault("read-only", pos, int(addr[pos]),
                                                            f"{buf.label} is read-only"), False)
        part = offsets if sel is None else offsets[sel]
        if is_load and out is None:
            return gather(buf.view(width), part, width, vec)
        if is_load:
            out[sel] = gather(buf.view(width), part, width, vec)
        else:
            scatter(buf.view(width), part, width, values if sel is None else values[sel])
    return out


def _by_buffer(which):
    """(buffer index, selection) pairs: one (i, None) when every address is in buffer i."""
    if np.ndim(which) == 0:
        return [(int(which), None)]
    return [(int(i), which == i) for i in np.unique(which)]


def _shared(program, b, mask, ins, space, addr, width, vec, values):
    is_load, total = values is None, width * vec
    slots = slots_of(b, mask)
    flat = b.shared.flat_offsets(addr, b.shared_base if mask is None else b.shared_base[slots], total)
    if isinstance(flat, Fault):
        raise_fault(program, b, mask, ins, space, flat, is_load)
    count(program, b, mask, ins, "shared", addr, total, is_load)
    if (b.async_copies is not None or b.tma_bar is not None) and ins.index >= 0:
        check_copies(program, b, mask, ins, flat, total, is_load)      # bytes a copy is still writing?
    races = b.races
    if races is not None and ins.index >= 0:
        granules = None if is_load else values.view(np.uint8).reshape(len(addr), -1).view(UINT[races.granule])
        fresh = races.access(ins.index, b.slot32 if mask is None else slots, races.entries(flat, total),
                             not is_load, granules)
        if fresh is not None:
            program.note_uninitialized(b, slots[fresh], ins, addr[fresh])
    view = b.shared.data.reshape(-1).view(UINT[width])
    if is_load:
        got = gather(view, flat, width, vec)
        if program.scramble_shared:      # a checker's second run: did out's data pass through here?
            got = got ^ UINT[width](int.from_bytes(bytes([program.scramble_shared]) * width, "little"))
        return got
    scatter(view, flat, width, values)
    return None


def _local(program, b, mask, ins, space, addr, width, vec, values):
    is_load = values is None
    if b.local is None:
        raise_fault(program, b, mask, ins, space,
                    Fault("out of bounds", 0, int(addr[0]), "this kernel has no local memory"), is_load)
    flat = b.local.flat_offsets(addr, slots_of(b, mask), width * vec)
    if isinstance(flat, Fault):
        raise_fault(program, b, mask, ins, space, flat, is_load)
    view = b.local.data.reshape(-1).view(UINT[width])
    if is_load:
        return gather(view, flat, width, vec)
    scatter(view, flat, width, values)
    return None


_SPACES = {"global": _global, "const": _global, "shared": _shared, "local": _local}


def _generic(program, b, mask, ins, addr, width, vec, values):
    """Split a generic access by window; each part keeps its own thread subset."""
    in_shared = (addr >= SHARED_WINDOW) & (addr < SHARED_WINDOW + WINDOW_SIZE)
    in_local = (addr >= LOCAL_WINDOW) & (addr < LOCAL_WINDOW + WINDOW_SIZE)
    parts = [("shared", in_shared, SHARED_WINDOW), ("local", in_local, LOCAL_WINDOW),
             ("global", ~(in_shared | in_local), 0)]
    out = np.empty((addr.shape[0], vec), UINT[width]) if values is None else None
    slots = slots_of(b, mask)
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


def count(program, b, mask, ins, space, addr, width, is_load):
    """Per-warp metrics, and the traced block's addresses for the pictures.

    Where ptxas fused this access with its neighbours into one wider machine instruction
    (``fusion.Plan.widths``), the group is counted once, here at the access the SASS carries,
    at the SASS width and at the address rounded down to it; the other members count nothing.
    Where it narrowed the access, only the bytes the SASS reads count (``Plan.shifts``)."""
    if ins.index < 0 or not program.count_metrics:
        return
    plan = program.fusion
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
        full, active = addr.view(np.int64), b.all_true
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
