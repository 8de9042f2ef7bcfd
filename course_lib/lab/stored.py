"""How the course's notebooks are stored, so that the same content is always the same bytes.

    stored.normalize(nb, "05_bank_conflicts.ipynb")   # in place: what `instructor refresh` writes
    stored.problems(nb)                               # [] or what opening it in JupyterLab would change
    nb = stored.read_notebook(path)                   # nbformat 4, or ValueError naming the file and the fault
    --ContentsManager.pre_save_hook=course_lib.lab.stored.save_hook     # what course-lab's server saves with

Five things would otherwise change a notebook file with no change of content:

- the kernelspec: JupyterLab writes the running kernel's ("Python 3 (ipykernel)", ipykernel's own
  and course-lab's), so a notebook stored with another display name is rewritten by autosave the
  moment it is opened, with no cell run: a tracked file modified, and ``git pull`` conflicts;
- widget model ids: every execution makes new random ones, in the outputs (widget views) and in the
  saved widget state, so a refresh rewrote some 1800 lines with no output changed. They are renamed
  here to ids derived from the notebook's name and the order the models are reached in (cell by
  cell, each view's model and then the models it refers to, depth first);
- execution timestamps in cell metadata (nbclient's record_timing; the course stores none);
- numbers: the notebook goes through the browser's JavaScript on every save, which writes 1.0 as 1,
  so whole floats are stored as integers (:func:`js_numbers`);
- pictures: plotly's JupyterLab renderer adds a PNG snapshot (base64, tens of kB) to every chart it
  draws, marking the notebook modified. :func:`save_hook`, which course-lab's server runs before each
  save, drops them, and when what remains equals the file on disk in value, saves the file's own
  content, so its bytes do not change.

This module changes notebook structures in memory and holds the server's save hook; it does not
execute notebooks (lab.instructor.refresh does).
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path


# the kernelspec JupyterLab and ipykernel write: a notebook stored with another is rewritten when opened
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
PLOTLY = "application/vnd.plotly.v1+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_REF = re.compile(r"IPY_MODEL_([0-9a-f]{32})")


def problems(nb) -> list[str]:
    """What JupyterLab would change on opening `nb` (empty: nothing)."""
    spec = nb.metadata.get("kernelspec", {})
    if {k: spec.get(k) for k in KERNELSPEC} != KERNELSPEC:
        return [f"kernelspec {spec} is not the one JupyterLab writes ({KERNELSPEC}): opening the notebook would "
                "rewrite it (python -m course_lib instructor check --fix-metadata)"]
    return []


def set_kernelspec(nb) -> bool:
    """Store the kernelspec JupyterLab writes; True when it changed."""
    old = dict(nb.metadata.get("kernelspec", {}))
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    return old != KERNELSPEC


def widget_order(nb) -> list[str]:
    """Every widget model id of `nb` in the order it is reached: the views of cell outputs, cell by cell,
    each followed depth-first by the models its state refers to; then models no view reaches, by content."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    order, seen = [], set()

    def visit(mid):
        if mid in seen:
            return
        seen.add(mid)
        order.append(mid)
        if mid in state:
            for ref in _REF.findall(json.dumps(state[mid], sort_keys=True)):
                visit(ref)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            view = out.get("data", {}).get(WIDGET_VIEW)
            if isinstance(view, dict) and view.get("model_id"):
                visit(view["model_id"])
    rest = [m for m in state if m not in seen]
    masked = {m: _REF.sub("IPY_MODEL_", json.dumps(state[m], sort_keys=True)) for m in rest}
    for m in sorted(rest, key=lambda m: masked[m]):       # stable: equal contents keep their order
        visit(m)
    return order


