"""Control groups for the box around one submission (course_lib.lab.grader.box): a memory limit that counts files
in tmpfs (Linux charges a tmpfs page to the cgroup of the process that wrote it) and a limit on tasks.

    group = cgroups.open_group("course_lib_box_812_3", memory=512 * 2**20, tasks=64)   # None: none writable here
    group.mode                    # "cgroup2", "cgroup1" or "systemd"
    cmd = [*group.prefix(), *cmd]            # systemd-run's words, else none
    group.join()                  # in the child, before it execs bwrap (cgroup1, cgroup2)
    group.adopt(pid)              # systemd: find the scope systemd-run made; False until it is there
    group.passed()                # "memory" (the OOM killer ran in it), "processes" (a fork was refused), or None
    group.peak()                  # (bytes, tasks): the most it held so far
    group.kill(); group.remove()

The modes, in the order "auto" tries them:

- ``cgroup2``: a cgroup v2 folder the instructor delegated (``SandboxedExecute.cgroup``: made by a container's
  entrypoint, or a systemd unit's ``Delegate=yes``) whose cgroup.subtree_control holds memory and pids; a child
  folder per submission (memory.max, memory.swap.max 0, memory.oom.group, pids.max);
- ``cgroup1``: the v1 memory and pids hierarchies, writable (root on a v1 or hybrid host): a child of this
  process's own cgroup in each (memory.limit_in_bytes and memsw, pids.max);
- ``systemd``: ``systemd-run --scope`` (``--user`` for a user: a laptop's session) with MemoryMax,
  MemorySwapMax=0 and TasksMax, where a trial scope runs.

A mode asked for by name that this machine cannot give raises Unavailable, saying why. This module neither
starts nor watches the sandbox (box does).
"""
from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

MODES = ("cgroup2", "cgroup1", "systemd")
PREFIX = "course_lib_box_"          # a group's name: PREFIX<the grader's pid>_<n>


def _sweep(base: Path) -> None:
    """Remove the empty groups a grader that was killed left in `base` (its pid is gone)."""
    for folder in base.glob(f"{PREFIX}*"):
        pid = folder.name[len(PREFIX):].split("_")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            try:
                folder.rmdir()
            except OSError:
                pass


class Unavailable(RuntimeError):
    """The cgroup mode asked for cannot be had here."""


def _mountinfo() -> list[tuple[str, str, str, set[str]]]:
    """(mount point, the mount's root, file system type, super options) of each mount of this process."""
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, kinds = left.split(), right.split()
        if len(fields) >= 5 and len(kinds) >= 3:
            out.append((fields[4], fields[3], kinds[0], set(kinds[2].split(","))))
    return out


