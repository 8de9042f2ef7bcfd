"""The box around one submission: bounds on the whole of its sandbox, kept with what the machine gives.

    b = box.Box(box.Bounds(time_s=300, memory=2 * GiB, ...), mode="auto")   # b.mode: how it holds them here
    popen(b.wrap(sandbox.command(argv, bounds=b.bounds)), preexec_fn=b.preexec(cpu_s, address_space))
    b.started(popen.pid)          # the clock runs, the watchdog samples every 0.2 s
    b.output(nbytes)              # bytes that came back from the sandbox (the kernel client counts them); False: over
    b.stopped, b.says             # None, or the bound passed ("memory") and what the feedback says of it
    b.close()                     # kills what is left, removes the cgroup; b.summary(): the most it used

The bounds, per submission, and how each is kept:

- ``time_s``: the whole notebook's run from the kernel's start, every cell together: the watchdog's clock;
- ``memory``: processes and files together: a cgroup's memory limit (course_lib.lab.grader.cgroups: a tmpfs page
  is charged to the cgroup of the process that wrote it; the box stops once the OOM killer ran), else the
  watchdog's sum of the processes' proportional memory (PSS) and the tmpfs' use;
- ``space``: files: the folder, /tmp and HOME are one tmpfs of that size, /dev/shm another of ``shm``
  (sandbox.command sizes them: nothing else is writable), and the watchdog stops a notebook that fills one;
- ``processes``: tasks (processes and threads) at once: the cgroup's pids.max, else RLIMIT_NPROC (counted per
  user, which the kernel does not apply to root) and the watchdog's count;
- ``output``: bytes of every message from the kernel, counted as they arrive (course_lib.lab.grader.kernel,
  whose sockets also refuse any single message over it).

Passing one stops the whole sandbox: SIGKILL to bwrap's outer process (its PID namespace dies with its init)
and to every process of the cgroup. Without a writable cgroup (mode "watchdog") memory and processes rest on the
watchdog's samples: a burst shorter than 0.2 s passes unseen, the tmpfs' sizes and RLIMIT_AS still hold. This
module knows nothing of nbgrader or notebooks.
"""
from __future__ import annotations

import dataclasses
import itertools
import os
import resource
import signal
import threading
import time
from pathlib import Path

from . import cgroups

MiB = 2**20
SLACK = MiB                 # a tmpfs is this much larger than its bound, so that passing it can be seen
_names = itertools.count(1)


@dataclasses.dataclass(frozen=True)
class Bounds:
    """What one submission's notebook may use, all of it together."""
    time_s: float = 300
    memory: int = 2048 * MiB
    space: int = 256 * MiB
    shm: int = 64 * MiB
    processes: int = 256
    output: int = 16 * MiB

    def says(self, bound: str) -> str:
        """What the notebook did, for its feedback: 'used more than 512 MiB of memory (...)'."""
        return {"time": f"ran longer than {self.time_s:g} s (the whole notebook, every cell together)",
                "memory": f"used more than {self.memory / MiB:g} MiB of memory (processes and files together)",
                "space": f"wrote more than {self.space / MiB:g} MiB of files (its folder, /tmp and HOME together)",
                "shm": f"wrote more than {self.shm / MiB:g} MiB of files into /dev/shm",
                "processes": f"ran more than {self.processes} processes or threads at once",
                "output": f"sent more than {self.output / MiB:g} MiB of output (every cell's text, images and "
                          "data together)"}[bound]


