"""Check a launch before it happens, the same way for the GPU and the simulator.

- ``kernel_signature`` reads a kernel's C++ parameter list from its source (substituting
  template arguments from a name expression such as ``tile<float, 32>``), so errors can say
  ``const float* in`` rather than "parameter 1";
- ``check_config`` validates grid, block and shared memory against the device's limits;
- ``check_args`` validates count, kinds, dtypes and layout of the arguments and converts
  Python numbers to the exact C type the kernel expects.

Nothing here touches CuPy or NVRTC.
"""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass

import numpy as np

from .errors import ArgumentError, LaunchError

# What the simulator assumes when there is no GPU to ask: an H100's limits.
DEFAULT_LIMITS = dict(max_threads=1024, max_block=(1024, 1024, 64), max_grid=(2**31 - 1, 65535, 65535),
                      shared_default=48 * 1024, shared_optin=227 * 1024)

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


@dataclass
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


_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|struct)\b")


def kernel_signature(source: str, name: str) -> list[Param] | None:
    """The parameters of kernel `name` (a plain name or a template expression), or None."""
    base, _, targs = name.partition("<")
    targs = _split_args(targs.rsplit(">", 1)[0]) if targs else []
    found = _find_kernel(_strip_comments(source), base)
    if found is None:
        return None
    tparams, param_text = found
    subst = {}
    if tparams and targs:
        for tp, arg in zip(_split_args(tparams), targs):
            words = re.sub(r"=.*", "", tp).split()
            if words:
                subst[words[-1]] = arg.strip()
    params = []
    for raw in _split_args(param_text):
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
    return params


_HEAD = re.compile(r"\s*(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?"
                   r"([A-Za-z_]\w*)\s*\(([^)]*)\)")
_TEMPLATE = re.compile(r"template\s*<([^{;]*)>\s*(?:extern\s+\"C\"\s+)?(?:static\s+)?$")


def _find_kernel(src, base):
    """(template parameter text or None, parameter list text) of `__global__ void base(...)`.
    Scans only at each `__global__`, so a large source costs little per kernel."""
    for m in re.finditer(r"__global__", src):
        head = _HEAD.match(src, m.end())
        if head and head[1] == base:
            t = _TEMPLATE.search(src[max(0, m.start() - 2000):m.start()])
            return (t[1] if t else None), head[2]
    return None


_stripped: dict = {}


def _strip_comments(src):
    key = hash(src)
    if key not in _stripped:
        if len(_stripped) > 64:
            _stripped.clear()
        _stripped[key] = re.sub(r"//[^\n]*|/\*.*?\*/", "", src, flags=re.S)
    return _stripped[key]


def _split_args(text):
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


# ----------------------------------------------------------------------------- configuration

def dim3(value, what) -> tuple:
    """(x, y, z) from an int or a tuple of 1-3 ints; anything else is an ArgumentError, never a guess
    (tuple("32") is ('3', '2'), int(31.9) is 31, True is 1: each would launch something else)."""
    items = list(value) if isinstance(value, (tuple, list)) or getattr(value, "ndim", 0) == 1 else [value]
    example = f"{what}=(32, 8)" if what == "block" else f"{what}=((cols + 31) // 32, (rows + 31) // 32)"
    if not 1 <= len(items) <= 3:
        raise ArgumentError(f"{what}={value!r}: give 1 to 3 dimensions (x, y, z)", hint=f"e.g. {example}")
    dims = []
    for axis, v in zip("xyz", items):
        if isinstance(v, (bool, np.bool_)) or not _is_integer(v):
            why = ("a float (/ divides to a float in Python)" if isinstance(v, (float, np.floating))
                   else "None" if v is None else
                   f"a {type(v).__name__}" + (", not a number" if isinstance(v, (str, bytes)) else ""))
            raise ArgumentError(f"{what}={value!r}: dimension {axis} is {why}; sizes must be ints",
                                hint=f"e.g. {example}: // is integer division, (n + 31) // 32 rounds up")
        dims.append(int(v))
    if any(d < 1 for d in dims):
        raise ArgumentError(f"{what}={value!r}: every dimension must be at least 1",
                            hint="compute the grid with ceiling division: (n + TILE - 1) // TILE; a shape with a "
                                 "zero-size side needs no launch at all")
    return tuple(dims) + (1,) * (3 - len(dims))


def _is_integer(v):
    """An int, a numpy integer, or a 0-d integer array (anything with __index__)."""
    try:
        operator.index(v)
        return True
    except TypeError:
        return False


