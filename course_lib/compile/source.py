"""Reading CUDA C++ source: the one place that looks at kernel text with regular expressions.

    src = source.read(text)                  # once per module: comments stripped, __global__s found
    src.names                                # ('tile', 'copy'): the __global__ functions, in order
    src.is_template("tile")                  # True for template <...> __global__ void tile(...)
    src.signature("tile<float, 32>")         # (Param('float* out'), Param('const float* in'), ...)
    src.nvrtc                                # #include <cstdio> & co. commented out, line for line
    source.template_arg(np.float32)          # 'float': a C++ template argument from Python
    source.mangled_base("_Z4tilePfPKfii")    # 'tile': a PTX entry's name, not the source's

Why a reader at all: errors speak the student's language (``const float* in``, not "parameter 1"),
``%%cuda`` binds the cell's kernels by name, and a template kernel nobody instantiated is offered
as something to index. A :class:`Source` is read once (``RawModule`` holds it) and answers every
later question from what it found, so no caller re-reads the text. It reads declarations only;
what a kernel does is the compiler's business (``nvrtc.py``) and the simulator's (PTX). Comments
are stripped before any match; a kernel a macro writes is not seen here (its PTX entry still is).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import KernelError

# C types of kernel parameters -> numpy, for the launch check
C_TYPES = {
    "float": np.float32, "double": np.float64, "int": np.int32, "unsigned": np.uint32,
    "unsigned int": np.uint32, "uint32_t": np.uint32, "int32_t": np.int32, "long long": np.int64,
    "long long int": np.int64, "int64_t": np.int64, "unsigned long long": np.uint64, "uint64_t": np.uint64,
    "size_t": np.uint64, "long": np.int64, "unsigned long": np.uint64, "short": np.int16,
    "unsigned short": np.uint16, "uint16_t": np.uint16, "int16_t": np.int16, "char": np.int8,
    "signed char": np.int8, "int8_t": np.int8, "unsigned char": np.uint8, "uint8_t": np.uint8,
    "bool": np.bool_, "__half": np.float16, "half": np.float16, "__nv_bfloat16": np.uint16,
}
VECTOR_TYPES = {f"{b}{n}": (C_TYPES[c], n) for b, c in
                (("float", "float"), ("double", "double"), ("int", "int"), ("uint", "unsigned int"),
                 ("short", "short"), ("ushort", "unsigned short"), ("char", "signed char"),
                 ("uchar", "unsigned char"), ("longlong", "long long"), ("ulonglong", "unsigned long long"))
                for n in (1, 2, 3, 4)}
# numpy -> the C type a course kernel is instantiated with; 2- and 1-byte elements are moved as
# their bits (a transpose moves bits), so float16 travels as unsigned short
C_NAME = {np.dtype(np.float32): "float", np.dtype(np.float64): "double",
          np.dtype(np.int32): "int", np.dtype(np.uint32): "unsigned int",
          np.dtype(np.int64): "long long", np.dtype(np.uint64): "unsigned long long",
          np.dtype(np.float16): "unsigned short", np.dtype(np.uint16): "unsigned short",
          np.dtype(np.int16): "short", np.dtype(np.uint8): "unsigned char", np.dtype(np.int8): "signed char"}

# Host headers nvcc users include whose device-side contents NVRTC declares itself (printf,
# assert, the math functions, threadIdx & co.); NVRTC has no host headers, so it cannot open them.
BUILT_IN_HEADERS = ("stdio.h", "cstdio", "assert.h", "cassert", "math.h", "cmath", "cuda_runtime.h",
                    "device_launch_parameters.h")
_BUILT_IN_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"](' + "|".join(map(re.escape, BUILT_IN_HEADERS))
                               + r')[>"][^\n]*', re.M)
_KERNEL = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+"
                     r"(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(")
_HEAD = re.compile(r"\s*(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?"
                   r"([A-Za-z_]\w*)\s*\(([^)]*)\)")
_TEMPLATE = re.compile(r"template\s*<([^{;]*)>\s*(?:extern\s+\"C\"\s+)?(?:static\s+)?$")
_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|struct|__grid_constant__)\b")


@dataclass(frozen=True)
class Param:
    ctype: str          # as written, templates substituted: 'const float*'
    name: str
    pointer: bool
    const: bool
    base: str           # 'float', 'float4', 'T' (unresolved)

    @property
    def dtype(self):
        if self.base in C_TYPES:
            return np.dtype(C_TYPES[self.base])
        if self.base in VECTOR_TYPES:
            return np.dtype(VECTOR_TYPES[self.base][0])
        return None

    def __str__(self):
        return f"{self.ctype} {self.name}"


def strip_comments(src: str) -> str:
    """The source without // and /* */ comments."""
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", src, flags=re.S)


