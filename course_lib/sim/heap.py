"""Keep the C heap from returning memory to the system between one instruction and the next.

Each instruction of a batch makes numpy temporaries of a few hundred KB (an array over 65,536
thread slots), a few MB at once inside a load or store, and frees them at once. With glibc's
defaults the heap's top is handed back to the system as soon as more than about twice the
largest freed block is free there, and taken back, page by page, by the next instruction: on a
2048 x 2048 transpose that was 40,000 page faults per run and a third of its time. :func:`steady`
asks glibc (``mallopt``) to serve blocks under 4 MiB from the heap and to keep up to 16 MiB free
at its top. Those are the values glibc's own adaptive thresholds reach after a program frees one
8 MiB block, so they only make that state certain from the first launch on; what they cost is at
most 16 MiB of freed memory the process keeps for its next allocations.

It is a no-op where the C library has no ``mallopt`` (macOS, Windows) and is applied once per
process, by the first simulated launch.
"""
from __future__ import annotations

import ctypes
import sys

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 4 << 20
TRIM_THRESHOLD = 16 << 20
_applied = False


def steady():
    global _applied
    if _applied:
        return
    _applied = True
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
