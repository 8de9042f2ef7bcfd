"""``course-lab --container``: the course in a Linux container, for machines NVRTC has no build for.

    course-lab --container             # builds the image once (a few minutes), then serves my-notebooks/
    course-lab --container --rebuild   # after the Dockerfile or the dependencies changed (also automatic)

NVIDIA builds its compiler library (NVRTC) for Linux and Windows only, so on macOS nothing compiles
natively (course_lib.platforms). The Dockerfile at the top of the checkout makes a Linux image with
the course's dependencies (linux/arm64 on Apple silicon: NVRTC and CuPy have aarch64 wheels); this
module builds it when missing and runs it with the checkout mounted at /course, so the notebooks a
student edits (``my-notebooks/``) and ``git pull`` stay on their own machine and the image never needs
rebuilding for a course update, only for a change of the Dockerfile or of the dependencies (the
image's tag is a hash of both). Inside, ``course-lab`` runs as usual on the same port, published on
127.0.0.1 only, with a token; Ctrl-C stops it. Docker, Podman and Colima's docker all work
(COURSE_CONTAINER_ENGINE=podman picks one). No GPU reaches the container: kernels run in the
simulator. This module builds command lines and runs the engine; nothing else.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

IMAGE = "transpose-course"
MOUNT = "/course"                      # where the checkout appears inside (the Dockerfile's COURSE)
WORK = "/work"                         # where a student's folder outside the checkout appears
ENGINES = ("docker", "podman")


class ContainerError(RuntimeError):
    """Something a user must do before the container can start (the message says what)."""


def engine(env=None) -> str:
    """The container engine's executable: COURSE_CONTAINER_ENGINE, else docker, else podman."""
    env = os.environ if env is None else env
    wanted = env.get("COURSE_CONTAINER_ENGINE")
    for name in ([wanted] if wanted else ENGINES):
        path = shutil.which(name)
        if path:
            return path
    raise ContainerError((f"COURSE_CONTAINER_ENGINE={wanted} is not on PATH" if wanted else
                          "no container engine found (docker or podman)") +
                         ". Install Docker Desktop (docs.docker.com/get-docker), or Colima (`brew install colima "
                         "docker && colima start`), or Podman, then run `course-lab --container` again.")


def image_tag(checkout: Path) -> str:
    """transpose-course:<hash of the Dockerfile and pyproject.toml>: a new tag when either changes."""
    h = hashlib.sha256()
    for name in ("Dockerfile", "pyproject.toml"):
        h.update((checkout / name).read_bytes())
    return f"{IMAGE}:{h.hexdigest()[:12]}"


def build_command(exe: str, checkout: Path, tag: str) -> list:
    return [exe, "build", "-t", tag, "-f", str(checkout / "Dockerfile"), str(checkout)]


def inside(checkout: Path, folder: Path) -> tuple[str, list]:
    """Where `folder` (the notebooks to serve) is inside the container, and the extra mount that
    puts it there when it is not in the checkout (course-lab --work elsewhere)."""
    folder = Path(folder).resolve()
    try:
        return f"{MOUNT}/{folder.relative_to(Path(checkout).resolve()).as_posix()}", []
    except ValueError:
        return WORK, ["-v", f"{folder}:{WORK}"]


def run_command(exe: str, checkout: Path, tag: str, *, port: int, token: str, lab_args=(), uid=None, gid=None,
                publish: str = "127.0.0.1", mounts=()) -> list:
    """`exe run` serving the course on publish:port (this machine only, by default) with `token`; the
    checkout is mounted at /course (and `mounts` added) and files are written as uid:gid (this user;
    podman: keep-id)."""
    podman = Path(exe).name.startswith("podman")
    publish = "127.0.0.1" if publish == "localhost" else (f"[{publish}]" if ":" in publish else publish)
    user = []
    if uid is not None:
        user = ["--userns=keep-id"] if podman else ["--user", f"{uid}:{gid}"]
    return [exe, "run", "--rm", "--init", "--name", f"{IMAGE}-{port}",
            "-p", f"{publish}:{port}:{port}", "-v", f"{checkout}:{MOUNT}", *mounts, "-w", MOUNT,
            "-e", "HOME=/tmp/home", "-e", "COURSE_LAB_IN_CONTAINER=1", *user,
            tag, "course-lab", "--no-browser", "--ip", "0.0.0.0", "--port", str(port), "--token", token, *lab_args]


def checkout_of(notebooks: Path) -> Path:
    """The checkout whose notebooks/ course-lab serves; it must hold the Dockerfile."""
    root = Path(notebooks).resolve().parent
    if not (root / "Dockerfile").is_file():
        raise ContainerError(f"{root} has no Dockerfile: --container needs a clone of the course "
                             "(git clone ... && cd transpose-course && course-lab --container)")
    return root


def start(notebooks: Path, served: Path, *, port: int, token: str, lab_args=(), rebuild=False, on_ready=None,
          publish: str = "127.0.0.1") -> int:
    """Build the image when needed, then serve the folder `served` (the student's copy of the course's
    `notebooks`) from it until Ctrl-C; `on_ready()` is called once the server answers. Returns the
    engine's exit code."""
    import time
    import urllib.request
    exe, root = engine(), checkout_of(notebooks)
    tag, name = image_tag(root), Path(exe).name
    have = subprocess.run([exe, "image", "inspect", tag], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0
    if rebuild or not have:
        print(f"course-lab: building the course's image {tag} with {name} (the first time takes a few minutes)",
              flush=True)
        if subprocess.run(build_command(exe, root, tag)).returncode != 0:
            raise ContainerError(f"`{name} build` failed (its messages are above); is the engine running "
                                 "(Docker Desktop open, or `colima start`)?")
    ids = dict(uid=os.getuid(), gid=os.getgid()) if hasattr(os, "getuid") else {}
    print(f"course-lab: starting the course in a container ({tag}); your notebooks stay on this machine, in "
          f"{served}", flush=True)
    folder, mounts = inside(root, served)
    proc = subprocess.Popen(run_command(exe, root, tag, port=port, token=token, lab_args=[folder, *lab_args],
                                        publish=publish, mounts=mounts, **ids))
    try:
        status = f"http://127.0.0.1:{port}/api/status?token={token}"
        while on_ready is not None and proc.poll() is None:
            try:
                with urllib.request.urlopen(status, timeout=2):
                    on_ready()
                    break
            except OSError:
                time.sleep(0.5)
        return proc.wait()
    except KeyboardInterrupt:       # the engine passes Ctrl-C on to the container; make sure it is gone
        subprocess.run([exe, "stop", f"{IMAGE}-{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        proc.wait()
        return 0


def serve_from_course_lab(args, extra, course, served, port, token, url, want_browser) -> int:
    """`course-lab --container`: the same course-lab, with JupyterLab in the container (`course`: the
    checkout's notebooks/, `served`: the student's copy)."""

    def ready():
        print(f"\nTranspose course (in a container): open {url}\nPress Ctrl-C to stop it.\n", flush=True)
        if want_browser:
            import webbrowser
            webbrowser.open(url)
    # inside, JupyterLab listens on every address of the container; what reaches it is the port the
    # engine publishes on --ip (this machine only, by default), checked like a server of our own above
    lab_args = [*(["--sim"] if args.sim else []), *(["--allow-no-token"] if not token else []), *extra]
    try:
        return start(course, served, port=port, token=token, lab_args=lab_args,
                               rebuild=args.rebuild, on_ready=ready, publish=args.ip)
    except ContainerError as exc:
        print(f"course-lab: {exc}", file=sys.stderr)
        return 2
