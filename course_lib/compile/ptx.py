"""Parse the PTX that NVRTC emits into plain data the simulator can execute.

What it handles: module-level variables (``.global``/``.const``/``.shared`` with initialisers),
``.entry`` kernels with their parameters and performance directives (``.maxntid``), register
declarations (``%r<25>``), ``.shared``/``.local`` declarations inside a kernel, labels, scoped
``{ }`` blocks (inline asm, call sequences), predicated instructions, vector operands and
``.loc`` line information, including ``inlined_at`` so a line inside an inlined header maps
back to the student's own line.

``ptx_text`` cuts the text into statements and reads operands; this module builds the module,
its kernels, declarations and instructions from them. What it does not do: check that the PTX
is valid (NVRTC produced it), or know what any instruction means — that is the simulator's.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .ptx_text import Operand, int_literal, parse_operands, plain_reg, statements  # noqa: F401  (Operand: ptx's data)

# Register and memory types: name -> (storage width in bytes, numpy view type).
TYPES = {
    "pred": (1, np.bool_),
    "b8": (1, np.uint8), "u8": (1, np.uint8), "s8": (1, np.int8),
    "b16": (2, np.uint16), "u16": (2, np.uint16), "s16": (2, np.int16),
    "f16": (2, np.float16), "bf16": (2, np.uint16),
    "b32": (4, np.uint32), "u32": (4, np.uint32), "s32": (4, np.int32), "f32": (4, np.float32),
    "f16x2": (4, np.uint32), "bf16x2": (4, np.uint32),
    "b64": (8, np.uint64), "u64": (8, np.uint64), "s64": (8, np.int64), "f64": (8, np.float64),
    "b128": (16, None),
}
SPACES = ("global", "shared", "local", "param", "const", "generic")


@dataclass
class Instruction:
    index: int
    opcode: str
    mods: tuple
    operands: tuple
    guard: tuple | None       # (predicate register, negated) or None
    line: int                 # source line in the student's file (0 = unknown)
    text: str
    ptx_line: int = 0         # line of the PTX text it starts on (nvdisasm -gp names SASS by it)

    @property
    def type(self) -> str | None:
        """The instruction's data type: the last type-like modifier (add.s32 -> 's32')."""
        for m in reversed(self.mods):
            if m in TYPES:
                return m
        return None


@dataclass
class Variable:
    name: str
    space: str
    size: int
    align: int
    init: bytes | None = None


@dataclass
class Kernel:
    name: str
    params: list               # [(name, type, size, align)]
    registers: dict            # name -> type
    variables: dict            # name -> Variable, kernel-scoped (.shared demoted, .local depot)
    instructions: list
    labels: dict               # label -> instruction index
    maxntid: tuple | None = None
    extern_shared_align: int = 0
    plain_regs: set = field(default_factory=set)   # inline-asm registers declared without '%'
    analyses: dict = field(default_factory=dict, compare=False, repr=False)   # the simulator's, computed once


@dataclass
class Module:
    kernels: dict = field(default_factory=dict)
    variables: dict = field(default_factory=dict)   # module-scope .global/.const/.shared
    files: dict = field(default_factory=dict)       # file id -> path
    version: str = ""
    target: str = ""