@dataclass(frozen=True)
class Kernel:
    """One ``__global__`` function as declared: the text of its template parameters (None: not a
    template) and of its parameter list, read from the comment-stripped source."""
    name: str
    template: str | None
    params: str

    @property
    def is_template(self) -> bool:
        return self.template is not None

    def signature(self, targs: Sequence[str] = ()) -> tuple[Param, ...] | None:
        """The parameters, template parameters replaced by `targs` (C++ spellings); None when the
        list cannot be read."""
        subst = {}
        if self.template and targs:
            for tp, arg in zip(split_args(self.template), targs):
                words = re.sub(r"=.*", "", tp).split()
                if words:
                    subst[words[-1]] = arg.strip()
        params = []
        for raw in split_args(self.params):
            raw = re.sub(r"=.*", "", raw).strip()
            if not raw or raw == "void":
                continue
            mm = re.match(r"(.*?)([A-Za-z_]\w*)\s*(\[\s*\])?$", raw, re.S)
            if not mm:
                return None
            ctype, pname = mm[1].strip(), mm[2]
            pointer = "*" in ctype or bool(mm[3])
            for k, v in subst.items():
                ctype = re.sub(rf"\b{re.escape(k)}\b", v, ctype)
            const = bool(re.search(r"\bconst\b", ctype.split("*")[0]))
            base = " ".join(_QUALIFIERS.sub(" ", ctype.replace("*", " ").replace("&", " ")).split())
            base = base.replace("std::", "")
            params.append(Param(" ".join(ctype.split()), pname, pointer, const, base))
        return tuple(params)


@dataclass(frozen=True, eq=False)
class Source:
    """One kernel source, read once by :func:`read`: every answer below comes from that reading.

    ``text`` is as written (line numbers in messages count in it), ``code`` the same without
    comments, ``nvrtc`` what NVRTC compiles, ``names`` the ``__global__`` functions in order (an
    overload appears once per declaration), ``kernels`` the first readable declaration of each name.
    (Plain tuples and a private dict: a Source pickles and copies like the module that holds it.)"""
    text: str
    code: str
    nvrtc: str
    names: tuple[str, ...]
    kernels: tuple[Kernel, ...]
    _by_name: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "_by_name", {k.name: k for k in self.kernels})

    @property
    def templates(self) -> tuple[str, ...]:
        """The template kernels' names, in order."""
        return tuple(dict.fromkeys(n for n in self.names if self.is_template(n)))

    def kernel(self, name: str) -> Kernel | None:
        """The declaration of `name`: a plain name or a template expression (``tile<float, 32>``)."""
        return self._by_name.get(name.partition("<")[0].strip())

    def is_template(self, name: str) -> bool:
        found = self.kernel(name)
        return bool(found and found.is_template)

    def signature(self, name: str) -> tuple[Param, ...] | None:
        """The parameters of kernel `name` (a plain name or a template expression), or None."""
        found = self.kernel(name)
        if found is None:
            return None
        _, _, targs = name.partition("<")
        return found.signature(split_args(targs.rsplit(">", 1)[0]) if targs else ())


def read(text: str) -> Source:
    """Read `text` once: strip its comments, find each ``__global__`` (the 2000 characters before
    one say whether it is a template), prepare what NVRTC gets."""
    code = strip_comments(text)
    names, kernels = [], {}
    for m in re.finditer(r"__global__", code):
        named = _KERNEL.match(code, m.start())
        if named:
            names.append(named[1])
        head = _HEAD.match(code, m.end())
        if head and head[1] not in kernels:
            t = _TEMPLATE.search(code[max(0, m.start() - 2000):m.start()])
            kernels[head[1]] = Kernel(head[1], t[1] if t else None, head[2])
    return Source(text, code, for_nvrtc(text), tuple(names), tuple(kernels.values()))


def split_args(text: str) -> list[str]:
    """Split at top-level commas: 'a<b, c>, d' -> ['a<b, c>', 'd']."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "<(["
        depth -= ch in ">)]"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return [x.strip() for x in out]


def for_nvrtc(code: str) -> str:
    """The source as NVRTC gets it: includes of BUILT_IN_HEADERS commented out, line for line."""
    return _BUILT_IN_INCLUDE.sub(lambda m: f"// {m[0].strip()}: built into NVRTC", code)


def mangled_base(entry: str) -> str | None:
    """'_Z4tilePfPKfii' -> 'tile'; None for a name that is not Itanium-mangled."""
    m = re.match(r"_Z(\d+)(\w+)", entry)
    if m and len(m[2]) >= int(m[1]):
        return m[2][:int(m[1])]
    return None


def template_arg(a) -> str:
    """C++ spelling of one template argument: numpy types -> C types, bools -> true/false."""
    if isinstance(a, str):
        return a
    if isinstance(a, (bool, np.bool_)):
        return "true" if a else "false"
    if isinstance(a, (int, np.integer)):
        return str(int(a))
    try:
        return C_NAME[np.dtype(a)]
    except (TypeError, KeyError):
        raise KernelError(f"cannot use {a!r} as a template argument",
                          hint="use a numpy type (np.float32), a C type name ('float') or an integer") from None
