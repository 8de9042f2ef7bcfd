"""The course in a real JupyterLab, driven from a real browser (headless Chromium via Playwright).

Starts JupyterLab the way course-lab does (course_lib.labserver: this Python's kernelspec, the news
pop-up off; localhost, a free port, a token, fresh Jupyter folders) on two copies of notebooks/:

- ``repo/``, a git repository of the notebooks as committed: every notebook is opened (its kernel
  started), left for two autosave intervals, then saved explicitly; ``git status`` must stay clean
  (opening a notebook changes nothing, so `git pull` never meets a file the student did not touch),
  and no news or update pop-up may cover the page;
- ``run/``, where cells run: notebook 05 from the Run menu, then its padding slider moves and the
  chart and the metrics table below it must be redrawn; notebook 00 and its backend banner; and,
  at JupyterLab's default width (a 1280 x 720 window, file browser open), notebooks 00, 07 and 11,
  whose every chart title must be whole (not clipped by the chart or any box around it) and whose
  explorers must fill the width of the output area (notebook 00 runs once there, for both of its tests).

Screenshots, the page text of a failure and the server log go to tests/screenshots/ (or
$COURSE_SCREENSHOTS; their list is printed at the end, pass or fail, and .ci/run prints the folder).
Waits are on the kernel's and the page's state, never fixed sleeps, except the autosave interval.

What it needs, and never installs itself: Chromium (Debian's `chromium` package, which .ci/run
installs; or set COURSE_BROWSER=/path/to/chrome) and the `playwright` Python package (the [test]
extra). Without either it skips and says how to get it; also when the notebooks do not exist yet. COURSE_NOTEBOOKS=folder runs it on other notebooks (e.g. a student build).
JupyterLab and Chromium are always stopped, by process id, even when the test fails.
"""
from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course_lib.lab.student import course_lab as L

from course_lib import gpu  # noqa: E402

pytestmark = pytest.mark.slow      # a real JupyterLab driven from a real browser

REPO = Path(__file__).resolve().parents[2]
ART = Path(os.environ.get("COURSE_SCREENSHOTS") or REPO / "tests" / "screenshots")   # printed at the end
BUDGET_S = 600                                # the whole module, installs excluded
AUTOSAVE_S = 2                                # JupyterLab's autosave interval here (120 s by default)
DEFAULT_WINDOW = {"width": 1280, "height": 720}    # Playwright's default window, a common laptop's
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
SLIDER_LABEL = ("pad", "padding")


# ------------------------------------------------------------------------------------ what it needs

def _notebook(folder: Path, prefix: str) -> Path:
    found = sorted(folder.glob(f"{prefix}_*.ipynb"))
    if not found:
        pytest.skip(f"{folder.name}/{prefix}_*.ipynb does not exist yet: nothing to open in the browser")
    return found[0]


def _chromium() -> str:
    env = os.environ.get("COURSE_BROWSER")
    if env:
        return env
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium here: the browser test drives Debian's chromium and installs nothing itself. "
                "Get it with `sudo apt-get install chromium` (.ci/run does this), or set COURSE_BROWSER=/path/to/chrome")


def _playwright():
    try:
        return importlib.import_module("playwright.sync_api")
    except ImportError:
        pytest.skip("the playwright package is missing: pip install -e \".[test]\" brings it")


class Deadline:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def ms(self, step_s: float) -> float:
        """Milliseconds for the next wait: `step_s`, or what is left of the budget."""
        left = self.end - time.monotonic()
        if left <= 1:
            pytest.fail(f"the browser test ran past its {BUDGET_S} s budget")
        return 1000 * min(step_s, left)


# ------------------------------------------------------------------------------------ fixtures