_REGDECL = re.compile(r"\.reg\s+\.(\w+)\s+(.+)")
_VARDECL = re.compile(r"(?:\.(?:visible|extern|weak)\s+)*\.(global|const|shared|local)\s+(.*)")
_ENTRY = re.compile(r"(?:\.(?:visible|weak|extern)\s+)*\.entry\s+([\w$]+)\s*\((.*?)\)(.*)", re.S)
_LOC = re.compile(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:.*?inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?")


def parse(text: str, main_file: str | None = None) -> Module:
    """Parse a whole PTX module. ``main_file`` names the student's source (for .loc mapping)."""
    mod = Module()
    mod.files = {int(m[1]): m[2] for m in re.finditer(r'\.file\s+(\d+)\s+"([^"]*)"', text)}
    main_ids = _main_file_ids(mod.files, main_file)
    kernel = None
    depth = 0
    line = 0
    for kind, payload, ptx_line in statements(text):
        if kind == "loc":
            line = _loc_line(payload, main_ids, line)
        elif kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
            if depth == 0 and kernel is not None:
                mod.kernels[kernel.name] = kernel
                kernel = None
        elif kind == "header":
            m = _ENTRY.match(payload)
            if m:
                kernel = Kernel(m[1], _params(m[2]), {}, {}, [], {}, maxntid=_maxntid(m[3]))
                line = 0
            # a non-entry .func body is kept out of the kernel (calls to it are unsupported)
        elif kind == "label":
            if kernel is not None:
                kernel.labels[payload] = len(kernel.instructions)
        elif kind == "stmt":
            if kernel is None:
                _module_statement(mod, payload)
            else:
                _kernel_statement(kernel, payload, line, ptx_line)
    return mod


def _main_file_ids(files, main_file):
    if not files:
        return set()
    if main_file:
        base = main_file.replace("\\", "/").rsplit("/", 1)[-1]
        ids = {i for i, p in files.items() if p.replace("\\", "/").rsplit("/", 1)[-1] == base}
        if ids:
            return ids
    return {min(files)}


def _loc_line(payload, main_ids, current):
    m = _LOC.match(payload)
    if not m:
        return current
    fid, ln = int(m[1]), int(m[2])
    if fid not in main_ids and m[4] is not None:
        fid, ln = int(m[4]), int(m[5])
    if fid in main_ids and ln > 0:
        return ln
    return current  # line 0 or a header line: keep attributing to the last known student line


def _params(text):
    out = []
    for p in filter(None, (x.strip() for x in text.split(","))):
        m = re.match(r"\.param\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+([\w$]+)(?:\[(\d+)\])?", p)
        if m:
            align, ty, name, count = m.groups()
            size = TYPES[ty][0] * (int(count) if count else 1)
            out.append((name, ty, size, int(align) if align else TYPES[ty][0]))
    return out


def _maxntid(text):
    m = re.search(r"\.(?:maxntid|reqntid)\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", text)
    return tuple(int(v or 1) for v in m.groups()) if m else None


def _variable(text, space) -> Variable | None:
    m = re.match(r"(?:\.align\s+(\d+)\s+)?\.(\w+)\s+([\w$]+)(?:\[(\d*)\])*\s*(?:=\s*(.*))?$", text.strip(), re.S)
    if not m:
        return None
    align, ty, name, count, init = m.groups()
    dims = [int(d) if d else 0 for d in re.findall(r"\[(\d*)\]", text.split("=")[0])]
    width = TYPES[ty][0]
    size = width * int(np.prod(dims)) if dims else width
    data = None
    if init is not None:
        values = [int_literal(v) for v in re.findall(r"[-\w.]+", init)]
        data = b"".join(int(v).to_bytes(width, "little", signed=v < 0) for v in values)
        data = data.ljust(size, b"\0")
    return Variable(name, space, size, int(align) if align else width, data)


def _module_statement(mod, stmt):
    if stmt.startswith(".version"):
        mod.version = stmt.split()[1]
    elif stmt.startswith(".target"):
        mod.target = stmt.split()[1]
    else:
        m = _VARDECL.match(stmt)
        if m and ".func" not in stmt:
            v = _variable(m[2], m[1])
            if v:
                mod.variables[v.name] = v


def _kernel_statement(kernel, stmt, line, ptx_line=0):
    if stmt.startswith("."):
        m = _REGDECL.match(stmt)
        if m:
            for item in m[2].split(","):
                item = item.strip()
                rng = re.match(r"(%?[\w$]+)<(\d+)>", item)
                names = [f"{rng[1]}{i}" for i in range(int(rng[2]))] if rng else [item]
                for n in names:
                    if not n.startswith("%"):   # inline asm may say `.reg .pred p;`: store it as %p
                        kernel.plain_regs.add(n)
                        n = "%" + n
                    kernel.registers[n] = m[1]
            return
        m = _VARDECL.match(stmt)
        if m:
            v = _variable(m[2], m[1])
            if v:
                if v.size == 0 and m[1] == "shared":  # extern __shared__ x[]
                    kernel.extern_shared_align = max(kernel.extern_shared_align, v.align)
                kernel.variables[v.name] = v
        return  # .pragma, .param inside call sequences: no effect on execution
    guard = None
    g = re.match(r"@(!?)(%?[A-Za-z_$][\w$]*)\s+", stmt)
    if g:
        name = g[2] if g[2].startswith("%") else "%" + g[2]
        guard = (name, g[1] == "!")
        stmt = stmt[g.end():]
    head, _, rest = stmt.partition(" ") if " " in stmt or "\t" in stmt else (stmt, "", "")
    head = stmt.split(None, 1)[0]
    rest = stmt[len(head):].strip()
    opcode, *mods = head.split(".")
    operands = parse_operands(rest)
    if kernel.plain_regs:
        operands = [plain_reg(o, kernel.plain_regs) for o in operands]
    kernel.instructions.append(Instruction(len(kernel.instructions), opcode, tuple(mods),
                                           tuple(operands), guard, line, stmt, ptx_line))


