"""Stored notebooks are the same bytes whenever their content is the same: after a refresh with no
output changed, after JupyterLab opened and saved them (the kernelspec it writes, JavaScript's
numbers, plotly's PNG snapshots), and whatever ids the widgets got this time."""
import copy
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from course_lib.lab import stored
from course_lib.lab.student.server import KERNELSPEC
from course_lib.lab.instructor import refresh

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
needs_notebooks = pytest.mark.skipif(not NOTEBOOKS, reason="notebooks/ has no course notebooks yet")


def _text(nb) -> str:
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def _as_javascript_saves_it(nb):
    """What reaches the server when JupyterLab saves `nb`: numbers as JSON.stringify writes them,
    each code cell's trust in its metadata, a PNG beside every plotly chart it drew."""
    def js(o):
        if isinstance(o, float) and o.is_integer():
            return int(o)
        return {k: js(v) for k, v in o.items()} if isinstance(o, dict) else [js(v) for v in o] if isinstance(o, list) else o
    sent = js(json.loads(json.dumps(nb)))        # in memory, as the browser holds it: sources are strings
    for cell in sent["cells"]:
        if cell["cell_type"] == "code":
            cell["metadata"]["trusted"] = True
            for out in cell["outputs"]:
                if stored.PLOTLY in out.get("data", {}):
                    out["data"]["image/png"] = "iVBORw0KGgo="
    return sent


def _widget_notebook(ids):
    """A notebook with one explorer-like widget tree: a VBox holding a slider, as nbclient stores it."""
    box, slider, layout = ids
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("explorer")
    cell["id"] = "explorer-cell"
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        "text/plain": "VBox()", stored.WIDGET_VIEW: {"model_id": box, "version_major": 2, "version_minor": 0}})]
    cell.metadata["execution"] = {"iopub.status.busy": "2026-11-24T10:00:00Z"}
    nb.cells = [cell]
    state = {
        slider: {"model_name": "IntSliderModel", "state": {"value": 1.0, "layout": f"IPY_MODEL_{layout}"}},
        box: {"model_name": "VBoxModel", "state": {"children": [f"IPY_MODEL_{slider}"]}},
        layout: {"model_name": "LayoutModel", "state": {"width": "100%"}},
    }
    nb.metadata["widgets"] = {stored.WIDGET_STATE: {"state": state, "version_major": 2, "version_minor": 0}}
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    return nb


def test_normalize_gives_the_same_bytes_whatever_ids_the_widgets_got():
    a = _widget_notebook(["a" * 32, "b" * 32, "c" * 32])
    b = _widget_notebook(["d" * 32, "e" * 32, "f" * 32])
    for nb in (a, b):
        stored.normalize(nb, "05_x.ipynb")
    assert _text(a) == _text(b)
    for old in ("a" * 32, "b" * 32, "c" * 32):
        assert old not in _text(a)
    state = a.metadata.widgets[stored.WIDGET_STATE]["state"]
    box = a.cells[0].outputs[0]["data"][stored.WIDGET_VIEW]["model_id"]
    slider = state[box]["state"]["children"][0].removeprefix("IPY_MODEL_")
    assert state[slider]["model_name"] == "IntSliderModel"            # references renamed with their models
    assert state[slider]["state"]["value"] == 1 and isinstance(state[slider]["state"]["value"], int)
    assert a.metadata.kernelspec == KERNELSPEC and "execution" not in a.cells[0].metadata
    assert stored.problems(a) == [] and "--fix-metadata" in stored.problems(_widget_notebook(["1" * 32] * 3))[0]


@needs_notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_normalized_course_notebook_survives_a_javascript_save_unchanged(path):
    """The bytes `instructor refresh` stores are what the server writes back after the browser's
    round trip, even without course-lab's save hook (apart from the PNGs, which the hook drops)."""
    nb = nbformat.read(path, as_version=4)
    stored.normalize(nb, path.name)
    sent = _as_javascript_saves_it(nb)
    stored.drop_plotly_snapshots(sent)
    back = nbformat.from_dict(sent)
    for cell in back.cells:
        cell.metadata.pop("trusted", None)
    assert _text(back) == _text(nb)


class _Manager:
    def __init__(self, root):
        self.root = root

    def _get_os_path(self, path):
        return str(self.root / path)


@needs_notebooks
def test_the_save_hook_keeps_the_files_bytes_when_only_the_browser_changed_it(tmp_path):
    shutil.copy(NOTEBOOKS[0], tmp_path / "nb.ipynb")
    on_disk = nbformat.read(tmp_path / "nb.ipynb", as_version=4)
    model = {"type": "notebook", "content": _as_javascript_saves_it(on_disk)}
    stored.save_hook(model=model, path="nb.ipynb", contents_manager=_Manager(tmp_path))
    saved = nbformat.from_dict(model["content"])
    assert _text(saved) == (tmp_path / "nb.ipynb").read_text(encoding="utf-8")
    assert all(c.metadata.get("trusted") for c in saved.cells if c.cell_type == "code")     # the trust it signs

    edited = _as_javascript_saves_it(on_disk)
    edited["cells"][0]["source"] += "\nmy note"
    model = {"type": "notebook", "content": copy.deepcopy(edited)}
    stored.save_hook(model=model, path="nb.ipynb", contents_manager=_Manager(tmp_path))
    assert model["content"]["cells"][0]["source"].endswith("my note")          # a real edit is saved as sent
    assert "image/png" not in json.dumps(model["content"])                    # without plotly's snapshots


@needs_notebooks
@pytest.mark.slow          # executes notebooks twice
def test_refresh_twice_writes_nothing_the_second_time(tmp_path):
    """`instructor refresh` of a real course notebook (with an explorer's widgets) twice: the second
    run finds the same outputs and leaves the file as it was, byte for byte and unwritten."""
    name = "00_start_here.ipynb"
    if not (REPO / "notebooks" / name).exists():
        pytest.skip(f"no {name}")
    (tmp_path / "notebooks").mkdir()
    path = shutil.copy(REPO / "notebooks" / name, tmp_path / "notebooks" / name)
    ok, msg = refresh.refresh_one(path, timeout=300)
    assert ok, msg
    first, mtime = Path(path).read_bytes(), Path(path).stat().st_mtime_ns
    assert stored.widget_order(nbformat.read(path, as_version=4)), "the notebook stores no widgets to renumber"
    ok, msg = refresh.refresh_one(path, timeout=300)
    assert ok and "unchanged (not written)" in msg, msg
    assert Path(path).read_bytes() == first and Path(path).stat().st_mtime_ns == mtime