def stable_widget_ids(nb, name: str) -> int:
    """Rename every widget model id to one derived from `name` and its place in widget_order (in
    outputs, state keys and references alike). Returns how many ids there are."""
    order = widget_order(nb)
    if not order:
        return 0
    new = {old: hashlib.sha256(f"{name}/widget/{i}".encode()).hexdigest()[:32] for i, old in enumerate(order)}
    pattern = re.compile("|".join(map(re.escape, order)))

    def rename(obj):
        if isinstance(obj, str):
            return pattern.sub(lambda m: new[m[0]], obj)
        if isinstance(obj, dict):
            return {rename(k): rename(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [rename(v) for v in obj]
        return obj
    for cell in nb.cells:
        if "outputs" in cell:
            cell["outputs"] = _as_nodes(rename(_plain(cell["outputs"])))
    if "widgets" in nb.metadata:
        nb.metadata["widgets"] = _as_nodes(rename(_plain(nb.metadata["widgets"])))
    return len(order)


def js_numbers(obj):
    """`obj` with every whole float (abs < 1e21) an int, as JSON.stringify writes it: 1.0 -> 1."""
    if isinstance(obj, float) and obj.is_integer() and abs(obj) < 1e21:
        return int(obj)
    if isinstance(obj, dict):
        return type(obj)((k, js_numbers(v)) for k, v in obj.items())
    if isinstance(obj, list):
        return [js_numbers(v) for v in obj]
    return obj


def normalize(nb, name: str) -> None:
    """Kernelspec, stable widget ids, no execution timestamps, JavaScript's numbers (module docstring)."""
    set_kernelspec(nb)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if "outputs" in cell:
            cell["outputs"] = _as_nodes(js_numbers(_plain(cell["outputs"])))
    nb["metadata"] = _as_nodes(js_numbers(_plain(nb.metadata)))
    stable_widget_ids(nb, name)


def drop_plotly_snapshots(nb: dict) -> int:
    """Remove the PNG plotly's JupyterLab renderer adds beside a chart's JSON; how many it removed."""
    n = 0
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []) or []:
            data = out.get("data") or {}
            if PLOTLY in data and "image/png" in data:
                del data["image/png"]
                n += 1
    return n


def save_hook(model, path, contents_manager, **kwargs):
    """A Jupyter server pre-save hook (see the module docstring): no plotly snapshots; a notebook equal
    in value to its file is saved as the file's own content."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    drop_plotly_snapshots(model["content"])
    import nbformat
    try:
        with open(contents_manager._get_os_path(path), encoding="utf-8") as f:
            on_disk = nbformat.read(f, as_version=4)
    except Exception:           # a new file, or not a notebook we can read: save what came
        return
    if _plain(on_disk) == _without_trust(model["content"]):
        for mine, sent in zip(on_disk.cells, model["content"]["cells"]):     # the trust the server signs
            if "trusted" in sent.get("metadata", {}):
                mine.metadata["trusted"] = sent["metadata"]["trusted"]
        model["content"] = on_disk


def _without_trust(nb: dict) -> dict:
    """`nb` as the server will store it: JupyterLab sends each code cell's trust as metadata.trusted,
    which the server signs (in its own database) and never writes into the file."""
    nb = _plain(nb)
    for cell in nb.get("cells", []):
        cell.get("metadata", {}).pop("trusted", None)
    return nb


def _plain(obj):
    return json.loads(json.dumps(obj))


def _as_nodes(obj):
    from nbformat import from_dict
    return from_dict(obj)


def read_notebook(path):
    """Notebook `path` as nbformat 4, or a ValueError naming the file and what is wrong with it (not JSON, or
    JSON that is not a notebook), never nbformat's or jsonschema's traceback. OSErrors pass (the caller's)."""
    import nbformat
    try:
        return nbformat.read(path, as_version=4)
    except OSError:
        raise
    except Exception as exc:        # NotJSONError, jsonschema's ValidationError, AttributeError on a JSON list
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (ValueError, OSError):
            what = "it is not JSON, so not a Jupyter notebook"
        else:
            missing = [k for k in ("cells", "nbformat") if k not in data] if isinstance(data, dict) else None
            what = (f"it is JSON (a {type(data).__name__}), not a Jupyter notebook, which is an object with "
                    "'cells' and 'nbformat'" if missing is None else
                    f"it is JSON, but not a Jupyter notebook: it has no {' and no '.join(map(repr, missing))}"
                    if missing else f"it is not a notebook nbformat can read ({str(exc).strip()[:160]})")
        raise ValueError(f"{path}: {what}\nhint: name a notebook (.ipynb) the course wrote, or restore this one: "
                         f"git checkout -- {path}") from None
