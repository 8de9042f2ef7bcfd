"""Running untrusted work (a student's notebook, a checker on a student's kernel) in a bubblewrap sandbox.

    sandbox.require()                                   # SandboxUnavailable, with how to fix it, if it cannot
    sandbox.run([sys.executable, "-m", "course_lib.lab.grader.trusted"], input=job, work=None)
    sandbox.command(kernel_argv, work=folder, connection=file, bounds=b)   # for a Jupyter kernel (grader.kernel)

The sandbox is Debian's ``bwrap`` (bubblewrap) with every namespace new (``--unshare-all``) and no
capability (``--cap-drop ALL``): no network (a Jupyter kernel talks to its client through ipc sockets
in a folder bound for it), its own PID namespace and /proc (the grader's processes, their environment
and folders are not there), a new session, ``--die-with-parent``. What it sees: the system (/usr,
/etc, ...), Python and the course library read-only, the course's kernels/, and exercises/ as a
copy without any solution.cu (an empty folder is also mounted over $COURSE_LIB_SOLUTIONS where it lies
in a bound folder),
nothing else of the checkout or the course folder. Nothing written in it reaches a disk: the root and /dev are
read-only, and what is writable is sized tmpfs (box.Bounds): the folder /submission (``work``, if given, is bound
read-only at /submitted and copied there; the cwd), /tmp and HOME share one, /dev/shm has its own, a Jupyter
kernel's sockets a third of 1 MiB (KERNEL_DIR; its connection file is bound read-only). The
environment is rebuilt from nothing (COURSE_LIB_SOLUTIONS never reaches it; COURSE_LIB_GRADED=1,
COURSE_LIB_BACKEND=sim; sandbox_site/ first on PYTHONPATH, which leaves out a package whose import cost
every notebook 1.3 s: sandbox_site/rfc3987_syntax.py), bwrap itself is started with an empty one (its
/proc/1/environ shows nothing), and CPU time and memory are limited (box bounds the whole sandbox).

Where bwrap is missing or user namespaces are off, :func:`require` refuses: grading never falls back
to running students' code unsandboxed. This module does not decide grades (grader) nor talk to
nbgrader (nbgrader_hooks); it knows nothing of exercises.
"""
from __future__ import annotations

import atexit
import functools
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ... import paths
from ...teach import solutions
from .box import SLACK, Bounds

HOME, WORK, SUBMITTED = "/home/student", "/submission", "/submitted"
BOX = "/box"                        # the tmpfs of /submission, /tmp and HOME (box.Box measures it there)
KERNEL_DIR, KERNEL_FILE = "/run/kernel", "/run/kernel.json"
CPU_S = 1800                        # CPU seconds one sandboxed process may use (a notebook: ~10-60 s)
MEMORY = 8 * 2**30                  # address space of one sandboxed process
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
SITE = Path(__file__).resolve().parent / "sandbox_site"     # stand-ins for packages too slow to import in a sandbox
FIX = ("install bubblewrap (Debian/Ubuntu: sudo apt install bubblewrap) and allow unprivileged user namespaces "
       "(sysctl kernel.unprivileged_userns_clone=1; Ubuntu 24.04 also kernel.apparmor_restrict_unprivileged_userns=0); "
       "in a container, run it with --privileged or with user namespaces allowed. See docs/INSTRUCTORS.md section 6")


class SandboxUnavailable(RuntimeError):
    """Grading refused: students' code would run unsandboxed."""


