"""Open the course: ``course-lab`` starts JupyterLab on the student's own copy of the notebooks.

    course-lab                          # my-notebooks/ (copied from notebooks/ on the first start)
    course-lab --update 05_bank_conflicts.ipynb     # take the course's newer version of one (or: all)
    course-lab --container              # macOS: the same, in a Linux container (lab.student.container)
    course-lab path/to/folder           # serve any folder of notebooks as it is (no copy)
    course-lab --no-browser --port 9000 --ip 0.0.0.0 --sim

It prints one short block with the URL (token included), the kernel's Python and the backend
(the GPU CuPy sees, or the CPU simulator), then waits; Ctrl-C stops JupyterLab and its kernels.
Options it does not know go to ``jupyter lab`` unchanged (``--ServerApp.base_url=/x/``...).

Why a wrapper and not plain ``jupyter lab``: the student's edits live in ``my-notebooks/`` (ignored
by git), so ``git pull`` never conflicts with them (lab.student.workcopy); the kernel is *this*
Python even when the user's own Jupyter folders name another; JupyterLab's news pop-up is off; a
server on a network address without a token is refused (lab.student.server). On a machine that
cannot compile CUDA C++ (macOS: NVRTC has no build there) it says so and points at ``--container``.

Where the course lives and the Colab pieces every notebook starts with are course_lib.lab.course's. It does not install anything and never changes notebooks/.
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import secrets
import signal
import sys
import time
from pathlib import Path

from .. import folders
from ..course import FIRST_NOTEBOOK, notebooks_dir
from .server import Lab, check_ip, exposure, free_port, lab_env  # noqa: F401  (Lab, free_port: re-exported)

kernel_env = lab_env        # the name the instructor tools and older code use

def describe_backend(env: dict) -> str:
    """What the kernels will use, in words (imports CuPy: about a second)."""
    if env.get("COURSE_LIB_BACKEND", "").lower() in ("sim", "cpu", "simulator"):
        return "CPU simulator (COURSE_LIB_BACKEND=sim): metrics are exact; times are not measured"
    try:
        from ... import gpu
        if gpu.available():
            return f"GPU: {gpu.info().name} (kernels run on it; the simulator gives the metrics)"
    except Exception:       # a broken CUDA install must not stop the course from opening
        pass
    return "CPU simulator (no NVIDIA GPU found): metrics are exact; times are not measured"


def compiler_problem() -> str | None:
    """None when NVRTC loads; else the CompileError's text (what is wrong and what to do)."""
    from ...compile import nvrtc
    from ...errors import CompileError
    try:
        nvrtc.nvrtc_version()
        return None
    except CompileError as exc:
        return str(exc)


# ---------------------------------------------------------------------------- the command

TOKEN_OPTIONS = ("--IdentityProvider.token=", "--ServerApp.token=", "--NotebookApp.token=")


def _can_open_browser() -> bool:
    # with no display, webbrowser falls back to a text browser that takes over the terminal
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                                                 or os.environ.get("BROWSER")):
        return False
    return True


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="course-lab", description="Open the transpose course in JupyterLab.",
                                 epilog="JupyterLab settings go through as they are, in the form "
                                        "--ServerApp.name=value (or --LabApp., --ContentsManager., ...).")
    ap.add_argument("notebooks", nargs="?", help="serve this folder as it is (default: your copy, my-notebooks/)")
    ap.add_argument("--port", type=_port, default=None, help="port (default: the first free one from 8888)")
    ap.add_argument("--ip", default="127.0.0.1", help="address to listen on (0.0.0.0 for a remote machine)")
    ap.add_argument("--no-browser", action="store_true", help="only print the URL")
    ap.add_argument("--sim", action="store_true", help="use the CPU simulator even when there is a GPU")
    ap.add_argument("--token", default=None, help="the access token (default: a random one)")
    ap.add_argument("--allow-no-token", action="store_true",
                    help="allow --token '' on a network address (anyone who reaches it runs code as you)")
    ap.add_argument("--work", default=None, metavar="DIR",
                    help="where your copy of the notebooks lives (default: my-notebooks/ beside notebooks/)")
    ap.add_argument("--update", nargs="+", metavar="NOTEBOOK",
                    help="replace your copy of these notebooks (or: all) by the course's, keeping yours beside it")
    ap.add_argument("--container", action="store_true",
                    help="run the course in a Linux container (macOS: NVRTC has no build there; needs Docker)")
    ap.add_argument("--rebuild", action="store_true", help="with --container: rebuild the image first")
    ap.add_argument("--without-compiler", action="store_true",
                    help="open the notebooks even though this machine cannot compile CUDA C++")
    ap.add_argument("--write-jupyter-config", metavar="DIR",
                    help="write course-lab's JupyterLab settings and save hook into a Jupyter config folder "
                         "(a JupyterHub's <prefix>/etc/jupyter), then exit")
    return ap


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1 to 65535)") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port: ports run from 1 to 65535 (8888 is usual)")
    return port


