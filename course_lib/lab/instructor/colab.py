"""Checking a notebook's Colab start without Colab.

    colab.check_colab_cell(nb, "05_bank_conflicts.ipynb")    # [] or the problems, in words
    colab.colab_commands(cell_source, on_colab=True)         # what the cell would run there
    colab.fix_install_cell(nb)                               # make it lab.colab_install_cell()

:func:`colab_commands` executes the cell's source the way IPython would (``!`` and ``%`` lines
included) in a fresh namespace, with a fake ``google.colab`` module when asked and course_lib
installed or not, and records every command instead of running it. :func:`check_colab_cell` holds
the rules: an 'Open in Colab' badge in the title cell pointing at the notebook in
``lab.COURSE_REPO``; a first code cell tagged ``colab-install`` that does nothing off Colab, on a
fresh Colab runtime only clones the course (unless the clone is there) and pip-installs that clone
with pip's defaults (so pip adds only what Colab lacks and upgrades nothing), importable at once,
and on a rerun once the course is installed does nothing. Nothing is installed or cloned here.
"""
from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import os
import re
import sys

from ..course import BADGE_SVG, BRANCH, COURSE_REPO, colab_url


def colab_commands(source: str, on_colab: bool = True, installed: bool = False) -> dict:
    """Run a cell's source as IPython would, in a fresh namespace, on Colab (a fake google.colab
    module) or not, with course_lib `installed` there or not, and every way out of Python recorded
    instead of run: ``!``/``%`` commands, subprocess, os.system. Returns dict(shell=[...],
    magics=[(name, line)], path_added=[...], error=None or text)."""
    import types
    from unittest import mock

    from IPython.core.inputtransformer2 import TransformerManager
    from IPython.utils.text import DollarFormatter
    rec, ns = dict(shell=[], magics=[], path_added=[], error=None), {"__name__": "__main__"}

    def expand(cmd):        # IPython's $var / {expr} expansion in ! and % lines
        try:
            return DollarFormatter().vformat(cmd, args=[], kwargs=ns)
        except Exception:
            return cmd

    def run(cmd, *a, **k):
        rec["shell"].append(cmd if isinstance(cmd, str) else " ".join(map(str, cmd)))
        return mock.MagicMock(returncode=0, stdout="", stderr="")
    ip = types.SimpleNamespace(system=lambda cmd: run(expand(cmd)), getoutput=lambda cmd, **k: run(expand(cmd)),
                               run_line_magic=lambda name, line, *a, **k: rec["magics"].append((name, expand(line))),
                               run_cell_magic=lambda name, line, cell: rec["magics"].append((name, line + "\n" + cell)))
    ns["get_ipython"] = lambda: ip
    mods = {}
    if on_colab:
        for name in ("google", "google.colab"):
            m = types.ModuleType(name)
            m.__spec__, m.__path__ = importlib.machinery.ModuleSpec(name, None, is_package=True), []
            mods[name] = m
        if "google" in sys.modules:
            del mods["google"]
    if not installed:       # a fresh runtime: find_spec("course_lib") is None, import course_lib fails
        mods["course_lib"] = None
    path = list(sys.path)
    patches = [mock.patch.dict(sys.modules, mods), mock.patch.dict(os.environ, {"COLAB_RELEASE_TAG": "fake"} if on_colab else {}),
               mock.patch("os.system", run)] + [mock.patch(f"subprocess.{f}", run) for f in
                                                 ("run", "call", "check_call", "check_output", "Popen")]
    try:
        with contextlib.ExitStack() as stack:
            for p in patches:
                stack.enter_context(p)
            exec(compile(TransformerManager().transform_cell(source), "<colab-install cell>", "exec"), ns)
    except BaseException as exc:        # SystemExit included: the cell must not end the kernel
        rec["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        rec["path_added"] = [p for p in sys.path if p not in path]
        sys.path[:] = path
    return rec


UPGRADING = ("-U", "--upgrade", "--force-reinstall", "-I", "--ignore-installed", "--upgrade-strategy")


def fix_install_cell(nb, repo: str = COURSE_REPO) -> bool:
    """Make the first code cell lab.colab_install_cell(repo), tagged colab-install (inserted after the
    title cell when the notebook has none). True when it changed."""
    from ..course import colab_install_cell
    want = colab_install_cell(repo)
    code = [c for c in nb.cells if c.cell_type == "code"]
    if code and "colab-install" in code[0].metadata.get("tags", []):
        changed = code[0].source != want
        code[0].source = want
        return changed
    from nbformat import v4
    cell = v4.new_code_cell(want)
    cell.metadata["tags"] = ["colab-install"]
    nb.cells.insert(1 if nb.cells and nb.cells[0].cell_type == "markdown" else 0, cell)
    return True


def check_colab_cell(nb, name: str, repo: str = COURSE_REPO, branch: str = BRANCH) -> list:
    """Problems with a notebook's Colab start: the badge in the title cell, then a first code cell
    tagged colab-install that does nothing off Colab and on Colab only clones `repo` and
    pip-installs that clone, importable at once (a plain install, or -e plus sys.path)."""
    import shlex
    problems, want = [], colab_url(name, repo, branch)
    first = nb.cells[0] if nb.cells else None
    if first is None or first.cell_type != "markdown" or BADGE_SVG not in first.source:
        problems.append("the first cell is not a markdown title cell with the 'Open in Colab' badge")
    elif want not in first.source:
        problems.append(f"the badge does not open {want} (python -m course_lib instructor check --fix-urls)")
    code = [c for c in nb.cells if c.cell_type == "code"]
    if not code or "colab-install" not in code[0].metadata.get("tags", []):
        return problems + ["the first code cell is not tagged colab-install"]
    off, on = colab_commands(code[0].source, False), colab_commands(code[0].source, True)
    again = colab_commands(code[0].source, True, installed=True)
    if off["error"] or off["shell"] or off["magics"] or off["path_added"]:
        problems.append(f"off Colab the cell must do nothing; it did {off}")
    if on["error"]:
        problems.append(f"on Colab the cell fails: {on['error']}")
    if not on["error"] and (again["error"] or again["shell"] or again["magics"]):
        problems.append("run again once the course is installed (a rerun, a restarted session), the cell must do "
                        f"nothing; it did {again}")
    clones, installs, editable = [], [], False
    commands = [(c, False) for c in on["shell"]] + [(f"pip {line}", True) for m, line in on["magics"] if m == "pip"]
    problems += [f"on Colab the cell also runs %{m}" for m, _ in on["magics"] if m not in ("pip", "cd")]
    for cmd, _ in commands:
        guarded = None
        for part in re.split(r"\|\||&&|;", cmd):
            words = shlex.split(part)
            if words[:2] == ["git", "clone"]:
                args = [w for w in words[2:] if not w.startswith("-") and not w.isdigit()]
                clones.append((args[0], args[1] if len(args) > 1 else "/content/" + args[0].rsplit("/", 1)[-1]))
                if guarded is None or guarded.rstrip("/") != clones[-1][1].rstrip("/") or "||" not in cmd:
                    problems.append(f"the clone is not guarded: a rerun would fail with 'already exists'; write "
                                    f"`test -d {clones[-1][1]} || git clone ...`")
            elif "pip" in " ".join(words[:3]) and "install" in words:
                rest = words[words.index("install") + 1:]
                editable |= "-e" in rest or "--editable" in rest
                installs += [w for w in rest if not w.startswith("-")]
                forced = [w for w in rest if w.split("=")[0] in UPGRADING]
                if forced:
                    problems.append(f"pip {' '.join(forced)} would replace packages Colab has (its ipywidgets 7 "
                                    "above all); pip's defaults add only what is missing")
            elif words[:2] in (["test", "-d"], ["[", "-d"]) and len(words) > 2:
                guarded = words[2]
            elif words and words[0] not in ("test", "[", "cd"):
                problems.append(f"on Colab the cell also runs: {part.strip()}")
    if [u.removesuffix(".git") for u, _ in clones] != [repo.removesuffix(".git")]:
        problems.append(f"on Colab the cell must clone {repo} once; it clones {[u for u, _ in clones]}")
    dirs = {d.rstrip("/") for _, d in clones}
    if not installs or any(t.rstrip("/") not in dirs for t in installs):
        problems.append(f"on Colab the cell must pip-install the clone {sorted(dirs)} and nothing else; it installs {installs}")
    if editable and not dirs & set(on["path_added"]):
        problems.append("an editable install is importable only after a runtime restart: add the clone to sys.path "
                        "or install without -e")
    return problems