@pytest.fixture(scope="module")
def artifacts(request):
    ART.mkdir(parents=True, exist_ok=True)
    for old in list(ART.glob("*.png")) + list(ART.glob("*.log")) + list(ART.glob("*.txt")):
        old.unlink()
    yield ART
    files = sorted(p.name for p in ART.iterdir())
    msg = f"\nbrowser test artifacts in {ART}: " + (", ".join(files) or "none")
    capture = request.config.pluginmanager.getplugin("capturemanager")
    off = getattr(capture, "global_and_fixture_disabled", None)
    with off() if off else contextlib.nullcontext():
        print(msg, flush=True)       # straight to the terminal, so into the CI log, pass or fail


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """root/run/notebooks (cells run there, JupyterLab saves them) and root/repo/notebooks (a git
    repository of the notebooks as they are), each with kernels/ beside it as in the checkout."""
    src = Path(os.environ.get("COURSE_NOTEBOOKS") or REPO / "notebooks")
    if not src.is_dir():
        pytest.skip(f"{src} does not exist yet")
    _notebook(src, "05")
    _notebook(src, "00")
    root = tmp_path_factory.mktemp("course")
    for copy in ("run", "repo"):
        shutil.copytree(src, root / copy / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        if (REPO / "kernels").is_dir():
            (root / copy / "kernels").symlink_to(REPO / "kernels")
    (root / "repo" / ".gitignore").write_text("/kernels\n.ipynb_checkpoints/\n")      # as in the checkout
    git = ["git", "-C", str(root / "repo"), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    for cmd in (["init", "-q"], ["add", "notebooks", ".gitignore"], ["commit", "-q", "-m", "as committed"]):
        subprocess.run(git + cmd, check=True, capture_output=True)
    return root


def _rel(root: Path, nb: Path) -> str:
    return nb.relative_to(root).as_posix()


@pytest.fixture(scope="module")
def deadline(browser):
    """The budget starts once Chromium runs: installing it and playwright is setup, not the test."""
    return Deadline(BUDGET_S)


@pytest.fixture(scope="module")
def jupyterlab(course, artifacts, tmp_path_factory, deadline):
    home = tmp_path_factory.mktemp("jupyter")
    settings = {   # every cell in the DOM (no windowing); autosave soon (the pop-ups are course-lab's to turn off)
        ("@jupyterlab/notebook-extension", "tracker"): {"windowingMode": "none"},
        ("@jupyterlab/docmanager-extension", "plugin"): {"autosaveInterval": AUTOSAVE_S},
    }
    for (ext, plugin), value in settings.items():
        (home / "settings" / ext).mkdir(parents=True, exist_ok=True)
        (home / "settings" / ext / f"{plugin}.jupyterlab-settings").write_text(json.dumps(value))
    autosave_file = home / "settings" / "@jupyterlab/docmanager-extension" / "plugin.jupyterlab-settings"
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"), IPYTHONDIR=str(home / "ipython"))
    env.setdefault("COURSE_LIB_BACKEND", "sim")
    log = open(artifacts / "jupyterlab.log", "w")
    server = L.Lab(course, port=L.free_port(0), env=env, log=log, first=None)
    server.autosave_file = autosave_file
    try:
        server.start(timeout=deadline.ms(90) / 1000)
        yield server
    finally:
        server.stop()
        log.close()


@pytest.fixture(scope="module")
def browser(course, tmp_path_factory):
    executable = _chromium()
    sync_api = _playwright()
    before = _own_descendants()
    pw = sync_api.sync_playwright().start()
    ctx = None
    try:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=executable, headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1300})
        yield ctx
    finally:
        try:
            if ctx is not None:
                ctx.close()
        finally:
            pw.stop()
            for p in _own_descendants() - before:      # a Chromium that outlived its driver
                try:
                    p.kill()
                except Exception:
                    pass


def _own_descendants() -> set:
    try:
        import psutil
        return {p for p in psutil.Process().children(recursive=True) if "chrom" in p.name().lower()}
    except Exception:
        return set()


# ------------------------------------------------------------------------------------ JupyterLab, from the UI

