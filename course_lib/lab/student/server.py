"""A JupyterLab server for the course: this Python as the kernel, no pop-ups, never open by accident.

    with Lab(folder, port=free_port(), backend="sim") as lab:     # started; stopped on exit
        print(lab.url())                                          # .../lab/tree/00_start_here.ipynb?token=...

:class:`Lab` runs ``python -m jupyterlab`` in a process group of its own and stops it, kernels
included. :func:`lab_env` gives it what makes the course look and behave the same on every
machine, in temporary Jupyter folders put first on the search paths (the user's own settings
still win where they set something):

- a ``python3`` kernelspec for *this* interpreter, because one in the user's Jupyter folders (another
  Python, without course_lib) would otherwise win; its display name is the one JupyterLab and
  ipykernel write, "Python 3 (ipykernel)", so opening a stored notebook changes nothing in it;
- JupyterLab's news question and update check turned off (they cover the first lines of every
  notebook in a classroom), as default settings.

:meth:`Lab.command` also has the server save notebooks through course_lib.lab.stored.save_hook: plotly's
renderer adds a base64 PNG to every chart it draws, and the browser rewrites 1.0 as 1, so without it
merely opening a notebook rewrote the file.

:func:`exposure` decides whether an address/token pair may serve at all: a server without a token
on an address other than this machine's runs anyone's code as this user. This module does not
parse the command line or copy notebooks (course_lab, workcopy).
:func:`write_config` puts the same settings and save hook into any Jupyter config folder: a
JupyterHub's, where students do not start course-lab (``course-lab --write-jupyter-config DIR``).
"""
from __future__ import annotations

import contextlib
import ipaddress
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

from ..stored import KERNELSPEC

QUIET_SETTINGS = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}
SAVE_HOOK = "course_lib.lab.stored.save_hook"


def write_config(folder) -> list[Path]:
    """Write into a Jupyter config folder (one on JUPYTER_CONFIG_PATH, e.g. a hub's <prefix>/etc/jupyter)
    what course-lab gives its own server: the quiet default settings and the save hook. Returns the files."""
    folder = Path(folder)
    files = {folder / "labconfig" / "default_setting_overrides.json": QUIET_SETTINGS,
             # a .d folder would hold only server extensions: the hook goes into the file itself
             folder / "jupyter_server_config.json": {"ContentsManager": {"pre_save_hook": SAVE_HOOK}}}
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            old = json.loads(path.read_text())      # keep what the hub configured there
        except (OSError, ValueError):
            old = {}
        for section, values in data.items():
            old.setdefault(section, {}).update(values)
        path.write_text(json.dumps(old, indent=1) + "\n")
    return list(files)


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


def is_local(ip: str) -> bool:
    """Whether `ip` is reachable from this machine only (a loopback address or name)."""
    if ip in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(ip.strip("[]")).is_loopback
    except ValueError:
        return False        # '', '*', 0.0.0.0, ::, a host name: other machines may reach it


def check_ip(ip: str) -> None:
    """Raise ValueError (what, and what to use) unless this machine can listen on `ip`: JupyterLab would
    otherwise fail while starting, with a socket error among its messages."""
    if ip in ("", "*"):
        return
    try:
        infos = socket.getaddrinfo(ip.strip("[]"), 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, _, _, _, address = infos[0]
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.bind(address)
    except (OSError, UnicodeError) as exc:
        why = "not an address or host name" if isinstance(exc, (socket.gaierror, UnicodeError)) else \
            f"not an address of this machine ({exc.strerror or exc})"
        raise ValueError(f"cannot listen on --ip {ip}: {why}. Use --ip 127.0.0.1 (this machine only, the "
                         "default) or --ip 0.0.0.0 (every address of this machine, with a token)") from None


def exposure(ip: str, token: str, allow_no_token: bool) -> str | None:
    """None when serving is safe; a loud warning when it is not but the user said so; raises
    PermissionError (with what to do) when there is no token on a network address."""
    if token or is_local(ip):
        return None
    where = "every address of this machine" if ip in ("", "*", "0.0.0.0", "::") else ip
    if not allow_no_token:
        raise PermissionError(f"refusing to serve JupyterLab on {where} without a token: anyone who can reach this "
                              "machine could run any command as you. Leave --token out (a random one is made "
                              "and printed), or serve on 127.0.0.1 and use `ssh -L`; if this network is yours "
                              "alone, add --allow-no-token.")
    bar = "!" * 78
    return (f"{bar}\n!!  WARNING: JupyterLab serves on {where} WITHOUT A TOKEN (--allow-no-token).\n"
            "!!  Anyone who can reach this port can run any command on this machine as you.\n"
            f"!!  Use this only on a network that is yours alone.\n{bar}")


@contextlib.contextmanager
def lab_env(env: dict | None = None, backend: str | None = None):
    """Yield a copy of `env` (default os.environ) whose JUPYTER_PATH starts with a folder holding the
    ``python3`` kernelspec of sys.executable and whose JUPYTER_CONFIG_PATH starts with one holding
    :func:`write_config`'s files; `backend='sim'` sets COURSE_LIB_BACKEND for the kernels."""
    env = dict(os.environ if env is None else env)
    tmp = tempfile.mkdtemp(prefix="course-lab-")
    try:
        spec = Path(tmp, "data", "kernels", "python3")
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": KERNELSPEC["display_name"], "language": "python",
            "metadata": {"debugger": True}}, indent=1))
        write_config(Path(tmp, "config"))
        for var, folder in (("JUPYTER_PATH", "data"), ("JUPYTER_CONFIG_PATH", "config")):
            env[var] = os.pathsep.join(p for p in (str(Path(tmp, folder)), env.get(var, "")) if p)
        if backend:
            env["COURSE_LIB_BACKEND"] = backend
        yield env
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class Lab:
    """A JupyterLab server in its own process group. ``url`` opens `first` with the token."""

    def __init__(self, root, *, port=None, ip="127.0.0.1", token=None, first="00_start_here.ipynb", backend=None,
                 extra_args=(), env=None, log=None, lab_config: dict | None = None, allow_no_token=False):
        self.root = Path(root)
        self.ip, self.port = ip, port if port is not None else free_port()
        self.token = secrets.token_hex(24) if token is None else token
        self.warning = exposure(self.ip, self.token, allow_no_token)
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
                # no calls to the internet for news or updates (the pop-ups are off in lab_env)
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.news_url=None",
                # no PNG snapshots of charts in saved notebooks; opening and saving one changes nothing
                f"--ContentsManager.pre_save_hook={SAVE_HOOK}",
                # containers (Docker, CI, some hubs) often run as root, which JupyterLab refuses by default
                *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
                *cfg, *self.extra_args]

    def start(self, timeout: float = 120) -> "Lab":
        """Start and wait until the server answers; raises RuntimeError with its output if it dies."""
        self._env_cm = lab_env(self.base_env, self.backend)
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
        import psutil  # a dependency of ipykernel, so always here with JupyterLab
        return psutil.Process(pid).children(recursive=True)
    except Exception:
        return []