def check_config(grid, block, shared_mem=0, *, static_shared=0, maxntid=None, limits=None, kernel="kernel"):
    lim = {**DEFAULT_LIMITS, **(limits or {})}
    g, b = dim3(grid, "grid"), dim3(block, "block")
    threads = b[0] * b[1] * b[2]
    if threads > lim["max_threads"]:
        raise LaunchError(f"block {b[:2] if b[2] == 1 else b} has {threads} threads; a block can have at most {lim['max_threads']}",
                          hint="use fewer threads per block and let each thread do more work (e.g. 32x8 threads for a 32x32 tile)")
    for axis, (d, mx) in enumerate(zip(b, lim["max_block"])):
        if d > mx:
            raise LaunchError(f"block dimension {'xyz'[axis]} = {d} exceeds the maximum {mx}")
    for axis, (d, mx) in enumerate(zip(g, lim["max_grid"])):
        if d > mx:
            raise LaunchError(f"grid dimension {'xyz'[axis]} = {d} exceeds the maximum {mx}",
                              hint="put the long dimension on x (up to 2**31-1 blocks), or loop inside the kernel")
    if maxntid is not None and threads > int(np.prod(maxntid)):
        raise LaunchError(f"{kernel} declares __launch_bounds__({int(np.prod(maxntid))}) but is launched with {threads} threads per block")
    if isinstance(shared_mem, (bool, np.bool_)) or not _is_integer(shared_mem) or shared_mem < 0:
        raise ArgumentError(f"shared_mem must be an int number of bytes >= 0, not {shared_mem!r}",
                            hint="the bytes of dynamic shared memory per block, e.g. shared_mem=32 * 33 * 4")
    shared_mem = int(shared_mem)
    if static_shared > lim["shared_default"]:
        # ptxas refuses such a kernel: only dynamic shared memory can go past 48 KiB (opt-in)
        raise LaunchError(f"{kernel} declares {static_shared} bytes ({static_shared / 1024:.0f} KiB) of __shared__ "
                          f"arrays; a block may have at most {lim['shared_default']} bytes "
                          f"({lim['shared_default'] // 1024} KiB) of static shared memory",
                          hint="use a smaller tile or a narrower type; or declare it extern __shared__ T t[]; and "
                               f"pass shared_mem=bytes (up to {lim['shared_optin'] // 1024} KiB on this GPU)")
    total = static_shared + int(shared_mem)
    if total > lim["shared_optin"]:
        raise LaunchError(f"the kernel needs {total} bytes of shared memory per block ({static_shared} static + "
                          f"{shared_mem} dynamic); this GPU allows at most {lim['shared_optin']}",
                          hint="use a smaller tile, or a narrower element type")
    return g, b


# ----------------------------------------------------------------------------- arguments

def is_array(x):
    return hasattr(x, "__cuda_array_interface__") or isinstance(x, np.ndarray)


def check_args(args, ptx_params, signature: list[Param] | None, kernel="kernel"):
    """Validate arguments; return them with Python numbers converted to numpy scalars."""
    if not isinstance(args, (tuple, list)):
        raise ArgumentError(f"args must be a tuple of kernel arguments, not {type(args).__name__}",
                            hint="like CuPy: kernel(grid, block, (out, inp, np.int32(n)))")
    sig_text = ", ".join(p.ctype + " " + p.name for p in signature) if signature else None
    if len(args) != len(ptx_params):
        raise ArgumentError(
            f"{kernel} takes {len(ptx_params)} argument(s)" + (f" ({sig_text})" if sig_text else "")
            + f" but {len(args)} were given", hint="pass them in the order of the kernel's parameter list")
    out = []
    for i, (arg, (pname, ptype, psize, _)) in enumerate(zip(args, ptx_params)):
        p = signature[i] if signature and i < len(signature) else None
        label = f"argument {i}" + (f" '{p.name}' ({p.ctype})" if p else "")
        pointer = p.pointer if p else (ptype in ("u64", "b64") and is_array(arg))
        if pointer:
            out.append(_check_pointer(arg, p, label))
        else:
            out.append(_check_scalar(arg, p, ptype, psize, label))
    return out