KERNEL_STATUS = "() => Array.from(document.querySelectorAll('.jp-StatusBar-TextItem[title^=\"Change kernel\"]'))" \
                ".map(e => e.textContent).join(' ')"
PROMPTS = ("() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell "
           ".jp-InputPrompt')).map(e => e.textContent.trim())")


def open_notebook(page, lab, path: str, deadline, shots, tag):
    """Open `path` (relative to the server's root) in a workspace of its own; wait for an idle kernel."""
    page.goto(lab.url(f"lab/workspaces/{tag}/tree/{path}") + "&reset", timeout=deadline.ms(60))
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=deadline.ms(60))
    wait_kernel_idle(page, deadline)
    shots(page, f"{tag}-opened")


def wait_kernel_idle(page, deadline, step_s=90):
    # the toolbar's execution indicator says idle before the kernel is connected: read the status bar
    page.wait_for_function(f"() => ({KERNEL_STATUS})().endsWith('| Idle')", timeout=deadline.ms(step_s))


def menu(page, label, command, deadline):
    page.locator(".lm-MenuBar-itemLabel", has_text=label).first.click(timeout=deadline.ms(20))
    page.locator(f".lm-Menu-item[data-command='{command}']").click(timeout=deadline.ms(20))


def run_all_from_the_menu(page, deadline, shots, step_s=200, settle_s=3.0):
    """Edit > Clear Outputs of All Cells, Run > Run All Cells, wait until the kernel is done.

    Done means: every code cell numbered, or the page unchanged with an idle kernel for `settle_s`.
    One look is not enough: after a cell tagged raises-exception fails, JupyterLab blanks the queued
    cells' '[*]' while the kernel goes on running them, and between two of them the status bar says
    Idle for a moment (a loaded CI machine made a test read that moment as 'Run All stopped')."""
    menu(page, "Edit", "editmenu:clear-all", deadline)
    page.wait_for_function(f"() => ({PROMPTS})().every(p => p === '[ ]:')", timeout=deadline.ms(20))
    menu(page, "Run", "runmenu:run-all", deadline)
    state = f"""() => [({PROMPTS})(), ({KERNEL_STATUS})(),
                       Array.from(document.querySelectorAll('.jp-Dialog .jp-Dialog-header')).map(e => e.innerText)]"""
    end = time.monotonic() + deadline.ms(step_s) / 1000
    last, since, answered = None, time.monotonic(), 0
    while True:
        prompts, status, dialogs = page.evaluate(state)
        if dialogs:
            shots(page, "dialog")
            # 'Select Kernel' when the kernel went away: accept its default. Anything else (e.g.
            # 'File Changed') is a failure of what is under test, not something to click away.
            assert all("Kernel" in d for d in dialogs) and answered < 3, f"a dialog covered the page: {dialogs}"
            page.locator(".jp-Dialog .jp-mod-accept").first.click(timeout=deadline.ms(20))
            answered += 1
            continue
        if all(re.fullmatch(r"\[\d+\]:", p) for p in prompts):
            break
        now = time.monotonic()
        if (prompts, status) != last:
            last, since = (prompts, status), now
        elif status.endswith("| Idle") and not any("*" in p for p in prompts) and now - since >= settle_s:
            break
        if now > end:
            pytest.fail(f"Run All did not finish in {step_s} s; prompts {prompts}, kernel '{status}'")
        page.wait_for_timeout(250)
    prompts = page.evaluate(PROMPTS)
    not_run = [i for i, p in enumerate(prompts) if not p[1:-2].isdigit()]
    if not_run:
        errors = page.evaluate("() => Array.from(document.querySelectorAll("
                               "'.jp-OutputArea-output[data-mime-type=\"application/vnd.jupyter.stderr\"]'))"
                               ".map(e => e.innerText.slice(-600))")
        pytest.fail(f"Run All stopped: code cells {not_run} did not run; stderr/errors shown: {errors[-3:]}")
    return prompts