@functools.lru_cache(maxsize=None)
def require() -> str:
    """bwrap's path, once a trial sandbox ran; else SandboxUnavailable saying why and how to fix it."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailable(f"cannot grade: bubblewrap (bwrap) is not installed, and students' notebooks are "
                                 f"never run outside a sandbox. To fix: {FIX}")
    trial = subprocess.run([bwrap, *_isolation(), *_system(), *_read_only(), "true"], capture_output=True, text=True,
                           env={}, timeout=60)
    if trial.returncode != 0:
        raise SandboxUnavailable(f"cannot grade: bubblewrap cannot make a sandbox here ({trial.stderr.strip()}), "
                                 f"and students' notebooks are never run outside one. To fix: {FIX}")
    return bwrap


def _isolation(bounds: Bounds = Bounds()) -> list[str]:
    """New namespaces, no capability (bwrap keeps root's for a caller that is root: a grading container), and the
    only writable places: sized tmpfs. /tmp, /home and /submission are links into one, so that one size bounds them."""
    sized = lambda n: ["--size", str(n + SLACK), "--tmpfs"]             # noqa: E731
    return ["--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--proc", "/proc",
            "--dev", "/dev", *sized(bounds.shm), "/dev/shm", *sized(bounds.space), BOX,
            "--perms", "1777", "--dir", f"{BOX}/tmp", "--dir", f"{BOX}{WORK}", "--dir", f"{BOX}{HOME}",
            "--symlink", f"{BOX}/tmp", "/tmp", "--symlink", f"{BOX}/home", "/home", "--symlink", f"{BOX}{WORK}", WORK]


def _read_only() -> list[str]:
    """Last: the root and /dev (bwrap's own tmpfs, of any size) become read-only; the sized tmpfs stay writable."""
    return ["--remount-ro", "/dev", "--remount-ro", "/"]


def _system() -> list[str]:
    out = []
    for d in SYSTEM:
        if os.path.islink(d):
            out += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            out += ["--ro-bind", d, d]
    return out


def _ro(path) -> list[str]:
    path = Path(path).resolve()
    return ["--ro-bind", str(path), str(path)] if path.exists() else []


def _interpreter_dirs() -> list[Path]:
    """The folders of every link on the way from sys.executable to the interpreter (a venv's python may
    point outside both prefixes: an image's /usr/local/bin, or a test's stand-in for it)."""
    hops, p = [], Path(sys.executable)
    for _ in range(16):
        hops.append(p.parent.resolve())
        if not p.is_symlink():
            break
        p = p.parent / os.readlink(p)
    return hops


@functools.lru_cache(maxsize=1)
def _exercises_without_solutions() -> Path:
    """A copy of exercises/ without any solution.cu or wrong.toml (wrong kernels written from the solution), made
    once per process (removed at its exit)."""
    copy = Path(tempfile.mkdtemp(prefix="course_lib_exercises_"))
    atexit.register(shutil.rmtree, copy, True)
    shutil.copytree(paths.EXERCISES, copy, dirs_exist_ok=True, ignore=shutil.ignore_patterns("solution.cu", "wrong.toml"))
    return copy


def _course() -> list[str]:
    """Python, its packages and the course library read-only; the course's kernels without solutions."""
    out = []
    for d in dict.fromkeys([*(Path(p).resolve() for p in (sys.base_prefix, sys.prefix)), *_interpreter_dirs()]):
        if not any(d.is_relative_to(s) for s in SYSTEM):
            out += _ro(d)
    out += _ro(paths.PACKAGE) + _ro(paths.KERNELS)
    if paths.EXERCISES.exists():        # the exercises as a student install has them: no solution.cu
        out += ["--ro-bind", str(_exercises_without_solutions()), str(paths.EXERCISES.resolve())]
    if paths.RESULTS.resolve().is_relative_to(paths.REPO):      # numbers the lessons quote
        out += _ro(paths.RESULTS)
    bound = [Path(out[i + 1]) for i, w in enumerate(out) if w == "--ro-bind"]
    for hidden in (paths.KERNELS / "solutions", paths.PACKAGE / "kernels" / "solutions", solutions.directory()):
        if hidden is None or not hidden.exists() or hidden.resolve() == paths.EXERCISES.resolve():
            continue
        if any(hidden.resolve().is_relative_to(b) for b in bound):     # an empty folder over the solutions
            out += ["--size", "4096", "--tmpfs", str(hidden.resolve()), "--remount-ro", str(hidden.resolve())]
    return out


def _through_links(options: list[str]) -> list[str]:
    """bwrap cannot make a mount point under a link, and /tmp and /home are links into the box's tmpfs: a folder
    bound there (Python in a venv under /tmp, as a test's or a throw-away image's may be) is bound at the link's
    target instead, so its path still leads to it (the folder stays read-only; beside it is the box's tmpfs)."""
    out, takes = [], {"--ro-bind": 2, "--bind": 2, "--tmpfs": 1, "--remount-ro": 1, "--size": 1}
    i = 0
    while i < len(options):
        word, n = options[i], takes.get(options[i], 0)
        args = options[i + 1:i + 1 + n]
        if n and word != "--size":
            dest = args[-1]
            for linked in ("/tmp", "/home"):
                if dest == linked or dest.startswith(linked + "/"):
                    args[-1] = BOX + dest
        out += [word, *args]
        i += 1 + n
    return out


def environment() -> dict[str, str]:
    """The sandbox's whole environment: nothing of the grader's. SITE first on PYTHONPATH: a package left out."""
    return {"HOME": HOME, "PATH": f"{Path(sys.prefix) / 'bin'}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
            "PYTHONPATH": f"{SITE}:{paths.PACKAGE.parent}", "PYTHONDONTWRITEBYTECODE": "1", "COURSE_LIB_GRADED": "1",
            "COURSE_LIB_BACKEND": "sim", "COURSE_LIB_PROGRESS": "0", "JUPYTER_PLATFORM_DIRS": "1",
            "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}


def command(argv, work=None, *, connection=None, bounds: Bounds = Bounds(), env=None) -> list[str]:
    """The bwrap command line that runs `argv` sandboxed, in /submission: a copy of the folder `work` if given (only
    read here), else empty; `connection`: a Jupyter kernel's connection file, bound read-only at KERNEL_FILE; `env`
    adds to environment() (one student's id and variant key, never the class's secret)."""
    cmd = [require(), *_isolation(bounds), *_system(), *_through_links(_course()), "--clearenv"]
    if connection is not None:
        cmd += ["--size", str(SLACK), "--tmpfs", KERNEL_DIR, "--ro-bind", str(Path(connection).resolve()), KERNEL_FILE]
    for k, v in {**environment(), **(env or {})}.items():
        cmd += ["--setenv", k, v]
    if work is not None:
        # copied in the sandbox, into its tmpfs: a folder too large for it fills it (box stops that notebook)
        cmd += ["--ro-bind", str(Path(work).resolve()), SUBMITTED]
        argv = ["/bin/sh", "-c", f'cp -a {SUBMITTED}/. {WORK}/ 2>/dev/null; exec "$@"', "sh", *argv]
    return [*cmd, *_read_only(), "--chdir", WORK, "--", *map(str, argv)]


def limits(cpu_s: int = CPU_S, memory: int = MEMORY):
    """A preexec_fn for the process that starts bwrap: CPU time, address space, no core dumps."""
    def apply():
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def run(argv, *, work=None, input: str | None = None, timeout: float = 600, cpu_s: int = CPU_S,
        memory: int = MEMORY, bounds: Bounds = Bounds()) -> subprocess.CompletedProcess:
    """Run `argv` in the sandbox; its stdout and stderr as text. subprocess.TimeoutExpired past `timeout`."""
    return subprocess.run(command(argv, work, bounds=bounds), input=input, capture_output=True, text=True,
                          timeout=timeout, env={}, preexec_fn=limits(cpu_s, memory), start_new_session=True)
