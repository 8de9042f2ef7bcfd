"""The course installs where students are, tested as far as this Linux machine can:

- pyproject.toml puts the CUDA wheels (NVRTC, CuPy) under a marker true exactly on the platforms
  NVIDIA builds them for (course_lib.platforms), so every other platform installs without them;
- pip resolves `pip install -e ".[lab]"` for macOS (arm64, x86_64), Linux (x86_64, aarch64) and
  Windows from wheels only, with every environment marker evaluated for that platform (pip's
  --platform alone would evaluate them for this machine);
- the README's first commands, run as written in a fresh clone (its GitHub URL replaced by a local
  copy of this repository's HEAD, course-lab started and stopped without a terminal), install the
  course into a new virtual environment and serve the student's copy of the notebooks;
- the Dockerfile's steps, run as a shell script here (its folders moved to a temporary one), build
  an environment whose CMD serves the course.

The last three need PyPI (or pip's cache) and skip, saying so, without it. They install what a
student installs, so they take minutes; they test the committed HEAD, not uncommitted edits.
"""
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from course_lib.lab.student import course_lab as lab
from course_lib.compile import platforms
from course_lib.lab import course
from fresh_env import _expand, copy_context, dockerfile_steps, dockerignore
from live_progress import say

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

pytestmark = pytest.mark.slow      # fresh virtual environments and clones of the course

REPO = Path(__file__).resolve().parents[2]
MAC, LINUX = dict(platform_system="Darwin", os_name="posix"), dict(platform_system="Linux", os_name="posix")
PLATFORMS = {        # pip --platform tags (pip takes them literally), and the marker environment there
    "macos-arm64": ("macosx_14_0_arm64 macosx_11_0_arm64", dict(MAC, sys_platform="darwin", platform_machine="arm64")),
    "macos-x86_64": ("macosx_13_0_x86_64 macosx_10_13_x86_64 macosx_10_9_x86_64",
                     dict(MAC, sys_platform="darwin", platform_machine="x86_64")),
    "linux-x86_64": ("manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64",
                     dict(LINUX, sys_platform="linux", platform_machine="x86_64")),
    "linux-aarch64": ("manylinux_2_28_aarch64 manylinux_2_17_aarch64 manylinux2014_aarch64",
                      dict(LINUX, sys_platform="linux", platform_machine="aarch64")),
    "windows-amd64": ("win_amd64", dict(sys_platform="win32", platform_machine="AMD64", platform_system="Windows",
                                        os_name="nt")),
}
CUDA_WHEELS = re.compile(r"^(cupy-cuda|nvidia-cuda)", re.I)


def _requirements():
    try:
        import tomllib
    except ImportError:             # Python 3.10
        from pip._vendor import tomli as tomllib
    from packaging.requirements import Requirement
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in project["dependencies"]], project["optional-dependencies"]


def test_cuda_wheels_are_required_exactly_where_nvidia_builds_them():
    reqs, extras = _requirements()
    cuda = [r for r in reqs if CUDA_WHEELS.match(r.name)]
    core = [r for r in cuda if r.name.startswith(("cupy-cuda", "nvidia-cuda-nvrtc"))]      # what compiling needs
    assert {r.name.split("-cuda")[0] for r in core} == {"cupy", "nvidia"}
    grid = [(s, m) for s in ("linux", "darwin", "win32") for m in ("x86_64", "aarch64", "arm64", "AMD64", "ARM64", "ppc64le")]
    for r in core:
        assert str(r.marker) == str(type(r.marker)(platforms.CUDA_WHEEL_MARKER)), f"{r}: not platforms' marker"
    for r in cuda:
        assert r.marker is not None, f"{r}: a CUDA wheel without a marker breaks the install on macOS"
        for sys_platform, machine in grid:
            env = dict(sys_platform=sys_platform, platform_machine=machine)
            wanted, there = r.marker.evaluate(env), platforms.has_cuda_wheels(sys_platform, machine)
            assert wanted == there if r in core else (not wanted or there), (str(r), env)
    assert not [r for r in reqs if not CUDA_WHEELS.match(r.name) and r.marker and "python_version" not in str(r.marker)], \
        "other core deps hold everywhere (a backport for old Pythons aside)"
    assert any(x.startswith("jupyterlab") for x in extras["lab"]) and not any("jupyterlab" in str(r) for r in reqs)
    assert any("nbval" in x for x in extras["test"]) and "course-lib[lab]" in extras["test"]


@pytest.fixture(scope="module")
def course_wheel(course_build):
    """The course's wheel, built once per session from a clean clone of HEAD (tests/lab/conftest.py)."""
    return course_build[1]


# pip with its marker environment replaced by the target's: argv[1] is that environment as JSON
PIP_AS_IF = ("import json, sys\n"
             "import pip._vendor.packaging.markers as markers\n"
             "target, here = json.loads(sys.argv[1]), markers.default_environment\n"
             "markers.default_environment = lambda: {**here(), **target}\n"
             "from pip._internal.cli.main import main\n"
             "sys.exit(main(sys.argv[2:]))\n")