EXPLORER_STATE = """([labels]) => {
    const sliders = Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .widget-slider'))
        .filter(s => labels.includes((s.querySelector('.widget-label') || {}).textContent.trim().toLowerCase()));
    const cells = sliders.map(s => s.closest('.jp-Cell'));
    const i = Math.max(0, cells.findIndex(c => c.querySelector('.js-plotly-plot') && c.querySelector('table')));
    const s = sliders[i], c = cells[i];
    if (!s) return null;
    const plots = Array.from(c.querySelectorAll('.js-plotly-plot'));
    return {
        value: s.querySelector('.widget-readout').textContent.trim(),
        index: i,
        titles: plots.map(p => (p.querySelector('.gtitle') || {}).textContent || ''),
        charts: JSON.stringify(plots.map(p => [p.data, p.layout && p.layout.title])),
        tables: Array.from(c.querySelectorAll('table')).map(t => t.innerText),
    };
}"""


# ------------------------------------------------------------------------------------ the tests

@pytest.fixture(scope="module")
def shots(artifacts):
    taken = []

    def shot(target, name):
        path = artifacts / f"{len(taken) + 1:02d}-{name}.png"
        try:
            target.screenshot(path=str(path))
            taken.append(path)
        except Exception as exc:        # a screenshot must never hide the real failure
            (artifacts / f"{name}.screenshot-failed.txt").write_text(repr(exc))
    return shot


@contextlib.contextmanager
def failure_evidence(page, shots, name):
    """On any failure: a screenshot and the page's text beside it, then the failure goes on."""
    try:
        yield
    except BaseException:
        shots(page, f"FAILED-{name}")
        try:
            (ART / f"FAILED-{name}.txt").write_text(page.evaluate("() => document.body.innerText")[-20000:])
        except Exception:
            pass
        raise


def test_opening_and_saving_each_notebook_changes_nothing(browser, jupyterlab, course, deadline, shots):
    """Open every notebook (kernel started), wait two autosave intervals, save explicitly: the git
    repository of the notebooks must stay clean, and no pop-up may cover the page. (The tab does show
    'modified': plotly's renderer adds a PNG of each chart it draws, which the save hook drops.)"""
    repo = course / "repo"
    page = browser.new_page()
    popups = []
    for nb in sorted((repo / "notebooks").glob("*.ipynb")):
        tag = "open-" + nb.stem[:2]
        with failure_evidence(page, shots, tag):
            open_notebook(page, jupyterlab, _rel(course, nb), deadline, lambda *a: None, tag)
            page.wait_for_timeout(AUTOSAVE_S * 1000 + 500)           # an autosave of anything changed
            popups += page.locator(".jp-Notification-Toast, .Toastify__toast").all_inner_texts()
            before = _last_modified(jupyterlab, _rel(course, nb))
            page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").first.click(position={"x": 5, "y": 5})
            page.keyboard.press("Control+s")
            page.wait_for_function("() => !document.querySelector('.lm-TabBar-tab.jp-mod-current.jp-mod-dirty')",
                                   timeout=deadline.ms(30))
            _wait(lambda: _last_modified(jupyterlab, _rel(course, nb)) != before, deadline, f"{nb.name} was not saved")
            _shutdown_kernels(jupyterlab)
    shots(page, "opened-and-saved")
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True).stdout
    diff = subprocess.run(["git", "-C", str(repo), "diff", "--stat"], capture_output=True, text=True).stdout
    detail = subprocess.run(["git", "-C", str(repo), "diff", "-U1"], capture_output=True, text=True).stdout
    (ART / "open-and-save.diff").write_text(detail)
    assert not status.strip(), f"opening and saving changed tracked notebooks:\n{diff}\n{detail[:3000]}"
    assert not popups, f"pop-ups covered the page: {popups}"