class Box:
    """One submission's bounds, held from bwrap's start to `close`."""

    def __init__(self, bounds: Bounds = Bounds(), mode: str = "auto", cgroup: str = "", interval: float = 0.2):
        self.bounds, self.interval = bounds, interval
        name = f"{cgroups.PREFIX}{os.getpid()}_{next(_names)}"
        self.group = None if mode == "watchdog" else cgroups.open_group(name, bounds.memory, bounds.processes,
                                                                         mode, cgroup)
        self.mode = self.group.mode if self.group else "watchdog"
        self.stopped: str | None = None
        self._outer = self._inner = None
        self._start = self._sent = 0
        self._peaks = {"memory": 0, "space": 0, "processes": 0}
        self._lock, self._done = threading.Lock(), threading.Event()

    @property
    def says(self) -> str | None:
        return None if self.stopped is None else f"stopped: the notebook {self.bounds.says(self.stopped)}"

    def wrap(self, cmd: list[str]) -> list[str]:
        return [*self.group.prefix(), *cmd] if self.group else list(cmd)

    def preexec(self, cpu_s: int, address_space: int):
        """The preexec_fn of bwrap's process: per-process limits, then the cgroup (before anything is forked)."""
        # RLIMIT_NPROC counts every task of this user: what it runs now, the bound, and a few more, so that the
        # watchdog sees the bound passed (a fork refused right at it would go unseen)
        nproc = None if self.group or os.geteuid() == 0 else _tasks_of(os.getuid()) + self.bounds.processes + 8

        def apply():
            for limit, value in ((resource.RLIMIT_CPU, cpu_s), (resource.RLIMIT_AS, address_space),
                                 (resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, self.bounds.space + SLACK),
                                 *(((resource.RLIMIT_NPROC, nproc),) if nproc else ())):
                resource.setrlimit(limit, (value, value))
            if self.group:
                self.group.join()
        return apply

    def started(self, pid: int) -> None:
        """bwrap runs as `pid`: start the clock and the watchdog."""
        self._outer, self._start = pid, time.monotonic()
        threading.Thread(target=self._watch, name=f"course_lib box {pid}", daemon=True).start()

    def inner(self, timeout: float = 10) -> int | None:
        """The sandbox's first process (its PID namespace's init) as this machine numbers it, once it is there."""
        deadline = time.monotonic() + timeout
        while self._inner is None and self._outer is not None:
            kids = _children(self._outer)
            self._inner = kids[0] if kids else None
            if self._inner is None and time.monotonic() >= deadline:
                break
            time.sleep(0.01 if self._inner is None else 0)
        return self._inner

    def output(self, nbytes: int) -> bool:
        """Count `nbytes` more from the sandbox; past the bound the box stops and this says False."""
        with self._lock:
            self._sent += nbytes
            over = self._sent > self.bounds.output
        if over:
            self.stop("output")
        return not over

    def stop(self, bound: str) -> None:
        """Kill the whole sandbox; the first bound passed is the one `stopped` names."""
        with self._lock:
            self.stopped = self.stopped or bound
        self._kill()

    def _kill(self) -> None:
        if self._outer is not None:
            try:
                os.kill(self._outer, signal.SIGKILL)
            except OSError:
                pass
        if self.group:
            self.group.kill()

    def close(self) -> None:
        """A last look (the cgroup keeps its OOM kills after its processes are gone), then kill and remove it all."""
        self.check()
        self._done.set()
        self._kill()
        if self.group:
            memory, tasks = self.group.peak()
            self._peaks["memory"], self._peaks["processes"] = max(self._peaks["memory"], memory), max(
                self._peaks["processes"], tasks)
            self.group.remove()

    def check(self) -> str | None:
        """Sample now (as between two cells, before the sandbox ends unseen); stop it if it passed a bound."""
        bound = self._passed() if self._outer is not None and not self._done.is_set() else None
        if bound:
            self.stop(bound)
        return self.stopped

    def _watch(self) -> None:
        while not self._done.wait(self.interval):
            if self.check():
                return

    def _passed(self) -> str | None:
        """The first bound the sandbox passed, by the clock, the cgroup's events and the watchdog's samples."""
        b, peaks = self.bounds, self._peaks
        if time.monotonic() - self._start > b.time_s:
            return "time"
        held = self.group is not None and self.group.adopt(self._outer)
        if held and (bound := self.group.passed()):
            return bound
        root = f"/proc/{self.inner(0)}/root" if self.inner(0) else None
        files, shm = (_used(f"{root}/box"), _used(f"{root}/dev/shm")) if root else (0, 0)
        peaks["space"] = max(peaks["space"], files + shm)
        if files > b.space:
            return "space"
        if shm > b.shm:
            return "shm"
        if held:
            return None
        tasks = _descendants(self._outer)
        memory = sum(_pss(pid) for pid in tasks) + files + shm
        peaks["memory"], peaks["processes"] = max(peaks["memory"], memory), max(peaks["processes"], sum(tasks.values()))
        if memory > b.memory:
            return "memory"
        return "processes" if sum(tasks.values()) > b.processes else None

    def describe(self) -> str:
        """How this box holds each bound here, for the grader's log."""
        kept = {"cgroup2": "a cgroup v2 (memory.max counting tmpfs, pids.max)",
                "cgroup1": "a cgroup v1 (memory.limit_in_bytes counting tmpfs, pids.max)",
                "systemd": "a systemd-run scope (MemoryMax counting tmpfs, TasksMax)"}.get(self.mode)
        if kept is None:
            kept = ("the watchdog's samples every {:g} s (no writable cgroup here; see docs/INSTRUCTORS.md section 6)"
                    "{}".format(self.interval, "" if os.geteuid() == 0 else ", and RLIMIT_NPROC for processes"))
        b = self.bounds
        return (f"{b.time_s:g} s, {b.memory / MiB:g} MiB of memory with files, {b.space / MiB:g} MiB of files "
                f"(+ {b.shm / MiB:g} MiB in /dev/shm), {b.processes} tasks, {b.output / MiB:g} MiB of output; memory and "
                f"tasks held by {kept}; time by the watchdog's clock, files by sized tmpfs, output by the kernel client")

    def summary(self) -> str:
        """What the notebook used at most, for the grader's log."""
        p = self._peaks
        return (f"{time.monotonic() - self._start:.1f} s, {p['memory'] / MiB:.0f} MiB of memory, "
                f"{p['space'] / MiB:.1f} MiB of files, {p['processes']} tasks, "
                f"{self._sent / 1024:.0f} KiB of output" + (f"; {self.says}" if self.stopped else ""))


