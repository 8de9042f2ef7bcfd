"""course-lab without a browser: the student's copy of the notebooks and its updates, who may reach
the server, JupyterLab's settings, the container command (with a stand-in engine), what a machine
without NVRTC is told, and a compile cache nobody else can read or plant files in."""
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib.lab.student import container, course_lab as lab, server as labserver
from course_lib.compile import platforms
from course_lib.lab.student.workcopy import RECORD, WorkCopy
from course_lib.lab.instructor import refresh

REPO = Path(__file__).resolve().parents[2]


def _notebook(path: Path, text: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(text)]
    nbformat.write(nb, path)
    return path


@pytest.fixture
def course(tmp_path):
    up = tmp_path / "checkout" / "notebooks"
    up.mkdir(parents=True)
    for name in ("00_start.ipynb", "01_next.ipynb"):
        _notebook(up / name, f"# {name} v1")
    (up / "conftest.py").write_text("# nbval's, not a student's\n")
    return up


# ------------------------------------------------------------------------------------ the student's copy

def test_first_start_copies_the_notebooks_beside_the_course_and_nothing_else(course):
    work = WorkCopy(course)
    report = work.sync()
    assert work.folder == course.parent / "my-notebooks"
    assert report.added == ["00_start.ipynb", "01_next.ipynb"] and not report.newer
    assert sorted(p.name for p in work.folder.iterdir()) == [RECORD, "00_start.ipynb", "01_next.ipynb"]
    assert (work.folder / "00_start.ipynb").read_bytes() == (course / "00_start.ipynb").read_bytes()
    assert str(WorkCopy(course).sync()) == ""          # a second start: nothing to say


def test_later_starts_add_new_notebooks_and_never_overwrite_one(course):
    work = WorkCopy(course)
    work.sync()
    mine = work.folder / "00_start.ipynb"
    _notebook(mine, "# my answers")                             # the student's edits
    _notebook(course / "00_start.ipynb", "# 00 v2")           # git pull: both changed
    _notebook(course / "01_next.ipynb", "# 01 v2")            # changed, the student's copy untouched
    _notebook(course / "02_new.ipynb", "# 02")                # a new notebook
    report = work.sync()
    assert report.added == ["02_new.ipynb"]
    assert report.newer == [("00_start.ipynb", True), ("01_next.ipynb", False)]
    assert "# my answers" in mine.read_text() and "v1" in (work.folder / "01_next.ipynb").read_text()
    text = str(report)
    assert "course-lab --update 00_start.ipynb 01_next.ipynb" in text and "(you have not changed yours)" in text
    assert work.sync().newer == report.newer          # said again until taken, still nothing overwritten


def test_update_keeps_the_students_copy_beside_the_new_one(course):
    work = WorkCopy(course)
    work.sync()
    _notebook(work.folder / "00_start.ipynb", "# my answers")
    _notebook(course / "00_start.ipynb", "# 00 v2")
    _notebook(course / "01_next.ipynb", "# 01 v2")
    report = work.take(["00_start"])
    assert "v2" in (work.folder / "00_start.ipynb").read_text()
    (kept,) = [p for p in work.folder.glob("00_start.mine-*.ipynb")]
    assert "# my answers" in kept.read_text() and report.taken == [("00_start.ipynb", kept.name)]
    assert report.newer == [("01_next.ipynb", False)]
    assert not work.take(["all"]).newer and "v2" in (work.folder / "01_next.ipynb").read_text()
    assert not list(work.folder.glob("01_next.mine-*"))       # identical to what it had: nothing to keep
    assert str(work.sync()) == ""
    with pytest.raises(ValueError, match="no notebook 99_x.ipynb"):
        work.take(["99_x"])


