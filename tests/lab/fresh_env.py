"""Helpers for the tests that install the course into fresh environments (Colab's packages, the
hub's image): a Python 3.12 to build them with, an environment free of this test's venv, commands
that say what they do as they go and skip the test when PyPI cannot be reached, and deploy/Dockerfile's
steps run as a script.
"""
from __future__ import annotations

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

import pytest

from live_progress import say
from test_install import copy_context, dockerfile_steps, dockerignore

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
