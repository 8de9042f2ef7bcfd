"""Open the course: ``course-lab`` starts JupyterLab on the notebooks with this Python's kernel.

    course-lab                      # notebooks/ beside the package (a checkout, pip install -e .)
    course-lab path/to/notebooks    # any folder of course notebooks
    course-lab --no-browser --port 9000 --ip 0.0.0.0 --sim

It prints one short block with the URL (token included), the kernel's Python and the backend
(the GPU CuPy sees, or the CPU simulator), then waits; Ctrl-C stops JupyterLab and its kernels.
Options it does not know go to ``jupyter lab`` unchanged (``--ServerApp.base_url=/x/``...).

Why a wrapper and not plain ``jupyter lab``: a ``python3`` kernelspec in the user's own Jupyter
folders (another Python, without course_lib) would win over this environment's. ``kernel_env``
puts a ``python3`` kernelspec for *this* interpreter first on JUPYTER_PATH; the instructor tools
use it too when they execute notebooks.

This module also holds the one definition of where the course lives (``COURSE_REPO``) and the
Colab pieces every notebook starts with: :func:`colab_badge` and :func:`colab_install_cell`
(course_lib.colab checks them). It does not install anything and never touches the notebooks.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

COURSE_REPO = "https://github.com/transpose-course/transpose-course"   # the one place to change it
BRANCH = "main"
FIRST_NOTEBOOK = "00_start_here.ipynb"
COLAB_CLONE_DIR = "/content/transpose-course"
BADGE_SVG = "https://colab.research.google.com/assets/colab-badge.svg"


# ---------------------------------------------------------------------------- Colab

def colab_url(notebook: str, repo: str = COURSE_REPO, branch: str = BRANCH) -> str:
    """The 'Open in Colab' link of notebooks/<notebook> in `repo` (a GitHub URL)."""
    owner_name = repo.rstrip("/").removesuffix(".git").split("github.com/", 1)[-1]
    return f"https://colab.research.google.com/github/{owner_name}/blob/{branch}/notebooks/{Path(notebook).name}"


def colab_badge(notebook: str, repo: str = COURSE_REPO, branch: str = BRANCH) -> str:
    """Markdown for the badge in the title cell."""
    return f"[![Open In Colab]({BADGE_SVG})]({colab_url(notebook, repo, branch)})"


def colab_install_cell(repo: str = COURSE_REPO) -> str:
    """The source of the first code cell (tag it ``colab-install``). Outside Colab it does nothing.
    A plain (not editable) install, because an editable one is only importable after a runtime
    restart (its import hook is a .pth file, read when Python starts). CuPy is already on Colab's
    GPU runtime; on its CPU runtime the simulator runs."""
    return ("# On Colab only: install the course (nothing happens anywhere else)\n"
            "import sys\n"
            "if \"google.colab\" in sys.modules:\n"
            f"    !test -d {COLAB_CLONE_DIR} || git clone -q --depth 1 {repo} {COLAB_CLONE_DIR}\n"
            f"    %pip install -q {COLAB_CLONE_DIR}")


# ---------------------------------------------------------------------------- finding things

def notebooks_dir(path: str | os.PathLike | None = None) -> Path:
    """The folder to open: `path`, else notebooks/ of the checkout this package was installed
    from (pip install -e .), else ./notebooks. Raises FileNotFoundError with what to do."""
    if path is not None:
        p = Path(path).expanduser().resolve()
        if not p.is_dir():
            raise FileNotFoundError(f"{p} is not a folder")
        return p
    for p in (Path(__file__).resolve().parent.parent / "notebooks", Path.cwd() / "notebooks"):
        if p.is_dir():
            return p
    raise FileNotFoundError("cannot find the course's notebooks/ folder: this course_lib is not an editable "
                            f"install of a checkout. Clone {COURSE_REPO}, `pip install -e .` there, "
                            "or pass the folder: course-lab path/to/notebooks")


def free_port(preferred: int = 8888, tries: int = 100) -> int:
    """The first port from `preferred` that nobody listens on (0: any free port)."""
    for port in ([0] if preferred == 0 else range(preferred, preferred + tries)):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise OSError(f"no free port in {preferred}..{preferred + tries - 1}; pass --port")


@contextlib.contextmanager
def kernel_env(env: dict | None = None, backend: str | None = None):
    """Yield a copy of `env` (default os.environ) whose JUPYTER_PATH starts with a folder holding
    a ``python3`` kernelspec for sys.executable; `backend='sim'` sets COURSE_LIB_BACKEND for kernels."""
    env = dict(os.environ if env is None else env)
    tmp = tempfile.mkdtemp(prefix="course-lab-")
    try:
        spec = Path(tmp, "kernels", "python3")
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (ipykernel)", "language": "python",
            "metadata": {"debugger": True}}, indent=1))
        env["JUPYTER_PATH"] = os.pathsep.join(p for p in (tmp, env.get("JUPYTER_PATH", "")) if p)
        if backend:
            env["COURSE_LIB_BACKEND"] = backend
        yield env
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def describe_backend(env: dict) -> str:
    """What the kernels will use, in words (imports CuPy: about a second)."""
    if env.get("COURSE_LIB_BACKEND", "").lower() in ("sim", "cpu", "simulator"):
        return "CPU simulator (COURSE_LIB_BACKEND=sim): metrics are exact; times are not measured"
    try:
        from . import nvrtc
        if nvrtc.gpu_available():
            return f"GPU: {nvrtc.device_info().name} (kernels run on it; the simulator gives the metrics)"
    except Exception:       # a broken CUDA install must not stop the course from opening
        pass
    return "CPU simulator (no NVIDIA GPU found): metrics are exact; times are not measured"


# ---------------------------------------------------------------------------- the server

class Lab:
    """A JupyterLab server in its own process group. ``url`` opens `first` with the token."""

    def __init__(self, root, *, port=None, ip="127.0.0.1", token=None, first=FIRST_NOTEBOOK, backend=None,
                 extra_args=(), env=None, log=None, lab_config: dict | None = None):
        self.root = Path(root)
        self.ip, self.port = ip, port if port is not None else free_port()
        self.token = secrets.token_hex(24) if token is None else token
        self.first = first if first and (self.root / first).exists() else None
        self.backend, self.extra_args, self.base_env, self.log = backend, list(extra_args), env, log
        self.lab_config = lab_config or {}
        self.proc, self._env_cm = None, None

    @property
    def host(self) -> str:
        return "localhost" if self.ip in ("127.0.0.1", "localhost", "0.0.0.0", "") else self.ip

    def url(self, path: str | None = None) -> str:
        path = path if path is not None else (f"lab/tree/{self.first}" if self.first else "lab")
        sep = "&" if "?" in path else "?"
        return f"http://{self.host}:{self.port}/{path}" + (f"{sep}token={self.token}" if self.token else "")

    def command(self) -> list:
        cfg = [f"--LabApp.{k}={v}" for k, v in self.lab_config.items()]
        return [sys.executable, "-m", "jupyterlab", "--no-browser", f"--ServerApp.root_dir={self.root}",
                f"--ServerApp.ip={self.ip}", f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={self.token}",
                # no "check for updates" or news pop-ups in a classroom (and no calls to the internet)
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.news_url=None",
                # containers (Docker, CI, some hubs) often run as root, which JupyterLab refuses by default
                *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
                *cfg, *self.extra_args]

    def start(self, timeout: float = 120) -> "Lab":
        """Start and wait until the server answers; raises RuntimeError with its output if it dies."""
        self._env_cm = kernel_env(self.base_env, self.backend)
        env = self._env_cm.__enter__()
        popen = dict(env=env, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT if self.log else None)
        if os.name == "nt":
            popen["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
        else:
            popen["start_new_session"] = True      # Ctrl-C reaches us, and we stop it cleanly
        self.proc = subprocess.Popen(self.command(), **popen)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._close_env()
                raise RuntimeError(f"JupyterLab exited with code {self.proc.returncode} while starting"
                                   + (" (its messages are above)" if self.log is None else ""))
            if self.ready():
                return self
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"JupyterLab did not answer on port {self.port} within {timeout:.0f} s")

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(self.url("api/status"), timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def stop(self, grace: float = 10) -> None:
        """Stop the server and its kernels (SIGTERM: jupyter_server shuts kernels down), then force."""
        if self.proc is not None and self.proc.poll() is None:
            kids = _descendants(self.proc.pid)
            if os.name == "nt":
                self.proc.terminate()
            else:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL) if os.name != "nt" else self.proc.kill()
                self.proc.wait(5)
            for k in kids:      # kernels live in sessions of their own
                with contextlib.suppress(Exception):
                    k.kill()
        self._close_env()

    def _close_env(self):
        if self._env_cm is not None:
            self._env_cm.__exit__(None, None, None)
            self._env_cm = None

    def __enter__(self):
        return self.start() if self.proc is None else self

    def __exit__(self, *exc):
        self.stop()


def _descendants(pid: int) -> list:
    try:
        import psutil      # a dependency of ipykernel, so always here with JupyterLab
        return psutil.Process(pid).children(recursive=True)
    except Exception:
        return []


# ---------------------------------------------------------------------------- the command

def _can_open_browser() -> bool:
    # with no display, webbrowser falls back to a text browser that takes over the terminal
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                                                 or os.environ.get("BROWSER")):
        return False
    return True


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="course-lab", description="Open the transpose course in JupyterLab.",
                                 epilog="Other options go to `jupyter lab` as they are.")
    ap.add_argument("notebooks", nargs="?", help="folder of notebooks (default: the course's notebooks/)")
    ap.add_argument("--port", type=int, default=None, help="port (default: the first free one from 8888)")
    ap.add_argument("--ip", default="127.0.0.1", help="address to listen on (0.0.0.0 for a remote machine)")
    ap.add_argument("--no-browser", action="store_true", help="only print the URL")
    ap.add_argument("--sim", action="store_true", help="use the CPU simulator even when there is a GPU")
    ap.add_argument("--token", default=None, help="the access token (default: a random one)")
    args, extra = ap.parse_known_args(argv)
    try:
        root = notebooks_dir(args.notebooks)
    except FileNotFoundError as exc:
        print(f"course-lab: {exc}", file=sys.stderr)
        return 2
    port = args.port if args.port is not None else free_port()
    lab = Lab(root, port=port, ip=args.ip, token=args.token, backend="sim" if args.sim else None,
              extra_args=["--log-level=WARN", *extra])
    # the server runs in a session of its own: a SIGTERM/SIGHUP to us must stop it too
    for sig in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)):
        if sig is not None:
            signal.signal(sig, _raise_interrupt)
    try:
        lab.start()
    except RuntimeError as exc:
        print(f"course-lab: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        lab.stop()
        return 0
    try:
        env = dict(os.environ, **({"COURSE_LIB_BACKEND": "sim"} if args.sim else {}))
        print("\nTranspose course: JupyterLab is running", flush=True)
        print(f"  notebooks: {root}")
        print(f"  kernel:    {sys.executable} (Python {sys.version.split()[0]})")
        print(f"  backend:   {describe_backend(env)}")
        print(f"  open:      {lab.url()}")
        print("Press Ctrl-C to stop JupyterLab and its kernels.\n", flush=True)
        if not args.no_browser and _can_open_browser():
            import webbrowser
            webbrowser.open(lab.url())
        while lab.proc.poll() is None:
            time.sleep(0.5)
        return lab.proc.returncode or 0
    except KeyboardInterrupt:
        print("\nstopping JupyterLab...", flush=True)
        return 0
    finally:
        lab.stop()


if __name__ == "__main__":
    sys.exit(main())
