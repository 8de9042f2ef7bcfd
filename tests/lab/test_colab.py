"""Colab, reasoned about here, since Colab itself cannot run in CI:

- the install cell, run as IPython would (course_lib.colab.colab_commands): on a fresh runtime it
  clones once and pip-installs the clone; run again it does nothing; off Colab it does nothing;
- what pip adds there: the course's wheel resolved by pip itself against Colab's packages
  (tests/colab_packages.txt as installed distributions): nothing Colab has is replaced, its
  ipywidgets 7 above all;
- an explorer under ipywidgets 7.7.1 (Colab's) in a real kernel that believes it is on Colab:
  its charts reach the Output widget through the Output capture protocol (what Colab's front end
  renders) as Colab's plotly HTML, which loads plotly.js from a CDN, not as figure JSON (Colab shows
  none) and not into the cell's own outputs. nbclient plays the front end: it implements the same
  protocol and stores what each Output received.

Each test that needs PyPI (ipywidgets 7.7.1, the index for what Colab lacks) skips, saying so, without it.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.lab.instructor import colab
from course_lib.lab.student import course_lab as lab
from course_lib.lab import course

REPO = Path(__file__).resolve().parents[2]
COLAB = [line.split("==") for line in (Path(__file__).resolve().parent / "colab_packages.txt").read_text().splitlines()
         if line and not line.startswith("#")]


def _pip(*args, **kw):
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=600, **kw)


def test_the_install_cell_installs_once_and_only_on_colab():
    cell = course.colab_install_cell()
    fresh = colab.colab_commands(cell, on_colab=True, installed=False)
    assert fresh["error"] is None
    assert fresh["shell"] == [f"test -d {course.COLAB_CLONE_DIR} || git clone -q --depth 1 {course.COURSE_REPO} "
                              f"{course.COLAB_CLONE_DIR}"]
    assert fresh["magics"] == [("pip", f"install -q {course.COLAB_CLONE_DIR}")]
    for again in (colab.colab_commands(cell, on_colab=True, installed=True), colab.colab_commands(cell, on_colab=False)):
        assert again == dict(shell=[], magics=[], path_added=[], error=None)


@pytest.fixture(scope="module")
def course_wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    r = _pip("wheel", "-q", "--no-deps", "-w", str(out), str(REPO))
    assert r.returncode == 0, r.stderr[-2000:]
    return next(out.glob("course_lib-*.whl"))


def _fake_colab_site(folder: Path) -> Path:
    """Colab's packages as installed distributions (metadata only): what pip sees there."""
    for name, version in COLAB:
        info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        (info / "INSTALLER").write_text("pip\n")
        (info / "RECORD").write_text("")
    return folder


def test_on_colab_pip_adds_only_what_colab_lacks(course_wheel, tmp_path):
    """`%pip install /content/transpose-course` on Colab, resolved by pip: an interpreter that sees
    only pip and Colab's packages (python -S) and installs the course's wheel, dry run."""
    import pip
    site = _fake_colab_site(tmp_path / "colab-site")
    only_pip = tmp_path / "pip-only"
    only_pip.mkdir()
    (only_pip / "pip").symlink_to(Path(pip.__file__).parent)
    report = tmp_path / "report.json"
    r = subprocess.run([sys.executable, "-S", "-m", "pip", "install", "--dry-run", "-q", "--report", str(report),
                        str(course_wheel)], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(only_pip), str(site)]),
                                PIP_DISABLE_PIP_VERSION_CHECK="1"))
    if r.returncode != 0 and ("NewConnectionError" in r.stderr or "No matching distribution" in r.stderr):
        pytest.skip(f"pip could not reach an index for what Colab lacks: {r.stderr.strip()[-300:]}")
    assert r.returncode == 0, r.stderr[-3000:]
    added = {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}
    has = {name.lower() for name, _ in COLAB}
    assert "course-lib" in added
    replaced = sorted(set(added) & has)
    assert not replaced, f"installing the course on Colab would replace Colab's {replaced}: {added}"


