"""Check a launch before it happens, the same way for the GPU and the simulator.

- ``check`` is the one check every launch passes before it runs, on the simulator or the GPU:
  it returns a :class:`Launch` the simulator, the guard and the GPU runner take as it is;
- ``check_config`` validates grid, block and shared memory against the device's limits;
- ``check_args`` validates count, kinds, dtypes and layout of the arguments and converts
  Python numbers to the exact C type the kernel expects.

The kernel's C++ parameter list is the Function's (``fn.signature``, from the module's
``compile.source.Source``), so errors say ``const float* in`` rather than "parameter 1". Nothing
here touches CuPy or NVRTC.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..compile.source import Param
from ..errors import ArgumentError, LaunchError
from ..sim.movement.tma import TensorMap

# What the simulator assumes when there is no GPU to ask: an H100's limits.
DEFAULT_LIMITS = dict(max_threads=1024, max_block=(1024, 1024, 64), max_grid=(2**31 - 1, 65535, 65535),
                      shared_default=48 * 1024, shared_optin=227 * 1024)


@dataclass(frozen=True)
class Launch:
    """A launch that passed the check: 3-D grid and block, arguments converted to the exact C types
    the kernel expects, bytes of dynamic shared memory. The simulator, the guard and the GPU runner
    all take this, so a launch is checked once."""
    grid: tuple
    block: tuple
    args: tuple
    shared_mem: int = 0

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


def check(fn, grid, block, args, shared_mem=0, *, limits=None) -> Launch:
    """The one launch check: configuration against the limits (an H100's unless a GPU's are given),
    then the arguments against the kernel's parameters. `fn` is a course_lib Function."""
    g, b = check_config(grid, block, shared_mem, static_shared=fn.static_shared_bytes,
                        maxntid=fn.kernel.maxntid, limits=limits, kernel=fn.name)
    checked = check_args(args, fn.kernel.params, fn.signature, fn.name)
    return Launch(g, b, tuple(checked), int(shared_mem))


# ----------------------------------------------------------------------------- configuration

def dim3(value, what) -> tuple:
    """(x, y, z) from an int or a tuple of 1-3 ints; anything else is an ArgumentError, never a guess
    (tuple("32") is ('3', '2'), int(31.9) is 31, True is 1: each would launch something else)."""
    items = list(value) if isinstance(value, (tuple, list)) or getattr(value, "ndim", 0) == 1 else [value]
    example = {"block": "block=(32, 8)", "tile": "tile=32 (square) or tile=(32, 32)"}.get(
        what, f"{what}=((cols + 31) // 32, (rows + 31) // 32)")
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
            raise LaunchError(f"block dimension {'xyz'[axis]} = {d} exceeds the maximum {mx}",
                              hint=f"a block is at most {lim['max_block'][0]} x {lim['max_block'][1]} x "
                                   f"{lim['max_block'][2]} threads (and {lim['max_threads']} in all): put more "
                                   "blocks in the grid instead")
    for axis, (d, mx) in enumerate(zip(g, lim["max_grid"])):
        if d > mx:
            raise LaunchError(f"grid dimension {'xyz'[axis]} = {d} exceeds the maximum {mx}",
                              hint="put the long dimension on x (up to 2**31-1 blocks), or loop inside the kernel")
    if maxntid is not None and threads > int(np.prod(maxntid)):
        raise LaunchError(f"{kernel} declares __launch_bounds__({int(np.prod(maxntid))}) but is launched with {threads} threads per block",
                          hint=f"launch at most {int(np.prod(maxntid))} threads per block, or raise the kernel's "
                               "__launch_bounds__ (the compiler sized its registers for that many)")
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


def check_args(args, ptx_params, signature: Sequence[Param] | None, kernel="kernel"):
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
        if (p is not None and p.base == "CUtensorMap") or isinstance(arg, TensorMap):
            out.append(_check_tensor_map(arg, p, psize, label))
        elif pointer:
            out.append(_check_pointer(arg, p, label))
        else:
            out.append(_check_scalar(arg, p, ptype, psize, label))
    return out


def _check_tensor_map(arg, p, psize, label):
    """A CUtensorMap parameter takes a course_lib.TensorMap (the driver or the simulator encodes it
    at launch), and a TensorMap goes nowhere else."""
    if not isinstance(arg, TensorMap):
        raise ArgumentError(f"{label} is a tensor map, so it needs a course_lib.TensorMap, not {type(arg).__name__}",
                            hint="e.g. course_lib.TensorMap(a, box=(32, 32), swizzle=128): the array the TMA reads "
                                 "or writes, the box (rows, columns) one copy moves, and the swizzle mode")
    if p is None and psize != 128 or p is not None and p.base != "CUtensorMap":
        raise ArgumentError(f"{label} got a TensorMap, but the parameter is not a CUtensorMap",
                            hint="declare it as `const __grid_constant__ CUtensorMap name` (#include <cuda.h>)")
    return arg


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
                            hint="convert it: a.astype(a.dtype.newbyteorder('='))")
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
    if want is not None and want.itemsize == arg.dtype.itemsize and _kinds_differ(want, arg.dtype):
        what = "an integer" if arg.dtype.kind in "iu" else "a floating-point"
        raise ArgumentError(f"{label}: got {what} ({arg.dtype}) array where the kernel reads {p.base}: every "
                            f"element's bits would be read as another number",
                            hint=f"a.astype(np.{want.name}) converts the values; a.view(np.{want.name}) only "
                                 f"relabels the bits (a kernel that moves bits, like a transpose, may take that)")
    return arg


def _kinds_differ(want, got) -> bool:
    """Float data where the kernel reads integers, or the reverse (same width, other meaning). Half
    floats in an unsigned short array are the course's way to move 16-bit values as bits (NVRTC
    needs a header for __half), so that pair is allowed."""
    if got == np.float16 and want == np.uint16:
        return False
    return (want.kind == "f") != (got.kind == "f") and want.kind in "fiu" and got.kind in "fiu"


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
