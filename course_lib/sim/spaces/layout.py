"""Where a launch's variables live, and which blocks of its grid it runs.

- ``place_variables``: ``__shared__`` variables at their aligned offsets from ``SHARED_START``
  (``extern __shared__`` arrays last, sized by the launch's ``shared_mem``), the kernel's local
  depot at the start of each thread's frame, and module-level ``__device__``/``__constant__``
  variables as buffers of global memory with their initial values;
- ``chosen_blocks``: the linear indices of ``blocks=[(x, y, z), ...]``, checked against the grid;
- ``demangle_local``: the name a student wrote for a function-local ``__shared__`` array.

It computes addresses and checks arguments; it allocates no memory of a batch.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ...errors import ArgumentError, LaunchError
from .memory import SHARED_START


@dataclass
class Layout:
    symbols: dict = field(default_factory=dict)       # PTX name -> address in its space
    shared_vars: dict = field(default_factory=dict)   # student's name -> (offset, size) in shared space
    shared_bytes: int = 0                             # per block, from SHARED_START
    local_bytes: int = 0                              # per thread


def place_variables(module, kernel, dynamic_shared: int, globals_) -> Layout:
    out = Layout()
    offset = SHARED_START
    shared = [v for v in list(module.variables.values()) + list(kernel.variables.values()) if v.space == "shared"]
    for v in (v for v in shared if v.size > 0):
        offset = -(-offset // v.align) * v.align
        out.symbols[v.name] = offset
        out.shared_vars[demangle_local(v.name)] = (offset, v.size)
        offset += v.size
    for v in (v for v in shared if v.size == 0):  # extern __shared__: the dynamic part
        offset = -(-offset // max(v.align, 16)) * max(v.align, 16)
        out.symbols[v.name] = offset
        out.shared_vars[demangle_local(v.name)] = (offset, dynamic_shared)
    out.shared_bytes = offset + dynamic_shared - SHARED_START
    for v in kernel.variables.values():
        if v.space == "local":
            out.symbols[v.name] = out.local_bytes
            out.local_bytes += v.size
    for v in module.variables.values():
        if v.space in ("global", "const"):
            data = np.frombuffer(bytearray(v.init or bytes(v.size)), np.uint8)
            kind = "device" if v.space == "global" else "constant"
            out.symbols[v.name] = globals_.add(v.name, data, label=f"__{kind}__ variable '{v.name}'",
                                               writable=v.space == "global")
    return out


def chosen_blocks(blocks, grid) -> list[int]:
    """Sorted linear indices of the blocks named in ``blocks=``."""
    example = "blocks=[(0, 0), (gx - 1, gy - 1)]"
    if isinstance(blocks, (str, bytes)) or not hasattr(blocks, "__iter__"):
        raise ArgumentError(f"blocks={blocks!r}: give a list of block coordinates", hint=f"e.g. {example}")
    gx, gy, _ = grid
    ids = set()
    for blk in blocks:
        c = tuple(blk) if isinstance(blk, (tuple, list, np.ndarray)) else (blk,)
        if not 1 <= len(c) <= 3 or not all(_index(v) for v in c):
            raise ArgumentError(f"blocks=: {blk!r} is not a block's coordinates (1 to 3 ints)", hint=f"e.g. {example}")
        c = tuple(int(v) for v in c) + (0,) * (3 - len(c))
        if not all(0 <= v < g for v, g in zip(c, grid)):
            raise LaunchError(f"blocks=: block {blk!r} is outside the grid {grid}",
                              hint="block coordinates run from 0 to grid-1 on each axis")
        ids.add(c[0] + c[1] * gx + c[2] * gx * gy)
    if not ids:
        raise ArgumentError("blocks=[] names no block, so nothing would run", hint=f"e.g. {example}, or leave "
                            "blocks= out to run the whole grid")
    return sorted(ids)


def _index(v) -> bool:
    """An int or numpy integer (not a bool, not a float that int() would truncate)."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def demangle_local(name: str) -> str:
    """'_ZZ6tile_tILi32EEvPfE4tile' -> 'tile' (the name a student wrote for a __shared__ array)."""
    m = re.search(r"E(\d+)([A-Za-z_]\w*)$", name)
    if name.startswith("_ZZ") and m and len(m[2]) >= int(m[1]):
        return m[2][:int(m[1])]
    return name
