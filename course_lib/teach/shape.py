"""The matrix (or buffers) a checked run moved, and a hint filled in with what that run was.

    on = Shape(1000, 1030, 4, tile=(32, 32), block=(32, 8), ctype="float")
    on.aligned("ld"), on.row_bytes("st"), on.nbytes("ld"), on.names("st")
    fill("pad each row ([{ty}][{tx} + {pad}])", on)      # 'pad each row ([32][32 + 1])'

A :class:`Shape` is what properties judge a run against: the course's ``in`` (rows x cols, a batch of
them) and ``out``, or a declared signature's buffers (``reads``, ``writes``: each a name, the bytes of a
row, rows and bytes), the exercise's tile and block where it has them, the element's C type and the
student's own ``__shared__`` arrays. :func:`fill` puts those into a hint's ``{tx}``, ``{ty}``, ``{bx}``,
``{by}``, ``{t}``, ``{pad}`` (one 4-byte word of padding, in elements), ``{src}``, ``{dst}`` (the buffers
loads and stores move), ``{array}`` and ``{padded}``, ``{fill}`` and ``{loop_bounds}`` (advice that names loops
only for a kernel that has or needs them: ``evidence.loop_words``); where the exercise declares no tile, the tile a hint
names is the student's array (or words), never the block's shape. Nothing here runs or judges.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .evidence import loop_words


@dataclass(frozen=True)
class Shape:
    """The matrix a run moved: rows x cols of `in` (batch of them), element size, copy or transpose."""
    rows: int
    cols: int
    itemsize: int
    batch: int = 1
    copy: bool = False
    tile: tuple | None = None      # (columns, rows) of in one block moves, where the exercise says
    block: tuple | None = None     # threads per block
    ctype: str = "float"           # the element's C type, for hints
    loops: bool | None = None      # whether the kernel has a loop (None: not known), for hints that name one
    reads: tuple = ()              # a declared signature's buffers read: (name, bytes of a row, rows, bytes)
    writes: tuple = ()             # ... and written (an inout buffer is both); () : the course's in and out
    shared: tuple = ()             # the student's __shared__ arrays: (name, (dimension texts)), for hints

    def __str__(self):
        return (f"{self.batch} x " if self.batch > 1 else "") + f"{self.rows}x{self.cols}"

    def _buffers(self, op: str) -> tuple:
        return self.reads if op == "ld" else self.writes

    def row_bytes(self, op: str) -> int:
        """Length in bytes of one row of the array the loads (`in`) or stores (`out`) walk (a declared
        signature's: of the first buffer whose rows do not start on sectors, else of the first)."""
        if self._buffers(op):
            bufs = self._buffers(op)
            return next((b[1] for b in bufs if b[2] > 1 and b[1] % 32), bufs[0][1])
        return (self.cols if op == "ld" or self.copy else self.rows) * self.itemsize

    def aligned(self, op: str) -> bool:
        """Every row of that array starts on a 32-byte sector boundary (or there is only one row)."""
        if self._buffers(op):
            return all(rows == 1 or row % 32 == 0 for _, row, rows, _ in self._buffers(op))
        one_row = (self.rows if op == "ld" or self.copy else self.cols) * self.batch == 1
        return one_row or self.row_bytes(op) % 32 == 0

    def nbytes(self, op: str) -> int:
        """Bytes of the buffers the loads (`ld`) or the stores (`st`) move, each element once."""
        if self._buffers(op):
            return sum(b[3] for b in self._buffers(op))
        return self.rows * self.cols * self.batch * self.itemsize

    def names(self, op: str) -> str:
        """The buffers the loads or stores move, as a hint names them ("in", "out"; "a"; "xs, ys and zs")."""
        names = [b[0] for b in self._buffers(op)] or ["in" if op == "ld" else "out"]
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def fill(hint: str, on) -> str:
    """`hint` with what the run `on` moved (see the module): the exercise's tile, or the student's array."""
    tile = getattr(on, "tile", None)
    tx, ty = tile or (32, 32)
    bx, by = (getattr(on, "block", None) or (tx, ty))[:2]
    size = getattr(on, "itemsize", 4) or 4
    pad = max(1, 4 // size)     # the padding that moves each row one 4-byte bank on: one word, in elements
    array, padded = _array_words(getattr(on, "shared", ()), tile, pad)
    names = getattr(on, "names", None)
    known = dict(tx=tx, ty=ty, bx=bx, by=by, t=getattr(on, "ctype", "float"), pad=pad, array=array,
                 padded=padded, src=names("ld") if names else "in", dst=names("st") if names else "out",
                 **loop_words(getattr(on, "loops", None), (tx, ty), (bx, by)))   # {fill}, {loop_bounds}
    if tile is None:       # no tile of the exercise's: say it with the student's array, or in words
        hint = hint.replace("tile[{ty}][{tx}]", "{array}")
        hint = hint.replace("[{ty}][{tx} + {pad}]", "{padded}")
    return re.sub(r"\{(\w+)\}", lambda m: str(known.get(m[1], m[0])), hint)


def _array_words(shared, tile, pad) -> tuple[str, str]:
    """(the shared array a hint names, the same padded by `pad` elements per row)."""
    two_d = [(n, d) for n, d in shared if len(d) == 2]
    if two_d:
        name, (rows, cols) = two_d[0]
        base = re.sub(r"\s*\+\s*\w+\s*$", "", cols)
        return f"{name}[{rows}][{cols}]", f"{name}[{rows}][{base} + {pad}]"
    if shared:
        name, dims = shared[0]
        return f"{name}{''.join(f'[{d}]' for d in dims)}", f"{name} (one word of padding every 32 words)"
    if tile:
        return f"tile[{tile[1]}][{tile[0]}]", f"[{tile[1]}][{tile[0]} + {pad}]"
    return "tile[rows][columns]", f"[rows][columns + {pad}]"