def _api(lab, path, method="GET"):
    import urllib.request
    req = urllib.request.Request(lab.url(f"api/{path}").split("?token=")[0], method=method,
                                 headers={"Authorization": f"token {lab.token}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        body = r.read()
    return json.loads(body) if body else None


def _last_modified(lab, path):
    return _api(lab, f"contents/{path}?content=0")["last_modified"]


def _shutdown_kernels(lab):
    for session in _api(lab, "sessions"):
        _api(lab, f"sessions/{session['id']}", "DELETE")


def _wait(predicate, deadline, message, step_s=30):
    end = time.monotonic() + deadline.ms(step_s) / 1000
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.2)
    pytest.fail(message)


def autosave_off(lab):
    """For pages opened from now on. The tests that Run All are not about autosave, and with a 2 s
    interval on a loaded machine two of JupyterLab's own saves overlap: the second finds the hash the
    first wrote and asks 'File Changed: overwrite or revert?' (JupyterLab 4.6 compares hashes; seen in
    CI). course-lab keeps JupyterLab's 120 s."""
    lab.autosave_file.write_text(json.dumps({"autosave": False, "autosaveInterval": 120}))


def test_notebook05_padding_slider_redraws_chart_and_table(browser, jupyterlab, course, deadline, shots):
    autosave_off(jupyterlab)
    nb = _notebook(course / "run" / "notebooks", "05")
    page = browser.new_page()
    with failure_evidence(page, shots, "nb05"):
        open_notebook(page, jupyterlab, _rel(course, nb), deadline, shots, "nb05")
        check_padding_explorer(page, nb, deadline, shots)


def check_padding_explorer(page, nb, deadline, shots):
    run_all_from_the_menu(page, deadline, shots)
    shots(page, "nb05-ran-all")

    before = page.evaluate(EXPLORER_STATE, [list(SLIDER_LABEL)])
    assert before, f"no slider labelled {' or '.join(SLIDER_LABEL)} in {nb.name} after Run All"
    assert before["titles"], "the padding explorer shows no plotly chart"
    assert before["tables"], "the padding explorer shows no metrics table"
    cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell",
                        has=page.locator(".widget-slider")).nth(before["index"])
    cell.scroll_into_view_if_needed()
    shots(cell, f"nb05-pad-{before['value']}")

    handle = cell.locator(".widget-slider .noUi-handle").first
    handle.focus()
    handle.press("ArrowRight" if before["value"] != "4" else "ArrowLeft")
    page.wait_for_function(
        f"""([labels, old]) => {{ const s = ({EXPLORER_STATE})([labels]);
              return s && s.value !== old.value && s.charts !== old.charts
                     && JSON.stringify(s.tables) !== JSON.stringify(old.tables); }}""",
        arg=[list(SLIDER_LABEL), before], timeout=deadline.ms(60), polling=200)
    wait_kernel_idle(page, deadline)
    after = page.evaluate(EXPLORER_STATE, [list(SLIDER_LABEL)])
    shots(cell, f"nb05-pad-{after['value']}")
    (ART / "nb05-explorer.txt").write_text(json.dumps({"before": {k: before[k] for k in ("value", "titles", "tables")},
                                                       "after": {k: after[k] for k in ("value", "titles", "tables")}},
                                                      indent=1, ensure_ascii=False))
    assert after["value"] != before["value"]
    assert after["charts"] != before["charts"] and after["tables"] != before["tables"]


@pytest.fixture(scope="module")
def ran(browser, jupyterlab, course, deadline, shots):
    """ran(prefix): (the notebook, its page) opened at the default window and run top to bottom, once per module:
    the tests that read notebook 00 after Run All (its banner, its charts' layout) share one run (10 s of 2 cores)."""
    pages = {}

    def run(prefix: str):
        if prefix not in pages:
            autosave_off(jupyterlab)
            nb = _notebook(course / "run" / "notebooks", prefix)
            page = browser.new_page()
            page.set_viewport_size(DEFAULT_WINDOW)
            with failure_evidence(page, shots, f"ran{prefix}"):
                open_notebook(page, jupyterlab, _rel(course, nb), deadline, shots, f"ran{prefix}")
                run_all_from_the_menu(page, deadline, shots)
            pages[prefix] = nb, page
        return pages[prefix]
    return run