def _stat(pid) -> list[str]:
    """The fields of /proc/<pid>/stat after the command's name (state, ppid, ...); [] where it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return []
    return text[text.rfind(")") + 2:].split()


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return [int(p) for p in os.listdir("/proc") if p.isdigit() and (s := _stat(p)) and s[1] == str(pid)]


def _descendants(pid: int) -> dict[int, int]:
    """{pid: its threads} of `pid` and every process below it (the whole sandbox: orphans go to its init)."""
    kids, threads = {}, {}
    for p in (p for p in os.listdir("/proc") if p.isdigit()):
        s = _stat(p)
        if s:
            kids.setdefault(int(s[1]), []).append(int(p))
            threads[int(p)] = int(s[17])
    out, todo = {}, [pid]
    while todo:
        p = todo.pop()
        if p in threads and p not in out:
            out[p] = threads[p]
            todo += kids.get(p, [])
    return out


def _pss(pid: int) -> int:
    """The memory `pid` holds, shared pages split among their holders (so forks are not counted twice)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _used(folder: str) -> int:
    try:
        st = os.statvfs(folder)
    except OSError:
        return 0
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def _tasks_of(uid: int) -> int:
    """How many tasks `uid` runs now (RLIMIT_NPROC counts them all)."""
    n = 0
    for p in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            if os.stat(f"/proc/{p}").st_uid == uid:
                n += int(_stat(p)[17])
        except (OSError, IndexError, ValueError):
            pass
    return n


if __name__ == "__main__":             # python -m course_lib.lab.grader.box: how this machine boxes a submission
    trial = Box()
    print(f"{trial.mode}: {trial.describe()}")
    trial.close()