@pytest.mark.parametrize("target", list(PLATFORMS))
def test_pip_resolves_the_course_with_jupyterlab_from_wheels_on(target, course_wheel, tmp_path):
    tag, env = PLATFORMS[target]
    env = dict(env, python_version="3.12", python_full_version="3.12.8", implementation_name="cpython",
               platform_python_implementation="CPython")
    report = tmp_path / "report.json"
    cmd = [sys.executable, "-c", PIP_AS_IF, json.dumps(env), "install", "--dry-run", "-q", "--ignore-installed",
           "--only-binary=:all:", *[a for t in tag.split() for a in ("--platform", t)], "--python-version", "3.12",
           "--implementation", "cp",
           "--target", str(tmp_path / "t"), "--report", str(report), f"{course_wheel}[lab]"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode != 0 and re.search(r"NewConnectionError|Temporary failure in name resolution|Network is unreachable", r.stderr):
        pytest.skip(f"PyPI is not reachable: {r.stderr.strip()[-300:]}")
    assert r.returncode == 0, f"pip cannot install the course on {target}:\n{r.stderr[-3000:]}"
    names = {i["metadata"]["name"].lower() for i in json.loads(report.read_text())["install"]}
    assert {"course-lib", "numpy", "plotly", "ipywidgets", "jupyterlab", "ipykernel"} <= names
    cuda = {n for n in names if CUDA_WHEELS.match(n)}
    if platforms.has_cuda_wheels(env["sys_platform"], env["platform_machine"]):
        assert any(n.startswith("cupy-cuda") for n in cuda) and any(n.startswith("nvidia-cuda-nvrtc") for n in cuda)
    else:
        assert not cuda, f"{target} has no CUDA wheels, yet pip would install {cuda}"


# ------------------------------------------------------------------------------------ fresh installs

def _clean_env(tmp_path) -> dict:
    """This process's environment without its virtual environment, with Jupyter folders of its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    venv = os.environ.get("VIRTUAL_ENV") or (sys.prefix if sys.prefix != sys.base_prefix else None)
    if venv:
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(venv))
    for var, sub in (("JUPYTER_CONFIG_DIR", "c"), ("JUPYTER_DATA_DIR", "d"), ("JUPYTER_RUNTIME_DIR", "r"),
                     ("JUPYTERLAB_WORKSPACES_DIR", "w"), ("IPYTHONDIR", "i")):
        env[var] = str(tmp_path / "jupyter" / sub)
    env["COURSE_LIB_CACHE"] = str(tmp_path / "cache")
    return env


def _serve_and_stop(log: Path, pid: int, deadline_s=240, proc: subprocess.Popen | None = None) -> tuple[str, str]:
    """Wait for course-lab's 'open:' line in `log`, fetch that URL, then SIGTERM it: (URL, log text). `proc`: the
    Popen of `pid` when it is this process's child (a child that ended is a zombie until waited for, and a zombie
    still answers signal 0: without the wait the stop took the whole 30 s of the SIGKILL deadline)."""
    def alive() -> bool:
        if proc is not None:
            return proc.poll() is None
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False
    say("waiting for course-lab to print its URL, then fetching it")
    start = time.monotonic()
    end, url = start + deadline_s, None
    try:
        while time.monotonic() < end and url is None:
            text = log.read_text() if log.exists() else ""
            m = re.search(r"open:\s+(\S+)", text)
            url = m[1] if m else None
            if url is None:
                if not alive():
                    pytest.fail(f"course-lab ended without serving:\n{text[-3000:]}")
                time.sleep(0.5)
        assert url, f"course-lab printed no URL in {deadline_s} s:\n{log.read_text()[-3000:]}"
        with urllib.request.urlopen(url, timeout=60) as r:
            assert r.status == 200
        say(f"course-lab served its URL {time.monotonic() - start:.0f} s after it started; stopping it")
        return url, log.read_text()
    finally:
        try:
            os.kill(pid, signal.SIGTERM)
            for _ in range(120):
                if not alive():
                    break
                time.sleep(0.25)
            else:
                os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _run_script(script: str, cwd: Path, env: dict, what: str, timeout=1500):
    say(f"{what} ...")
    start = time.monotonic()
    r = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    say(f"{what}: {'done' if r.returncode == 0 else 'failed'} in {time.monotonic() - start:.0f} s")
    if r.returncode != 0 and re.search(r"NewConnectionError|Temporary failure in name resolution|No matching "
                                       r"distribution found", r.stdout + r.stderr):
        pytest.skip(f"{what}: PyPI is not reachable: {(r.stdout + r.stderr).strip()[-300:]}")
    assert r.returncode == 0, f"{what} failed:\n{(r.stdout + r.stderr)[-4000:]}"
    return r


def readme_commands() -> list[str]:
    """The commands of the README's first shell block, comments and blank lines left out."""
    block = re.search(r"```bash\n(.*?)```", (REPO / "README.md").read_text(), re.S)[1]
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@pytest.mark.skipif(not shutil.which("git") or not (REPO / ".git").exists(), reason="needs git and a git checkout")
def test_the_readme_commands_install_and_open_the_course_in_a_fresh_clone(tmp_path):
    commands = readme_commands()
    assert len(commands) == 2 and commands[0].startswith("git clone ") and course.COURSE_REPO in commands[0]
    assert "python3 -m venv" in commands[0] and commands[0].index("venv") < commands[0].index("pip install"), \
        "Debian 12's pip refuses to install outside a virtual environment"
    assert commands[0].rstrip().endswith("course-lab")
    # the second runs the tests: what .ci/run does from a clean clone, so only the first runs here
    assert re.search(r'pip install -e "\.\[(test|student-test)\]"', commands[1]) and "python -m pytest" in commands[1], \
        "the instructor's README runs every test ([test]); the student repository's, its own (tests/lab/test_publish.py)"
    # the tests get a venv of their own: [test] brings nbgrader (an instructor's tool), which must stay out of
    # the student's .venv, where JupyterLab would grow its menu and course-lab would warn twice (issue 26)
    assert commands[1].startswith("python3 -m venv .venv-test && . .venv-test/bin/activate")
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert not any("nbgrader" in d or "instructor" in d for d in extras["lab"])
    commands = commands[:1]
    remote = tmp_path / "remote" / "transpose-course"        # a local stand-in for the GitHub repository
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    subprocess.run(["git", "-C", str(REPO), "push", "-q", str(remote), "HEAD:refs/heads/main"], check=True,
                   capture_output=True)
    log, pidfile, port = tmp_path / "lab.log", tmp_path / "lab.pid", lab.free_port(0)
    script = "\n".join([
        "set -euo pipefail",
        # course-lab as typed, but without a terminal: in the background, no browser, its output to a file
        f"course-lab() {{ command course-lab --no-browser --port {port} \"$@\" > {log} 2>&1 & echo $! > {pidfile}; }}",
        *(c.replace(course.COURSE_REPO, f"file://{remote}") for c in commands)])
    env = _clean_env(tmp_path)
    _run_script(script, tmp_path, env, "the README's commands")
    clone = tmp_path / "transpose-course"
    url, text = _serve_and_stop(log, int(pidfile.read_text()))
    assert f"notebooks: {clone / 'my-notebooks'}" in text and f"{clone / '.venv'}" in text
    assert sorted(p.name for p in (clone / "my-notebooks").glob("*.ipynb")) == \
        sorted(p.name for p in (clone / "notebooks").glob("*.ipynb")) != []
    status = subprocess.run(["git", "-C", str(clone), "status", "--porcelain"], capture_output=True, text=True).stdout
    assert not status.strip(), f"installing and starting the course changed the clone:\n{status}"