def test_notebooks_link_and_run_the_same_from_the_students_copy():
    """Every relative link in the course's notebooks resolves from my-notebooks/ as from notebooks/
    (same depth in the checkout); the library finds kernels/ and results/ from its own place."""
    import re
    from course_lib.kernel import module
    from course_lib.lessons import measured
    up = REPO / "notebooks"
    work = REPO / "my-notebooks"          # never created here: paths only
    for path in sorted(up.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            for target in re.findall(r"\]\(((?!https?:|#|mailto:)[^)\s]+)\)", cell.source if cell.cell_type == "markdown" else ""):
                target = target.split("#")[0]
                assert (up / target).exists() == (work / target).resolve().exists(), (path.name, target)
    assert module.KERNELS_DIR == REPO / "kernels" and measured.RESULTS == REPO / "benchmarks" / "results"


def test_a_notebook_runs_from_the_students_copy(tmp_path):
    """Notebook 00 copied by WorkCopy into a folder elsewhere runs top to bottom there (its kernel's
    working directory), course kernels and %%cuda cells included."""
    from course_lib.lab.instructor import cli
    if not (REPO / "notebooks" / "00_start_here.ipynb").exists():
        pytest.skip("no notebook 00")
    work = WorkCopy(REPO / "notebooks", tmp_path / "my-notebooks")
    assert "00_start_here.ipynb" in work.sync().added
    ok, msg = refresh.refresh_one(work.folder / "00_start_here.ipynb", timeout=300)
    assert ok, msg


# ------------------------------------------------------------------------------------ who may reach it

@pytest.mark.parametrize("ip", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_an_empty_token_is_fine_on_this_machine_only(ip):
    assert labserver.exposure(ip, "", False) is None


@pytest.mark.parametrize("ip", ["0.0.0.0", "", "::", "192.168.1.5", "gpu-box.example.org"])
def test_an_empty_token_on_a_network_address_is_refused_unless_allowed_and_then_loud(ip):
    with pytest.raises(PermissionError, match="--allow-no-token"):
        labserver.exposure(ip, "", False)
    warning = labserver.exposure(ip, "", True)
    assert "WITHOUT A TOKEN" in warning and "any command" in warning
    assert labserver.exposure(ip, "s3cret", False) is None


def test_course_lab_refuses_before_starting_anything(tmp_path, capsys):
    assert lab.main(["--ip", "0.0.0.0", "--token", "", "--work", str(tmp_path / "w")]) == 2
    assert "refusing" in capsys.readouterr().err and not (tmp_path / "w").exists()
    assert lab.main(["--ip", "0.0.0.0", "--IdentityProvider.token=", str(tmp_path)]) == 2    # Jupyter's spelling


def test_the_server_gets_this_pythons_kernel_no_pop_ups_and_the_save_hook():
    with labserver.lab_env(env={}) as env:
        data, config = (Path(env[v].split(os.pathsep)[0]) for v in ("JUPYTER_PATH", "JUPYTER_CONFIG_PATH"))
        spec = json.loads((data / "kernels" / "python3" / "kernel.json").read_text())
        assert spec["argv"][0] == sys.executable and spec["display_name"] == "Python 3 (ipykernel)"
        quiet = json.loads((config / "labconfig" / "default_setting_overrides.json").read_text())
        assert quiet["@jupyterlab/apputils-extension:notification"] == {"fetchNews": "false", "checkForUpdates": False}
    assert not data.exists()
    cmd = labserver.Lab(REPO / "notebooks", port=1).command()
    assert "--ContentsManager.pre_save_hook=course_lib.lab.stored.save_hook" in cmd and "--LabApp.news_url=None" in cmd


# ------------------------------------------------------------------------------------ --container

@pytest.fixture
def fake_engine(tmp_path, monkeypatch):
    """A `docker` on PATH that logs its arguments; the image is missing until built."""
    log = tmp_path / "engine.log"
    exe = tmp_path / "bin" / "docker"
    exe.parent.mkdir()
    exe.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\n"
                   f"case \"$1 $2\" in 'image inspect') grep -q '^build' {log}; exit $? ;; esac\nexit 0\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{exe.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("COURSE_CONTAINER_ENGINE", raising=False)
    return log


def test_container_builds_once_then_runs_the_course_with_the_checkout_mounted(fake_engine, tmp_path, capsys):
    if not (REPO / "Dockerfile").is_file():
        pytest.skip("no Dockerfile in this checkout")
    work = tmp_path / "w"
    args = ["--container", "--no-browser", "--port", "9123", "--token", "T0K", "--work", str(work)]
    assert lab.main(args) == 0
    assert lab.main(args) == 0
    calls = fake_engine.read_text().splitlines()
    tag = container.image_tag(REPO)
    assert [c.split()[0] for c in calls] == ["image", "build", "run", "image", "run"]
    assert calls[1] == f"build -t {tag} -f {REPO / 'Dockerfile'} {REPO}"
    run = calls[2].split()
    assert run[run.index("-p") + 1] == "127.0.0.1:9123:9123"          # this machine only
    mounts = [run[i + 1] for i, a in enumerate(run) if a == "-v"]
    assert mounts == [f"{REPO}:/course", f"{work}:/work"]                # --work outside the checkout: mounted too
    assert run[run.index("--user") + 1] == f"{os.getuid()}:{os.getgid()}"
    inner = run[run.index(tag) + 1:]
    assert inner[:4] == ["course-lab", "--no-browser", "--ip", "0.0.0.0"] and "/work" in inner
    assert inner[inner.index("--token") + 1] == "T0K" and inner[inner.index("--port") + 1] == "9123"
    assert (work / "00_start_here.ipynb").is_file()      # synced here, where `git pull` happens too
    assert "your notebooks stay on this machine" in capsys.readouterr().out


def test_container_paths_inside():
    assert container.inside(REPO, REPO / "my-notebooks") == ("/course/my-notebooks", [])
    assert container.inside(REPO, Path("/elsewhere/nb")) == ("/work", ["-v", "/elsewhere/nb:/work"])
    cmd = container.run_command("podman", REPO, "t", port=1, token="x", uid=5, gid=6, publish="::1")
    assert "--userns=keep-id" in cmd and cmd[cmd.index("-p") + 1] == "[::1]:1:1"


def test_without_an_engine_the_user_is_told_what_to_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("COURSE_CONTAINER_ENGINE", raising=False)
    with pytest.raises(container.ContainerError, match="Docker Desktop.*Colima.*Podman"):
        container.engine()


# ------------------------------------------------------------------------------------ no NVRTC

def test_the_cuda_wheels_platforms_and_the_message_for_a_mac():
    assert platforms.has_cuda_wheels("linux", "x86_64") and platforms.has_cuda_wheels("win32", "AMD64")
    assert not platforms.has_cuda_wheels("darwin", "arm64") and not platforms.has_cuda_wheels("darwin", "x86_64")
    message, hint = platforms.compiler_missing("no module named cupy", "darwin", "arm64")
    assert "macOS (arm64)" in message and "course-lab --container" in hint and "Colab" in hint
    message, hint = platforms.compiler_missing("libnvrtc.so.12: cannot open", "linux", "x86_64")
    assert "libnvrtc.so.12" in message and 'pip install -e ".[lab]"' in hint


BLOCK_NVRTC = ("import sys\nfor m in ('cupy', 'cupy_backends', 'cupyx'): sys.modules[m] = None\n"
               "import course_lib.compile.nvrtc_lib as n\nn._candidates = lambda major: iter(())\n"
               "import course_lib.compile.platforms as p\n")


@pytest.mark.parametrize("cuda_wheels", [True, False], ids=["broken-linux-install", "mac"])
def test_without_nvrtc_a_kernel_gets_one_clear_error_and_course_lab_says_so_first(cuda_wheels, tmp_path):
    pretend = "" if cuda_wheels else "p.CUDA_WHEEL_PLATFORMS = frozenset()\n"
    probe = BLOCK_NVRTC + pretend + (
        "import course_lib as cl\n"
        "try:\n    cl.Simulator().run('tile', shape=(32, 32))\n"
        "except cl.CompileError as e:\n    print('ERROR', e, 'END', flush=True)\n"
        "import course_lib.lab.student.course_lab as L\nraise SystemExit(L.main(['--no-browser', '--work', sys.argv[1]]))\n")
    r = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "w")], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, COURSE_LIB_CACHE=str(tmp_path / "cache")))
    assert r.returncode == 2, r.stdout + r.stderr
    error = r.stdout.split("ERROR", 1)[1].split("END", 1)[0]
    assert error.count("\n") <= 2 and "hint:" in error and "Traceback" not in r.stdout + r.stderr
    assert ("course-lab --container" in error) != cuda_wheels and ("pip install" in error) == cuda_wheels
    assert "course-lab --without-compiler" in r.stderr