def test_notebook00_shows_the_backend_banner(ran, deadline, shots):
    _, page = ran("00")
    with failure_evidence(page, shots, "nb00"):
        check_banner(page, deadline, shots)


def check_banner(page, deadline, shots):
    """On a page where notebook 00 ran: the banner names the backend."""
    # the server, so its kernels, run with this process's COURSE_LIB_BACKEND (tests: sim)
    expected = "GPU: " if gpu.available() else "CPU simulator: metrics are exact; times are not measured"
    banner = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output", has_text=expected).first
    banner.wait_for(timeout=deadline.ms(30))
    banner.scroll_into_view_if_needed()
    shots(page, "nb00-banner")
    text = banner.inner_text()
    (ART / "nb00-banner.txt").write_text(text)
    assert expected in text


CHART_LAYOUT = """() => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    const charts = [], explorers = [], covered = [];
    // plotly's toolbar (shown on hover) must not lie over any chart's title, its own or a stacked neighbour's
    const bars = Array.from(panel.querySelectorAll('.js-plotly-plot .modebar')).map(m => m.getBoundingClientRect())
                      .filter(b => b.width > 0 && b.height > 0);
    for (const g of panel.querySelectorAll('.js-plotly-plot .gtitle')) {
        const t = g.getBoundingClientRect();
        for (const b of bars)
            if (b.left < t.right && t.left < b.right && b.top < t.bottom && t.top < b.bottom)
                covered.push({title: g.textContent, title_px: [t.left, t.top, t.right, t.bottom],
                              toolbar_px: [b.left, b.top, b.right, b.bottom]});
    }
    for (const p of panel.querySelectorAll('.js-plotly-plot')) {
        const title = p.querySelector('.gtitle'), svg = p.querySelector('.main-svg');
        if (!title || !svg || !title.textContent.trim()) continue;
        const t = title.getBoundingClientRect(), s = svg.getBoundingClientRect();
        // what is visible of the title: the chart's own svg, then every box around it that clips
        let left = s.left, right = s.right;
        for (let e = p.parentElement; e && e !== panel; e = e.parentElement) {
            const b = e.getBoundingClientRect(), o = getComputedStyle(e).overflowX;
            if (o !== 'visible') { left = Math.max(left, b.left); right = Math.min(right, b.right); }
        }
        charts.push({title: title.textContent, clipped: t.left < left - 1 || t.right > right + 1 || t.top < s.top - 1,
                     title_px: [Math.round(t.left), Math.round(t.right)], visible_px: [Math.round(left), Math.round(right)],
                     in_explorer: !!p.closest('.widget-vbox')});
    }
    for (const cell of panel.querySelectorAll('.jp-CodeCell')) {
        const area = cell.querySelector('.jp-OutputArea-output .widget-vbox');
        if (!area || !area.querySelector('.js-plotly-plot')) continue;
        const out = area.closest('.jp-OutputArea-output').getBoundingClientRect();
        const plots = Array.from(area.querySelectorAll('.js-plotly-plot')).map(p => p.getBoundingClientRect().width);
        explorers.push({explorer: area.getBoundingClientRect().width / out.width,
                        charts: plots.map(w => w / out.width)});
    }
    return {charts, explorers, covered};
}"""