# ------------------------------------------------------------------------------------ the Dockerfile

@pytest.mark.skipif(not shutil.which("git") or not (REPO / ".git").exists(), reason="needs git and a git checkout")
def test_the_dockerfile_steps_run_as_a_script_here_and_its_cmd_serves_the_course(tmp_path):
    steps = dockerfile_steps((REPO / "Dockerfile").read_text())
    assert steps[0][0] == "FROM" and re.match(r"python:3\.1\d", steps[0][1]), "a Debian-based python image"
    context = tmp_path / "context"                       # what `docker build .` gets: committed files
    subprocess.run(["git", "clone", "-q", str(REPO), str(context)], check=True, capture_output=True)
    ignored = dockerignore(REPO)
    env = _clean_env(tmp_path)
    moved = {"COURSE": str(tmp_path / "course"), "VENV": str(tmp_path / "venv")}   # not / on this machine
    cwd, cmd = tmp_path, None
    for instruction, args in steps[1:]:
        if instruction == "ARG":
            name, _, default = args.partition("=")
            env[name] = moved.get(name, default)
        elif instruction == "ENV":
            for pair in shlex.split(args):
                name, _, value = pair.partition("=")
                env[name] = _expand(value, env)
        elif instruction == "WORKDIR":
            cwd = Path(_expand(args, env))
            cwd.mkdir(parents=True, exist_ok=True)
        elif instruction == "COPY":
            src, dst = (_expand(a, env) for a in shlex.split(args))
            assert src == ".", "the image copies the whole context"
            copy_context(context, dst, ignored)
        elif instruction == "RUN":
            _run_script(_expand(args, env), cwd, env, f"RUN {args[:80]}")
        elif instruction == "CMD":
            cmd = json.loads(args)
        else:
            assert instruction in ("EXPOSE", "LABEL"), f"a step this test does not know how to run: {instruction}"
    assert cmd and cmd[0] == "course-lab"
    port = lab.free_port(0)
    cmd = [str(port) if a == "8888" else a for a in cmd]
    log = tmp_path / "cmd.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    url, text = _serve_and_stop(log, proc.pid, proc=proc)
    proc.wait(60)
    assert f"notebooks: {cwd / 'my-notebooks'}" in text and f"{moved['VENV']}/bin/python" in text
