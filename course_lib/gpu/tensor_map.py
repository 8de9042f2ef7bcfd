"""A TMA tensor map for a GPU: the driver's ``cuTensorMapEncodeTiled``, called through ctypes.

    raw = tensor_map.encode_tiled(dtype=np.float32, address=arr.data.ptr, dims=(cols, rows),
                                  strides=(cols * 4,), box=(32, 64), swizzle=128)
    # raw: the 128 bytes the kernel receives as `const __grid_constant__ CUtensorMap`
    tensor_map.as_kernel_argument(raw)   # a numpy record CuPy passes by value

Why ctypes on libcuda and not cuda-python: the driver library is what every CUDA machine has
(CuPy itself runs on it), and one function does not justify another dependency. The layout of
the 128 bytes belongs to the driver; only the Tensor Memory Accelerator reads them. Dimensions
are given innermost first (columns, then rows), ``strides`` in bytes for every dimension but
the first, as the driver takes them. Checking the arguments is the caller's business
(``sim/movement/tma.py`` checks them the same way for both backends, so a map the simulator accepts is
one the driver accepts); a status the driver still refuses becomes a LaunchError naming it.
This module does not launch anything.
"""
from __future__ import annotations

import ctypes
import functools
import sys

import numpy as np

from ..errors import LaunchError, NoGPUError

DATA_TYPES = {np.dtype(np.uint8): 0, np.dtype(np.int8): 0, np.dtype(np.uint16): 1, np.dtype(np.int16): 1,
              np.dtype(np.uint32): 2, np.dtype(np.int32): 3, np.dtype(np.uint64): 4, np.dtype(np.int64): 5,
              np.dtype(np.float16): 6, np.dtype(np.float32): 7, np.dtype(np.float64): 8}
SWIZZLES = {0: 0, 32: 1, 64: 2, 128: 3}
L2_PROMOTIONS = {0: 0, 64: 1, 128: 2, 256: 3}
INTERLEAVE_NONE = 0
MAP_DTYPE = np.dtype([("opaque", "<u8", (16,))], align=True)   # CUtensorMap: 16 x 64 bits


@functools.lru_cache(maxsize=1)
def _driver():
    name = "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"
    try:
        lib = ctypes.CDLL(name)
    except OSError as exc:
        raise NoGPUError(f"the CUDA driver ({name}) is not there: {exc}") from None
    fn = getattr(lib, "cuTensorMapEncodeTiled", None)
    if fn is None:
        raise NoGPUError("this CUDA driver predates tensor maps (cuTensorMapEncodeTiled needs CUDA 12)")
    u32, u64 = ctypes.c_uint32, ctypes.c_uint64
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, u32, ctypes.c_void_p, ctypes.POINTER(u64), ctypes.POINTER(u64),
                   ctypes.POINTER(u32), ctypes.POINTER(u32), ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    fn.restype = ctypes.c_int
    lib.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    return lib


def encode_tiled(*, dtype, address: int, dims, strides, box, element_strides=None, swizzle=0,
                 l2_promotion=0, nan_fill=False) -> bytes:
    """The driver's 128-byte tensor map for a tiled copy (see the module docstring)."""
    lib = _driver()
    rank = len(dims)
    u32, u64 = ctypes.c_uint32, ctypes.c_uint64
    out = (ctypes.c_uint8 * 128 * 2)()                  # room to align the result to 64 bytes
    start = (-ctypes.addressof(out)) % 64
    status = lib.cuTensorMapEncodeTiled(
        ctypes.addressof(out) + start, DATA_TYPES[np.dtype(dtype)], rank, ctypes.c_void_p(int(address)),
        (u64 * rank)(*dims), (u64 * max(rank - 1, 1))(*strides), (u32 * rank)(*box),
        (u32 * rank)(*(element_strides or (1,) * rank)), INTERLEAVE_NONE, SWIZZLES[swizzle],
        L2_PROMOTIONS[l2_promotion], 1 if nan_fill else 0)
    if status != 0:
        text = ctypes.c_char_p()
        lib.cuGetErrorString(status, ctypes.byref(text))
        raise LaunchError(f"the CUDA driver refused this tensor map: {(text.value or b'').decode()} (status {status})",
                          hint=f"dims {tuple(dims)}, byte strides {tuple(strides)}, box {tuple(box)}, swizzle {swizzle}")
    return bytes(out)[start:start + 128]


def as_kernel_argument(raw: bytes):
    """The 128 bytes as a numpy record: CuPy passes a structured scalar by value, as the kernel's
    ``const __grid_constant__ CUtensorMap`` parameter."""
    return np.frombuffer(raw, MAP_DTYPE)[0]