def _check_pointer(arg, p, label):
    if not is_array(arg):
        raise ArgumentError(f"{label} is a pointer, so it needs an array, not {type(arg).__name__}",
                            hint="pass a numpy or CuPy array")
    flags = getattr(arg, "flags", None)
    if flags is not None and not flags["C_CONTIGUOUS"]:
        raise ArgumentError(f"{label}: the array is not contiguous in memory (a transposed view or a slice?)",
                            hint="pass np.ascontiguousarray(a): a kernel sees only raw memory, not numpy's strides")
    if arg.dtype.hasobject:
        raise ArgumentError(f"{label}: a numpy array of Python objects ({arg.dtype}) holds pointers to Python "
                            "objects, not numbers a kernel can read", hint="build it with a numeric dtype, e.g. "
                            "np.array(values, dtype=np.float32)")
    if not arg.dtype.isnative:
        raise ArgumentError(f"{label}: the array is big-endian ({arg.dtype.str}); a GPU reads little-endian "
                            "numbers, so every element would be misread",
                            hint=f"convert it: a.astype(a.dtype.newbyteorder('='))")
    if p is not None and p.ctype.count("*") >= 2 and isinstance(arg, np.ndarray):
        raise ArgumentError(f"{label} is a pointer to pointers: an array of device addresses, which a host "
                            "(numpy) array cannot hold", hint="pass one flat array and index it as "
                            "a[row * cols + col]; the simulator cannot follow pointers stored in memory")
    if isinstance(arg, np.ndarray) and not arg.flags.writeable and p is not None and not p.const:
        # the kernel may write through a non-const pointer: the simulator writes into the array in
        # place and the GPU path copies it back, and both would fail on read-only memory
        raise ArgumentError(f"{label}: the array is read-only (a.flags.writeable is False), but the parameter "
                            f"is not const, so the kernel may write to it", hint="pass a writable copy, "
                            f"np.array(a); or, if the kernel only reads it, declare it const {p.ctype}")
    want = p.dtype if p else None
    if want is not None and p.base not in ("unsigned char", "uint8_t", "char", "void") and want.itemsize != arg.dtype.itemsize:
        raise ArgumentError(
            f"{label}: got a {arg.dtype} array, but the kernel reads {want.itemsize}-byte {p.base} values "
            f"and would misread every element", hint=f"convert with a.astype(np.{want.name}), or use the kernel for {arg.dtype}")
    if want is not None and want.itemsize == arg.dtype.itemsize and want.kind == "f" and arg.dtype.kind in "iu":
        raise ArgumentError(f"{label}: got an integer ({arg.dtype}) array where the kernel expects {p.base}",
                            hint=f"a.astype(np.{want.name}) converts the values; a.view(np.{want.name}) only relabels the bits")
    return arg


def _check_scalar(arg, p, ptype, psize, label):
    if is_array(arg) and getattr(arg, "ndim", 0) > 0:
        raise ArgumentError(f"{label} is a scalar parameter but got an array",
                            hint="pass a number, e.g. np.int32(n)")
    if isinstance(arg, np.ndarray):          # a 0-d array is a number in numpy's eyes
        arg = arg[()]
    want = p.dtype if p and p.dtype is not None else _ptx_dtype(ptype, psize)
    if want is None:  # a struct passed by value: pass the bytes through
        return arg
    if isinstance(arg, (complex, np.complexfloating)):
        raise ArgumentError(f"{label} is a real {want} parameter but got the complex number {arg!r}",
                            hint="pass arg.real (and arg.imag as another parameter if the kernel needs it)")
    if not isinstance(arg, (bool, int, float, np.number, np.bool_)):
        raise ArgumentError(f"{label} needs a number, not {type(arg).__name__}",
                            hint=f"e.g. np.{want.name}(n)")
    if want.kind in "iu":
        if isinstance(arg, (float, np.floating)) and not np.isfinite(arg):
            raise ArgumentError(f"{label} is an integer parameter but got {arg!r}, which no integer can hold",
                                hint="check how the value was computed (a division by zero? a NaN in the data?)")
        if isinstance(arg, (float, np.floating)) and float(arg) != int(arg):
            raise ArgumentError(f"{label} is an integer parameter but got {arg!r}",
                                hint="pass an int (// divides to an int in Python); if the value was meant for "
                                     "another parameter, check the order of the arguments")
        info = np.iinfo(want)
        if not info.min <= int(arg) <= info.max:
            raise ArgumentError(f"{label}: {arg} does not fit in {want} ({info.min}..{info.max})",
                                hint="the value overflows the parameter type; use a 64-bit parameter (long long / size_t)")
        return np.asarray(int(arg)).astype(want)[()]
    try:
        with np.errstate(over="ignore"):
            value = np.asarray(arg).astype(want)[()]
        too_big = want.kind == "f" and np.isinf(value) and np.isfinite(float(arg))
    except (OverflowError, TypeError, ValueError):
        value, too_big = None, True
    if too_big:
        shown = (f"a {len(str(abs(arg)))}-digit integer" if isinstance(arg, int) and abs(arg) >= 10**308
                 else f"{float(arg):.6g}")
        raise ArgumentError(f"{label}: {shown} is too large for {want} (its largest value is {np.finfo(want).max:g})",
                            hint="use a wider type for the parameter (double), or scale the value")
    return value


def _ptx_dtype(ptype, size):
    return {"u32": np.dtype(np.uint32), "s32": np.dtype(np.int32), "b32": np.dtype(np.uint32),
            "u64": np.dtype(np.uint64), "s64": np.dtype(np.int64), "b64": np.dtype(np.uint64),
            "f32": np.dtype(np.float32), "f64": np.dtype(np.float64), "u16": np.dtype(np.uint16),
            "s16": np.dtype(np.int16), "u8": np.dtype(np.uint8), "s8": np.dtype(np.int8)}.get(ptype)
