"""Kernel parameters in memory: the address of a parameter, and TensorMap arguments.

    mov(original)(ins, program)      # `mov.b64 %rd, kernel_param_0`: the parameter's param-space address
    cvta(original)(ins, program)     # `cvta.param.u64 %rd, %rd`: ... and its generic address
    place_arguments(fn, args, memory) -> (param bytes, offsets, write-backs)

A `const __grid_constant__ CUtensorMap` parameter is passed by value and read in place: the kernel
takes its address and hands it to cp.async.bulk.tensor. The simulator gives parameters the generic
addresses PARAM_WINDOW + offset, where copy_ops reads the 128 bytes back. A TensorMap argument
(``sim.tma.TensorMap``) puts its array into the launch's global memory, once per array also when
a pointer argument is the same array, and becomes the 128 bytes ``TensorMap.encode`` makes for
that address. Loads through a parameter's generic address (a struct read field by field) are not
simulated yet.
"""
from __future__ import annotations

import numpy as np

from .operands import reader, writer
from .tma import TensorMap

PARAM_WINDOW = 0x0000_7D00_0000_0000


def _param_symbol(op, program):
    return op.kind == "symbol" and op.name in program.param_offsets


def mov(original):
    def build(ins, program):
        src = ins.operands[1] if len(ins.operands) > 1 else None
        if src is None or not _param_symbol(src, program):
            return original(ins, program)
        write = writer(ins.operands[0], "u64")
        value = np.uint64(program.param_offsets[src.name])        # its address in the param space
        return lambda b, mask: write(b, mask, value)
    return build


def cvta(original):
    def build(ins, program):
        if "param" not in ins.mods:
            return original(ins, program)
        t = ins.type
        read, write = reader(ins.operands[1], t, program), writer(ins.operands[0], t)
        window = np.uint64(PARAM_WINDOW)
        to = "to" in ins.mods

        def run(b, mask):
            v = np.asarray(read(b, mask)).astype(np.uint64)
            write(b, mask, (v - window) if to else (v + window))
        return run
    return build


def place_arguments(fn, args, memory):
    """Kernel parameter bytes for `args` (checked by Function.check_launch) with arrays and the
    arrays of TensorMaps placed in `memory`: (bytes, {param name: offset}, [(device array, host copy)])."""
    kernel = fn.kernel
    params, offsets, write_back, placed = bytearray(), {}, [], {}

    def place(arr, label):
        if id(arr) not in placed:
            if hasattr(arr, "__cuda_array_interface__") and not isinstance(arr, np.ndarray):
                host = arr.get()
                write_back.append((arr, host))
                arr = host
            placed[id(arr)] = memory.add(label[0], arr, label=label[1], writable=bool(arr.flags.writeable))
        return placed[id(arr)]

    for i, (arg, (pname, ptype, psize, palign)) in enumerate(zip(args, kernel.params)):
        start = -(-len(params) // palign) * palign
        params.extend(b"\0" * (start - len(params)))
        offsets[pname] = start
        p = fn.signature[i] if fn.signature and i < len(fn.signature) else None
        name = p.name if p else f"arg{i}"
        if isinstance(arg, TensorMap):
            a = arg.array
            shape = "x".join(map(str, a.shape))
            base = place(a, (name, f"the array of tensor map argument {i} '{name}' ({shape} {a.dtype})"))
            raw = arg.encode(base)
        elif isinstance(arg, np.ndarray) or hasattr(arg, "__cuda_array_interface__"):
            shape = "x".join(map(str, arg.shape))
            raw = place(arg, (name, f"argument {i}" + (f" '{p.name}'" if p else "") + f" ({shape} {arg.dtype})"))
            raw = int(raw).to_bytes(8, "little")
        else:
            raw = np.asarray(arg).tobytes()
        params.extend(raw[:psize].ljust(psize, b"\0"))
    return bytes(params), offsets, write_back