# ------------------------------------------------------------------------------------ a hub's own JupyterLab

def test_a_plain_jupyterlab_with_the_written_config_is_quiet_and_saves_through_the_hook(tmp_path):
    """What INSTRUCTORS.md has a hub do (course-lab --write-jupyter-config into its config folder):
    a JupyterLab started without course-lab then has the news question off and drops plotly's
    snapshots on save."""
    import secrets
    import time
    import urllib.request
    config = tmp_path / "etc-jupyter"
    config.mkdir()
    (config / "jupyter_server_config.json").write_text('{"ServerApp": {"shutdown_no_activity_timeout": 3600}}')
    assert lab.main(["--write-jupyter-config", str(config)]) == 0
    written = json.loads((config / "jupyter_server_config.json").read_text())
    assert written["ServerApp"] == {"shutdown_no_activity_timeout": 3600}        # the hub's own settings stay
    root = tmp_path / "root"
    root.mkdir()
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("fig")
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        "application/vnd.plotly.v1+json": {"data": [], "layout": {}}, "image/png": "iVBORw0KGgo=", "text/plain": "Figure"})]
    nb.cells = [cell]
    port, token = labserver.free_port(0), secrets.token_hex(8)
    env = dict(os.environ, JUPYTER_CONFIG_PATH=str(config), JUPYTER_CONFIG_DIR=str(tmp_path / "c"),
               JUPYTER_DATA_DIR=str(tmp_path / "d"), JUPYTER_RUNTIME_DIR=str(tmp_path / "r"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "s"), JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "w"))
    proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
                             f"--ServerApp.root_dir={root}", f"--IdentityProvider.token={token}", "--allow-root",
                             "--ServerApp.port_retries=0"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)

    def api(path, method="GET", body=None):
        req = urllib.request.Request(f"http://127.0.0.1:{port}/{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read() or b"null")
    try:
        for _ in range(240):
            try:
                api("api/status")
                break
            except OSError:
                time.sleep(0.25)
        schema = api("lab/api/settings/@jupyterlab/apputils-extension:notification")["schema"]["properties"]
        assert schema["fetchNews"]["default"] == "false" and schema["checkForUpdates"]["default"] is False
        api("api/contents/nb.ipynb", "PUT", {"type": "notebook", "format": "json", "content": nb})
        saved = json.loads((root / "nb.ipynb").read_text())
        assert "image/png" not in saved["cells"][0]["outputs"][0]["data"]
        assert "application/vnd.plotly.v1+json" in saved["cells"][0]["outputs"][0]["data"]
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(30)