@pytest.mark.parametrize("prefix", ["00", "07", "11"])
def test_charts_fit_and_explorers_fill_the_width_at_the_default_window(prefix, ran, deadline, shots):
    nb, page = ran(prefix)
    with failure_evidence(page, shots, f"layout{prefix}"):
        page.wait_for_function("() => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) "
                               ".widget-vbox .js-plotly-plot .gtitle').length > 0", timeout=deadline.ms(60))
        layout = page.evaluate(CHART_LAYOUT)
        (ART / f"layout{prefix}.json").write_text(json.dumps(layout, indent=1, ensure_ascii=False))
        for i, plot in enumerate(page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) "
                                              ".widget-vbox .js-plotly-plot").all()):
            plot.scroll_into_view_if_needed()
            shots(page, f"layout{prefix}-explorer-chart{i}")       # the window, as a student sees it
        clipped = [c for c in layout["charts"] if c["clipped"]]
        assert layout["explorers"], f"{nb.name}: no explorer with a chart after Run All"
        assert not clipped, f"{nb.name}: chart titles clipped at {DEFAULT_WINDOW['width']} px: {clipped}"
        assert not layout["covered"], f"{nb.name}: plotly's toolbar covers chart titles: {layout['covered']}"
        narrow = [e for e in layout["explorers"] if e["explorer"] < 0.95 or min(e["charts"]) < 0.9]
        assert not narrow, f"{nb.name}: explorers or their charts do not fill the output's width: {narrow}"


# ------------------------------------------------------------------------------------ course-lab itself

def test_course_lab_serves_the_notebooks_with_this_python_and_stops_with_its_kernels(tmp_path):
    """The README's command: `course-lab` (no browser here) copies notebooks/ into the student's
    folder (here --work, not the checkout's my-notebooks/), prints a URL that works, its kernels are
    this interpreter, and SIGTERM stops the server and its kernels."""
    import queue
    import threading
    import urllib.request
    psutil = pytest.importorskip("psutil")
    script = Path(sys.executable).with_name("course-lab")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "course_lib", "lab"]
    port = L.free_port(0)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "c"), JUPYTER_DATA_DIR=str(tmp_path / "d"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "r"), JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "w"))
    work = tmp_path / "my-notebooks"
    proc = subprocess.Popen(cmd + ["--no-browser", "--port", str(port), "--work", str(work)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    seen, url, kernels = [], None, []
    try:
        end = time.monotonic() + 90
        while url is None and time.monotonic() < end and proc.poll() is None:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            seen.append(line)
            if line.strip().startswith("open:"):
                url = line.split("open:", 1)[1].strip()
        assert url, "course-lab printed no URL:\n" + "".join(seen)
        text = "".join(seen)
        same_python = lambda exe: os.path.realpath(exe) == os.path.realpath(sys.executable)  # noqa: E731
        assert f"notebooks: {work}" in text and "backend:" in text
        assert sorted(p.name for p in work.glob("*.ipynb")) == sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
        assert same_python(re.search(r"kernel:\s+(\S+)", text)[1])
        assert url.startswith(f"http://localhost:{port}/lab") and "token=" in url
        with urllib.request.urlopen(url, timeout=30) as r:
            assert r.status == 200
        token = url.split("token=", 1)[1]
        api = f"http://localhost:{port}/api/"

        def call(path, method="GET"):
            req = urllib.request.Request(api + path, method=method, data=b"{}" if method == "POST" else None,
                                         headers={"Authorization": f"token {token}"})
            with urllib.request.urlopen(req, timeout=60) as r:
                return json.loads(r.read() or b"null")
        assert same_python(call("kernelspecs")["kernelspecs"]["python3"]["spec"]["argv"][0])
        kid = call("kernels", "POST")["id"]
        kernels = [p for p in psutil.Process(proc.pid).children(recursive=True) if kid in " ".join(p.cmdline())]
        assert kernels and same_python(kernels[0].cmdline()[0])
    finally:
        proc.terminate()       # SIGTERM, as a closing terminal or a CI timeout sends
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("course-lab did not stop on SIGTERM")
    time.sleep(1)
    assert not [k for k in kernels if k.is_running() and k.status() != psutil.STATUS_ZOMBIE], "a kernel outlived course-lab"
    servers = [p for p in psutil.process_iter(["cmdline"]) if f"--ServerApp.port={port}" in " ".join(p.info["cmdline"] or [])]
    assert not servers, "JupyterLab outlived course-lab"
