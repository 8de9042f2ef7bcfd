"""Refreshing a notebook's stored outputs: execute it on the simulator, store it byte-stable.

    ok, message = refresh_one("notebooks/05_bank_conflicts.ipynb")
    refresh(paths, jobs=2)

nbval compares every cell's output with the one stored in the notebook, so after a notebook or
the library changes its outputs are made again here, always on the CPU simulator (whatever the
machine has) and in self-study mode (COURSE_LIB_GRADED is dropped for the kernel), with
neighbouring stream outputs merged and the notebook normalized (``stored.normalize``), so a refresh
that changes no output writes nothing.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ...teach import solutions
from ...sim.progress import PROGRESS_ENV
from .. import stored
from ..student import server


def _comparable(cell) -> str:
    """A cell's outputs without widget views (a new model id on every run, and nbval ignores them)."""
    outs = [{k: v for k, v in o.items() if k != "data"} | {"data": {m: d for m, d in o.get("data", {}).items()
                                                                    if "widget-view" not in m}}
            for o in cell.get("outputs", [])]
    return json.dumps(outs, sort_keys=True)


def coalesce_streams(cell) -> None:
    """Merge neighbouring stdout (or stderr) outputs of a cell into one: how the kernel happened to
    flush a print must not change the stored notebook from one refresh to the next."""
    merged = []
    for o in cell.get("outputs", []):
        if (merged and o.get("output_type") == "stream" and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == o.get("name")):
            merged[-1]["text"] = "".join(merged[-1]["text"]) + "".join(o["text"])
        else:
            merged.append(o)
    if "outputs" in cell:
        cell["outputs"] = merged


def refresh_one(path, timeout=600) -> tuple[bool, str]:
    """Execute one notebook on the simulator and write it back; (ok, message)."""
    import nbclient
    import nbformat as nbf
    path, t0 = Path(path), time.monotonic()
    nb = stored.read_notebook(path)
    before = [_comparable(c) for c in nb.cells]
    with server.lab_env(backend="sim") as env:
        saved = dict(os.environ)
        os.environ.update(env)      # the kernel inherits this process's environment
        os.environ.pop(solutions.ENV_GRADED, None)    # stored outputs are self-study's, whatever the shell says
        os.environ[PROGRESS_ENV] = "0"       # a slow machine must not store a progress bar in an output
        try:
            nbclient.NotebookClient(nb, timeout=timeout, kernel_name=nb.metadata.get("kernelspec", {}).get(
                "name", "python3"), record_timing=False, resources={"metadata": {"path": str(path.parent)}}).execute()
        except Exception as exc:
            msg = str(exc).strip().splitlines()
            return False, f"{path.name}: NOT written: " + " | ".join(msg[-4:])[-800:]
        finally:
            os.environ.clear()
            os.environ.update(saved)
    for c in nb.cells:
        coalesce_streams(c)
    stored.normalize(nb, path.name)         # same outputs -> same bytes (kernelspec, widget ids, timestamps)
    changed = sum(_comparable(c) != b for c, b in zip(nb.cells, before))
    text = nbf.writes(nb)
    text += "" if text.endswith("\n") else "\n"        # exactly what nbformat.write stores
    if text == path.read_text(encoding="utf-8"):
        return True, f"{path.name}: refreshed in {time.monotonic() - t0:.0f} s, unchanged (not written)"
    path.write_text(text, encoding="utf-8")
    return True, (f"{path.name}: refreshed in {time.monotonic() - t0:.0f} s, {changed} cell output(s) changed, "
                  f"{path.stat().st_size // 1024} kB")


def refresh(paths, jobs=1, timeout=600, log=print) -> bool:
    ok = True
    if jobs > 1 and len(paths) > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(jobs) as pool:
            results = pool.map(refresh_one, paths, [timeout] * len(paths))
            for good, msg in results:
                ok &= good
                log(msg)
        return ok
    for p in paths:
        good, msg = refresh_one(p, timeout)
        ok &= good
        log(msg)
    return ok