def _own(controller: str) -> str | None:
    """This process's cgroup path in the v1 hierarchy of `controller`, or in v2 (controller "")."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if (controller in names.split(",")) if controller else names == "":
            return path
    return None


def _folder(controller: str, path: str) -> Path | None:
    """Where cgroup `path` (as /proc/<pid>/cgroup says it) lies in a mounted v1 (`controller`) or v2 ("") hierarchy."""
    for mount, root, kind, options in _mountinfo():
        if (kind == "cgroup" and controller in options) if controller else kind == "cgroup2":
            if path == root or path.startswith(root.rstrip("/") + "/"):
                return Path(mount, path[len(root.rstrip("/")):].lstrip("/"))
    return None


def _write(path: Path, value) -> None:
    path.write_text(f"{value}\n")


def _counts(path: Path) -> dict[str, int]:
    """A flat-keyed cgroup file ("oom_kill 2\\nmax 0") as a dict; {} where it is missing."""
    try:
        return {k: int(v) for k, v in (line.split()[:2] for line in path.read_text().splitlines() if " " in line)}
    except (OSError, ValueError):
        return {}


def _number(path: Path) -> int:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


class Group:
    """One submission's cgroup: a folder per hierarchy (memory, pids; one for both in v2)."""

    def __init__(self, mode: str, memory: Path | None, pids: Path | None, prefix=(), limit: int = 0):
        self.mode, self.memory, self.pids, self._prefix, self._limit = mode, memory, pids, list(prefix), limit

    def prefix(self) -> list[str]:
        return self._prefix

    def join(self) -> None:
        """Move this process (the child about to exec bwrap) into the group; what it starts stays in it."""
        for folder in dict.fromkeys(f for f in (self.memory, self.pids) if f is not None):
            _write(folder / "cgroup.procs", os.getpid())

    def adopt(self, pid: int) -> bool:
        """systemd: the scope systemd-run made for `pid`, once its memory.max is the limit asked for."""
        if self.mode != "systemd" or self.memory is not None:
            return self.memory is not None
        try:
            path = _own_of(pid)
        except OSError:
            return False
        folder = _folder("", path) if path else None
        if folder is not None and _number(folder / "memory.max") == self._limit:
            self.memory = self.pids = folder
        return self.memory is not None

    def passed(self) -> str | None:
        if self.memory is None:
            return None
        oom = self.memory / ("memory.oom_control" if self.mode == "cgroup1" else "memory.events")
        if _counts(oom).get("oom_kill", 0) > 0:
            return "memory"
        if _counts(self.pids / "pids.events").get("max", 0) > 0:
            return "processes"
        return None

    def peak(self) -> tuple[int, int]:
        if self.memory is None:
            return 0, 0
        memory = ("memory.max_usage_in_bytes",) if self.mode == "cgroup1" else ("memory.peak", "memory.current")
        tasks = ("pids.peak", "pids.current")
        return (next((n for f in memory if (n := _number(self.memory / f))), 0),
                next((n for f in tasks if (n := _number(self.pids / f))), 0))

    def kill(self) -> None:
        """SIGKILL every process in the group (cgroup.kill where the kernel has it), until none is left or 2 s."""
        if self.memory is None:
            return
        if (self.memory / "cgroup.kill").exists():
            try:
                _write(self.memory / "cgroup.kill", 1)
            except OSError:
                pass
        deadline = time.monotonic() + 2
        while (left := self._procs()) and time.monotonic() < deadline:
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.02)

    def _procs(self) -> list[int]:
        try:
            return [int(p) for p in (self.pids / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def remove(self) -> None:
        """rmdir the group's folders (systemd collects its scope itself), once their processes are gone."""
        if self.mode == "systemd":
            return
        for folder in dict.fromkeys(f for f in (self.memory, self.pids) if f is not None):
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _own_of(pid: int) -> str | None:
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            return line[3:]
    return None


def _v2(name: str, memory: int, tasks: int, parent: str) -> Group:
    base = Path(parent)
    try:
        enabled = set((base / "cgroup.subtree_control").read_text().split())
        if not {"memory", "pids"} <= enabled:
            _write(base / "cgroup.subtree_control", "+memory +pids")
        _sweep(base)
        folder = base / name
        folder.mkdir()
    except OSError as exc:
        raise Unavailable(f"cannot make a cgroup in {base} ({exc}): it must be a cgroup v2 folder you may write, "
                          "holding no process, with memory and pids in its cgroup.subtree_control") from None
    try:
        for file, value in (("memory.max", memory), ("memory.swap.max", 0), ("memory.oom.group", 1),
                            ("pids.max", tasks)):
            if file in ("memory.max", "pids.max") or (folder / file).exists():
                _write(folder / file, value)
    except OSError as exc:
        folder.rmdir()
        raise Unavailable(f"cannot set the limits of cgroup {folder}: {exc}") from None
    return Group("cgroup2", folder, folder)


def _v1(name: str, memory: int, tasks: int) -> Group:
    bases = {c: _folder(c, path) if (path := _own(c)) is not None else None for c in ("memory", "pids")}
    if None in bases.values():
        raise Unavailable("no cgroup v1 memory and pids hierarchies are mounted here")
    made: list[Path] = []
    try:
        for base in bases.values():
            _sweep(base)
            (base / name).mkdir()
            made.append(base / name)
        mem, pids = bases["memory"] / name, bases["pids"] / name
        _write(mem / "memory.limit_in_bytes", memory)
        if (mem / "memory.memsw.limit_in_bytes").exists():     # no swap beyond the limit
            _write(mem / "memory.memsw.limit_in_bytes", memory)
        _write(pids / "pids.max", tasks)
    except OSError as exc:
        for folder in made:
            folder.rmdir()
        raise Unavailable(f"the cgroup v1 hierarchies are not writable here ({exc}): run as root, or use cgroup v2") from None
    return Group("cgroup1", mem, pids)


def _systemd_words(name: str, memory: int, tasks: int) -> list[str]:
    return ["systemd-run", *(["--user"] if os.geteuid() else []), "--scope", "--quiet", "--collect", f"--unit={name}",
            "-p", f"MemoryMax={memory}", "-p", "MemorySwapMax=0", "-p", f"TasksMax={tasks}", "--"]


@functools.lru_cache(maxsize=1)
def _systemd_works() -> str:
    """"" where systemd-run makes a scope with limits here, else why not."""
    if shutil.which("systemd-run") is None:
        return "systemd-run is not installed"
    try:
        trial = subprocess.run([*_systemd_words(f"course_lib_box_trial_{os.getpid()}", 64 * 2**20, 16), "true"],
                               capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"systemd-run failed: {exc}"
    return "" if trial.returncode == 0 else f"systemd-run cannot make a scope: {trial.stderr.strip()[-300:]}"


def _systemd(name: str, memory: int, tasks: int) -> Group:
    why = _systemd_works()
    if why:
        raise Unavailable(why)
    return Group("systemd", None, None, _systemd_words(name, memory, tasks), memory)


def open_group(name: str, memory: int, tasks: int, mode: str = "auto", parent: str = "") -> Group | None:
    """A cgroup for one submission, by `mode` ("auto": a delegated v2 `parent` if given, else v1, else systemd-run,
    else None). Unavailable where a mode named (or a `parent` given) cannot be had."""
    if mode == "cgroup2" or (mode == "auto" and parent):
        if not parent:
            raise Unavailable("cgroup2 needs a delegated folder: set c.SandboxedExecute.cgroup")
        return _v2(name, memory, tasks, parent)
    if mode == "watchdog":
        return None
    if mode in ("cgroup1", "systemd"):
        return (_v1 if mode == "cgroup1" else _systemd)(name, memory, tasks)
    if mode != "auto":
        raise Unavailable(f"unknown cgroup mode {mode!r} (one of auto, {', '.join(MODES)}, watchdog)")
    for make in (_v1, _systemd):
        try:
            return make(name, memory, tasks)
        except Unavailable:
            continue
    return None