@pytest.fixture(scope="module")
def ipywidgets7(tmp_path_factory):
    target = tmp_path_factory.mktemp("ipywidgets7")
    r = _pip("install", "-q", "--no-deps", "--target", str(target), "ipywidgets==7.7.1", "ipython_genutils")
    if r.returncode != 0:
        pytest.skip(f"cannot fetch ipywidgets 7.7.1 (Colab's) from PyPI: {r.stderr.strip()[-300:]}")
    return target


EXPLORER = '''\
import ipywidgets, numpy as np, plotly.graph_objects as go
import course_lib as cl
cl.draw.configure()
ex = cl.widgets.Explorer(
    compute=lambda n: np.arange(n) ** 2,
    figures=lambda ys, n: [go.Figure(go.Bar(y=ys), layout=dict(title=f"{n} bars — " + "a long title " * 8)),
                           cl.draw.table({})],
    controls=dict(n=[3, 5]))
display(ex)
ex.set(n=5)
print(ipywidgets.__version__, "|", __import__("plotly.io").io.renderers.default)
'''


def test_an_explorer_on_colab_with_ipywidgets_7_fills_its_output_with_colabs_plotly_html(ipywidgets7, tmp_path):
    nbclient = pytest.importorskip("nbclient")
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(EXPLORER)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ipywidgets7), os.environ.get("PYTHONPATH", "")]),
               COLAB_RELEASE_TAG="fake-for-tests", COURSE_LIB_BACKEND="sim")
    sent = []

    class FrontEnd(nbclient.NotebookClient):
        def process_message(self, msg, cell, cell_index):          # every message the kernel sends
            sent.append((msg["msg_type"], json.dumps(msg["content"])))
            return super().process_message(msg, cell, cell_index)
    with lab.kernel_env(env) as kenv:
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(kenv)       # the kernel inherits this process's environment
        try:
            # 60 s a cell (it takes about 3): nbclient sometimes notices a widget cell's reply only when the
            # cell's timeout runs out (jupyter/nbclient#312), which cost CI 300 s once in four runs
            FrontEnd(nb, timeout=60, kernel_name="python3").execute()
        finally:
            os.environ.clear()
            os.environ.update(saved)
    cell = nb.cells[0]
    printed = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    assert printed.split() == ["7.7.1", "|", "colab+course_text"], printed      # each chart, then its text
    html_out = [o["data"]["text/html"] for o in cell.outputs if "text/html" in o.get("data", {})]
    assert not [h for h in html_out if "plot.ly" in h or "Plotly" in h], "a chart leaked into the cell's outputs"
    # what the cell stores is the explorer's view and its text alternative, as under ipywidgets 8 (nbval compares
    # a Colab run of a notebook with outputs stored under 8: tests/lab/test_colab_venv.py)
    views = [o["data"] for o in cell.outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(views) == 1 and "Its view with n = 3" in views[0]["text/plain"] and len(html_out) == 1, cell.outputs
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    outputs = [m["state"].get("outputs", []) for m in state.values() if m["model_name"] == "OutputModel"]
    charts = [o for outs in outputs for o in outs if "<div" in json.dumps(o) and "plotly" in json.dumps(o)]
    assert len(charts) == 1, f"one chart, replaced on change; the Output areas hold {outputs}"
    html = charts[0]["data"]["text/html"]
    assert "cdn.plot.ly" in html and len(html) < 50_000, "Colab's renderer loads plotly.js from a CDN"
    assert "application/vnd.plotly.v1+json" not in charts[0]["data"]
    # it got there the way Colab's front end fills an Output: display messages sent while the Output
    # names the running cell's message (its msg_id), not outputs set as the widget's state
    assert any(t == "display_data" and "cdn.plot.ly" in c for t, c in sent)
    assert not any(t == "comm_msg" and '"outputs"' in c and "plot" in c for t, c in sent)
    assert any(t == "comm_msg" and '"msg_id": "' in c and '"msg_id": ""' not in c for t, c in sent)
    assert "5 bars" in html and "<br><sup>" in html.replace("\\u003c", "<").replace("\\u003e", ">"), \
        "the long title is broken into lines that fit"
