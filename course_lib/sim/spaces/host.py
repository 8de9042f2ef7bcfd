"""How much memory this machine can still give the process: what a big array is held to before numpy allocates it.

    free_bytes()        # the host's MemAvailable, and within a container (a class hub's 1 GiB) its cgroup's
                        # limit less what it uses (page cache it can drop not counted); None where unknown
    size_text(n)        # '37.3 GiB', '768 MiB', '12 KiB': a size as a message gives it
    room_for_copies([(label, device_array), ...])   # device (CuPy) arrays the simulator copies here, or refused

Linux only (``/proc/meminfo``, cgroup v2 and v1 at their usual mounts); elsewhere ``free_bytes`` is None and
the caller's own limit, or numpy's MemoryError turned into words, has to do. It reads, and limits only the
copies of device arrays (the simulator runs on host memory): the simulator's own limit is ``sim.plan``'s.
"""
from __future__ import annotations

from pathlib import Path

from ...errors import SimulationLimit

_CGROUP = Path("/sys/fs/cgroup")
_UNLIMITED = 1 << 60           # cgroup v1 writes "no limit" as a number near 2^63


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def _number(text: str | None) -> int | None:
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:             # cgroup v2's "max": no limit
        return None


def _stat(text: str | None, key: str) -> int:
    for line in (text or "").splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def _meminfo_available() -> int | None:
    for line in (_read(Path("/proc/meminfo")) or "").splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            return int(parts[1]) * 1024 if len(parts) > 1 and parts[1].isdigit() else None
    return None


def _cgroup_free() -> int | None:
    """The container's limit less its use, page cache it can drop not counted (cgroup v2, then v1)."""
    for limit_file, usage_file, stat_file, inactive in (
            ("memory.max", "memory.current", "memory.stat", "inactive_file"),
            ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes", "memory/memory.stat",
             "total_inactive_file")):
        limit = _number(_read(_CGROUP / limit_file))
        if limit is None or limit >= _UNLIMITED:
            continue
        used = _number(_read(_CGROUP / usage_file)) or 0
        used -= _stat(_read(_CGROUP / stat_file), inactive)
        return max(0, limit - max(0, used))
    return None


def free_bytes() -> int | None:
    """Bytes this process may still allocate, the smaller of the host's and its container's; None if unknown."""
    known = [n for n in (_meminfo_available(), _cgroup_free()) if n is not None]
    return min(known) if known else None


def size_text(nbytes: float) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift:
            value = nbytes / (1 << shift)
            return f"{value:,.1f} {unit}" if value < 100 else f"{value:,.0f} {unit}"
    return f"{int(nbytes)} bytes"


def room_for_copies(arrays) -> None:
    """Refuse, before copying, device arrays (label, array) whose host copies would not fit this machine."""
    need = sum(int(a.nbytes) for _, a in arrays)
    free = free_bytes()
    if not arrays or free is None or need <= free:
        return
    names = ", ".join(label for label, _ in arrays)
    err = SimulationLimit(f"Not started: the simulator runs in this machine's memory, so it would copy the device "
                          f"array(s) {names} here: {size_text(need)}, more than the {size_text(free)} it has free",
                          hint="simulate a smaller shape (a kernel's metrics per request are the same on 1024 x 1024 "
                               "as on 16384 x 16384), or a part of the launch (blocks=[...])")
    err.timed_out, err.reason = False, "memory"
    raise err