def _jupyter_settings(extra: list, ap: argparse.ArgumentParser) -> list:
    """What passes on to JupyterLab: its settings (--Class.trait=value), nothing else. An option neither
    course-lab nor that form knows is refused here, instead of JupyterLab printing its whole usage."""
    for a in extra:
        if not re.fullmatch(r"--[A-Z]\w*(\.\w+)+=.*", a):
            close = difflib.get_close_matches(a.split("=")[0], [o for act in ap._actions for o in act.option_strings],
                                              n=1)
            ap.error(f"unknown option {a!r}" + (f" (did you mean {close[0]}?)" if close else "")
                     + "; JupyterLab settings go as --ServerApp.name=value")
    return extra


def _token(args, extra) -> tuple[str | None, list]:
    """The token from --token or a Jupyter option for it (which then is not passed on twice)."""
    token, rest = args.token, []
    for a in extra:
        if a.startswith(TOKEN_OPTIONS):
            token = a.split("=", 1)[1]
        else:
            rest.append(a)
    return token, rest


def _folder(args) -> Path:
    """The folder to serve: the one named, or the student's copy, synced (and updated) first."""
    from .workcopy import WorkCopy
    if args.notebooks is not None:
        return notebooks_dir(args.notebooks)
    work = WorkCopy(notebooks_dir(), folders.writable("--work", args.work) if args.work else None)
    report = work.take(args.update) if args.update else work.sync()
    print(f"Your notebooks: {work.folder}\n  (yours to edit; the course's originals are in {work.upstream}, "
          "which `git pull` updates)" + (f"\n{report}" if str(report) else ""), flush=True)
    return work.folder


def main(argv=None) -> int:
    ap = parser()
    args, extra = ap.parse_known_args(argv)
    if args.write_jupyter_config:
        from .server import write_config
        try:
            for path in write_config(folders.writable("--write-jupyter-config", args.write_jupyter_config)):
                print(f"wrote {path}")
        except (OSError, ValueError) as exc:
            print(f"course-lab: {exc}", file=sys.stderr)
            return 2
        return 0
    token, extra = _token(args, _jupyter_settings(extra, ap))
    token = secrets.token_hex(24) if token is None else token
    try:
        warning = exposure(args.ip, token, args.allow_no_token)
        check_ip(args.ip)
        if args.container and args.notebooks is not None:
            raise FileNotFoundError("--container serves your copy of the course (my-notebooks/, or --work DIR); "
                                    "leave the folder out")
        served = _folder(args)
    except (PermissionError, FileNotFoundError, ValueError) as exc:
        print(f"course-lab: {exc}", file=sys.stderr)
        return 2
    if warning:
        print(warning, file=sys.stderr, flush=True)
    first = FIRST_NOTEBOOK if (served / FIRST_NOTEBOOK).exists() else None
    port = args.port if args.port is not None else free_port()
    url = f"http://localhost:{port}/lab" + (f"/tree/{first}" if first else "") + (f"?token={token}" if token else "")
    want_browser = not args.no_browser and _can_open_browser()
    if args.container:
        from .container import serve_from_course_lab
        return serve_from_course_lab(args, extra, notebooks_dir(), served, port, token, url, want_browser)
    problem = None if args.without_compiler else compiler_problem()
    if problem:
        print(f"course-lab: {problem}\n(to open the notebooks anyway, without compiling anything: "
              "course-lab --without-compiler)", file=sys.stderr)
        return 2
    lab = Lab(served, port=port, ip=args.ip, token=token, backend="sim" if args.sim else None, first=first,
              extra_args=["--log-level=WARN", *extra], allow_no_token=args.allow_no_token)
    return _serve(lab, args, served, warning, want_browser)


def _serve(lab, args, served, warning, want_browser) -> int:
    """Start JupyterLab, say where it is, and keep it until Ctrl-C or it stops; it is stopped in any case."""
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
        print(f"  notebooks: {served}")
        print(f"  kernel:    {sys.executable} (Python {sys.version.split()[0]})")
        print(f"  backend:   {describe_backend(env)}")
        print(f"  open:      {lab.url()}")
        print("Press Ctrl-C to stop JupyterLab and its kernels.\n", flush=True)
        if warning:
            print(warning, file=sys.stderr, flush=True)
        if want_browser:
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
