"""Kernel parameters in memory: the address of a parameter, and TensorMap arguments.

    names_parameter(op, program)     # is a mov's source a kernel parameter's symbol?
    build_mov(ins, program)          # `mov.b64 %rd, kernel_param_0`: the parameter's param-space address
    build_cvta(ins, program)         # `cvta.param.u64 %rd, %rd`: ... and its generic address
    place_arguments(fn, args, memory) -> (param bytes, offsets, write-backs)

A `const __grid_constant__ CUtensorMap` parameter is passed by value and read in place: the kernel
takes its address and hands it to cp.async.bulk.tensor. The simulator gives parameters the generic
addresses PARAM_WINDOW + offset, where copy_ops reads the 128 bytes back. A TensorMap argument
(``movement.tma.TensorMap``) puts its array into the launch's global memory, once per array also when
a pointer argument is the same array, and becomes the 128 bytes ``TensorMap.encode`` makes for
that address. A CuPy argument is simulated on a host copy, refused before it is made when the copies would
not fit this machine's memory (``spaces.host``). Loads through a parameter's generic address (a struct read
field by field) are not simulated yet.
"""
from __future__ import annotations

import numpy as np

from ..movement.tma import TensorMap
from ..spaces import host
from .operands import reader, writer

PARAM_WINDOW = 0x0000_7D00_0000_0000


def names_parameter(op, program) -> bool:
    """Is operand `op` a kernel parameter's symbol (``mov.b64 %rd, kernel_param_0``)?"""
    return op is not None and op.kind == "symbol" and op.name in program.param_offsets


def build_mov(ins, program):
    """`mov.b64 %rd, kernel_param_0`: the parameter's address in the param space (its offset)."""
    write = writer(ins.operands[0], "u64")
    value = np.uint64(program.param_offsets[ins.operands[1].name])
    return lambda b, mask: write(b, mask, value)


def build_cvta(ins, program):
    """`cvta.param.u64 %rd, %rd` (and cvta.to.param): between param-space and generic addresses."""
    t = ins.type
    read, write = reader(ins.operands[1], t, program), writer(ins.operands[0], t)
    window = np.uint64(PARAM_WINDOW)
    to = "to" in ins.mods

    def run(b, mask):
        v = np.asarray(read(b, mask)).astype(np.uint64)
        write(b, mask, (v - window) if to else (v + window))
    return run


def place_arguments(fn, args, memory):
    """Kernel parameter bytes for `args` (checked by Function.check_launch) with arrays and the
    arrays of TensorMaps placed in `memory`: (bytes, {param name: offset}, [(device array, host copy)]).

    Each array argument gets a buffer of its own, named after its parameter (as before tensor maps).
    A TensorMap's array shares the buffer of the same array passed as a pointer, before or after it,
    as on a GPU, where both are one device allocation."""
    kernel = fn.kernel
    params, offsets, write_back, placed = bytearray(), {}, [], {}

    def place(arr, name, label, shared):
        key = id(arr)
        if shared and key in placed:
            return placed[key][0]
        if hasattr(arr, "__cuda_array_interface__") and not isinstance(arr, np.ndarray):
            host = arr.get()          # a CuPy array: simulate on a host copy, then copy back
            write_back.append((arr, host))
            arr = host
        address = memory.add(name, arr, label=label, writable=bool(arr.flags.writeable))
        if shared or key not in placed:
            placed[key] = (address, shared)
        return address

    maps = {id(a.array) for a in args if isinstance(a, TensorMap)}
    on_device = {}              # one host copy per device array, however many arguments pass it
    for i, a in enumerate(getattr(x, "array", x) for x in args):
        if hasattr(a, "__cuda_array_interface__") and not isinstance(a, np.ndarray):
            on_device.setdefault(id(a), (f"argument {i} ({'x'.join(map(str, a.shape))} {a.dtype})", a))
    host.room_for_copies(list(on_device.values()))
    for i, (arg, (pname, ptype, psize, palign)) in enumerate(zip(args, kernel.params)):
        start = -(-len(params) // palign) * palign
        params.extend(b"\0" * (start - len(params)))
        offsets[pname] = start
        p = fn.signature[i] if fn.signature and i < len(fn.signature) else None
        name = p.name if p else f"arg{i}"
        if isinstance(arg, TensorMap):
            a = arg.array
            label = f"the array of tensor map argument {i} '{name}' ({'x'.join(map(str, a.shape))} {a.dtype})"
            raw = arg.encode(place(a, name, label, True))
        elif isinstance(arg, np.ndarray) or hasattr(arg, "__cuda_array_interface__"):
            label = f"argument {i}" + (f" '{p.name}'" if p else "") + f" ({'x'.join(map(str, arg.shape))} {arg.dtype})"
            raw = int(place(arg, name, label, id(arg) in maps)).to_bytes(8, "little")
        else:
            raw = np.asarray(arg).tobytes()
        params.extend(raw[:psize].ljust(psize, b"\0"))
    return bytes(params), offsets, write_back
