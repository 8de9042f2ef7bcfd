"""Helpers for the tests that install the course into fresh environments (Colab's packages, the
hub's image): a Python 3.12 to build them with, an environment free of this test's venv, commands
that say what they do as they go and skip the test when PyPI cannot be reached, and deploy/Dockerfile's
steps run as a script. And what a test session builds once for all its tests, on every xdist worker
(:func:`session_folder`, under a lock): a clean clone of HEAD and the wheel pip builds from it
(:func:`course_build`: tests/lab/conftest.py's fixture of that name).
"""
from __future__ import annotations

import contextlib
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

try:
    import fcntl
except ImportError:             # Windows: each worker builds its own
    fcntl = None

import pytest

from live_progress import say

REPO = Path(__file__).resolve().parents[2]
OFFLINE = re.compile(r"NewConnectionError|Temporary failure in name resolution|Network is unreachable|"
                     r"No matching distribution found")


def python312() -> str | None:
    """A Python 3.12 with venv (Colab's, and the images'): $COURSE_PYTHON312, python3.12 on PATH, or pyenv's."""
    candidates = [os.environ.get("COURSE_PYTHON312"), shutil.which("python3.12"),
                  *sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12")), reverse=True)]
    for exe in filter(None, candidates):
        r = subprocess.run([exe, "-c", "import sys, venv; print(sys.version_info[:2] == (3, 12))"],
                           capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip() == "True":
            return exe
    return None


def clean_env(tmp: Path) -> dict:
    """This process's environment without its virtual environment or the course's and hubs' variables,
    with Jupyter folders and a compile cache of its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
           and not k.startswith(("COURSE_", "JUPYTERHUB_", "COLAB_", "NBGRADER_"))}
    here = sys.prefix if sys.prefix != sys.base_prefix else None
    if here:
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(here))
    for var, sub in (("JUPYTER_CONFIG_DIR", "c"), ("JUPYTER_DATA_DIR", "d"), ("JUPYTER_RUNTIME_DIR", "r"),
                     ("IPYTHONDIR", "i")):
        env[var] = str(tmp / "jupyter" / sub)
    env["COURSE_LIB_CACHE"] = str(tmp / "course-cache")
    return env


def run(args, what: str, **kw) -> subprocess.CompletedProcess:
    """Run a command, saying what and then how long it took (live_progress: in pytest's output as it goes);
    skip the test if it failed for want of PyPI, fail it with the output otherwise."""
    say(f"{what} ...")
    start = time.monotonic()
    r = subprocess.run(args, capture_output=True, text=True, timeout=kw.pop("timeout", 900), **kw)
    say(f"{what}: {'done' if r.returncode == 0 else 'failed'} in {time.monotonic() - start:.0f} s")
    if r.returncode != 0 and OFFLINE.search(r.stdout + r.stderr):
        pytest.skip(f"{what}: PyPI is not reachable: {(r.stdout + r.stderr).strip()[-300:]}")
    assert r.returncode == 0, f"{what} failed:\n{(r.stdout + r.stderr)[-4000:]}"
    return r


def _expand(value: str, env: dict) -> str:
    """ARG and ENV values put in, as docker does; any other $NAME is the shell's (left as it is)."""
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: env.get(m[1] or m[2], m[0]), value)


def dockerfile_steps(text: str) -> list[tuple[str, str]]:
    """(instruction, arguments) of each step, continuation lines joined, comments left out."""
    text = re.sub(r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    return [(m[1].upper(), m[2].strip()) for m in re.finditer(r"^\s*(\w+)\s+(.*)$", text, re.M)]


def dockerignore(context: Path) -> list[re.Pattern]:
    """The context's .dockerignore as one pattern per line, matched as docker matches them: against the path
    from the context's root (a leading / dropped), `*` and `?` within one name, `**` any number of folders,
    a folder's pattern leaving out everything in it. (No `!` exceptions: the course's file has none.)"""
    out = []
    for line in (context / ".dockerignore").read_text().splitlines():
        line = line.strip().lstrip("/").rstrip("/")
        if line and not line.startswith("#"):
            assert not line.startswith("!"), "an exception (!) this test does not model"
            regex = "".join({"**/": "(.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(part, re.escape(part))
                            for part in re.split(r"(\*\*/|\*\*|\*|\?)", line))
            out.append(re.compile(regex + r"(/.*)?\Z"))
    return out


def copy_context(context: Path, dst, patterns) -> None:
    """`COPY . dst`: the context without what .dockerignore (`patterns`) leaves out, nor .git."""
    def ignore(folder, names):
        rel = Path(folder).relative_to(context).as_posix()
        paths = {n: n if rel == "." else f"{rel}/{n}" for n in names}
        return [n for n, p in paths.items() if n == ".git" or any(x.match(p) for x in patterns)]
    shutil.copytree(context, dst, dirs_exist_ok=True, symlinks=True, ignore=ignore)


def system_step(command: str, env: dict) -> bool:
    """True for a step that changes the system (apt-get, useradd): checked, not run. The programs an
    apt-get step installs must be here already, or the test skips saying which."""
    words = shlex.split(command)
    if words[:1] == ["useradd"]:
        return True
    if "apt-get" not in words:
        return False
    after = words[words.index("install") + 1:] if "install" in words else []
    after = after[:after.index("&&")] if "&&" in after else after
    wanted = [w for w in after if not w.startswith("-")]
    program = {"bubblewrap": "bwrap"}                   # a package whose program has another name
    missing = [w for w in wanted if not shutil.which(program.get(w, w), path=env.get("PATH"))]
    if missing:
        pytest.skip(f"the image's apt-get step installs {missing}; a test installs no system package: "
                    f"apt-get install {' '.join(missing)}")
    return True


def run_dockerfile(dockerfile: Path, context: Path, tmp: Path, python: str) -> tuple[dict, Path, list]:
    """Run a Dockerfile's steps as a shell script, its absolute paths (ARG defaults, WORKDIR) moved under
    `tmp`, with `python` as the base image's. Returns (environment, working folder, CMD)."""
    base = tmp / "base-image-bin"                 # what `python` is in the base image
    base.mkdir(parents=True, exist_ok=True)
    (base / "python").symlink_to(python)
    env = clean_env(tmp)
    env["PATH"] = f"{base}{os.pathsep}{env['PATH']}"
    moved = lambda path: str(tmp / "image" / path.lstrip("/"))
    cwd, cmd = tmp, None
    for instruction, args in dockerfile_steps(dockerfile.read_text())[1:]:
        if instruction == "ARG":
            name, _, default = args.partition("=")
            env[name] = moved(default) if default.startswith("/") else default
        elif instruction == "ENV":
            for pair in shlex.split(args):
                name, _, value = pair.partition("=")
                env[name] = _expand(value, env)
        elif instruction == "WORKDIR":
            cwd = Path(moved(_expand(args, env)))
            cwd.mkdir(parents=True, exist_ok=True)
        elif instruction == "COPY":
            say(f"{dockerfile.name}: COPY the build context (what .dockerignore leaves)")
            src, dst = (_expand(a, env) for a in shlex.split(args) if not a.startswith("--"))
            assert src == ".", "the image copies the whole context"
            copy_context(context, dst, dockerignore(context))
        elif instruction == "RUN":
            script = _expand(args, env)
            if not system_step(script, env):
                run(["bash", "-euo", "pipefail", "-c", script], f"RUN {args[:80]}", cwd=cwd, env=env)
        elif instruction == "CMD":
            cmd = json.loads(args)
        else:
            assert instruction in ("EXPOSE", "LABEL", "USER"), f"a step this test does not know how to run: {instruction}"
    return env, cwd, cmd


# ------------------------------------------------------------------------------------ built once per session

def session_folder(tmp_path_factory, name: str) -> Path:
    """A folder of this test session that its xdist workers share (their base temporary folders' parent,
    which pytest makes per session), or of this process without xdist."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name


@contextlib.contextmanager
def only_one(folder: Path):
    """Hold `folder`'s lock: one process at a time builds it, the others wait and then use what it built."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{folder}.lock", "w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield folder


def course_build(tmp_path_factory) -> tuple[Path, Path]:
    """(a clean clone of HEAD, the wheel ``pip wheel`` builds from it), made once per session: what a student's
    ``pip install`` of a clone builds (the same PEP 517 build, isolated), shared by the tests that look into
    the wheel, resolve it for other platforms or install it (tests/lab/test_install.py, test_no_solutions.py,
    test_instructor.py), so the course is built once instead of once per test. Skips without git or a checkout."""
    if not shutil.which("git") or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout")
    with only_one(session_folder(tmp_path_factory, "course-build")) as folder:
        clone, dist = folder / "clone", folder / "dist"
        built = sorted(dist.glob("course_lib-*.whl"))
        if built:
            return clone, built[0]
        shutil.rmtree(folder, ignore_errors=True)            # a build another worker left half done
        say("building the course's wheel from a clean clone of HEAD (pip wheel, once per session)")
        subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{REPO}", str(clone)], check=True, timeout=300,
                       capture_output=True)
        r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(clone)],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0 and (OFFLINE.search(r.stderr) or "connection" in r.stderr.lower()):
            pytest.skip(f"no index to fetch the build backend from: {r.stderr.strip()[-300:]}")
        assert r.returncode == 0, r.stderr[-2000:]
        return clone, next(dist.glob("course_lib-*.whl"))
