"""One maker per compilation: processes that miss the same cache entry at once wait for the first to make it.

    with cache_lock.making(key):          # another process making `key`: wait here
        hit = cache.get(key, Compiled)     # ... then it is on disk
        if hit is None:
            ... compile, cache.put(key, hit)

Processes that start cold on the same kernels together (a test run's workers, one user's notebooks) each
compiled every one of them. The lock is an flock on ``KEY.lock`` in the cache's folder, unlinked once the entry
is made (a process still waiting on the unlinked file gets it next, and finds the entry). Nothing waits where
the folder cannot be used, and no one waits longer than MAKING_WAIT_S for a maker that may hang: it then
compiles the entry itself. It does not store or read entries (``cache.py``) or compile (``nvrtc.py``).
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import time

from . import cache

MAKING_WAIT_S = 120        # at most this long for another process's compilation of the same entry


@contextlib.contextmanager
def making(k: str):
    """Held while this process makes entry `k`; the caller looks the entry up again inside."""
    folder = cache.private_dir()
    fd = None
    if folder is not None:
        try:
            fd = os.open(folder / f"{k}.lock", os.O_CREAT | os.O_RDWR, 0o600)
            _lock_within(fd, MAKING_WAIT_S)
        except OSError:            # no lock file, or its maker took too long (hung?): make it here too
            if fd is not None:
                os.close(fd)
            fd = None
    try:
        yield
    finally:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(folder / f"{k}.lock")
            os.close(fd)


def _lock_within(fd: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)
