"""What a revealed course kernel changes against the one an earlier lesson's exercise revealed.

    note, lines = reveal_diff.against(ex, exercises)   # ('Against notebook 04's `tile` ...', {28})

When two exercises reveal kernels of the same file (notebook 04's ``tile`` and notebook 05's
``padded`` are both kernels/tile.cu), the later reveal would show the same text again. The
difference lies in the catalog's parameters (``PAD = 0`` there, ``1`` here): the lines of code
that use a changed parameter are the lines that differ, and the note names them, so that a
student who passed sees the one line the lesson was about. It reads the catalog and the kernel
files only; it runs nothing and decides nothing about passing.
"""
from __future__ import annotations

import re

from .. import transposes


def _params(e) -> dict:
    """The revealed kernel's parameters: the catalog's defaults, with those the exercise's reveal gives."""
    return {**transposes.SPECS[e.reveal].defaults, **dict(getattr(e, "reveal_params", ()))}


def _earlier(ex, others):
    """The exercise of the closest earlier lesson whose revealed kernel lives in the same file."""
    specs = transposes.SPECS
    mine = specs.get(ex.reveal)
    if mine is None:
        return None
    same = [o for o in others if o.key != ex.key and o.lesson < ex.lesson and o.reveal in specs
            and specs[o.reveal].file == mine.file and _params(o) != _params(ex)]
    return max(same, key=lambda o: o.lesson, default=None)


def against(ex, others) -> tuple[str, set]:
    """(a note naming the lines that differ from the earlier lesson's revealed kernel, their line
    numbers in the file); ('', set()) when no earlier exercise revealed a kernel of the same file."""
    before = _earlier(ex, others)
    if before is None:
        return "", set()
    new, old = _params(ex), _params(before)
    changed = {k: (old.get(k), new.get(k)) for k in {*old, *new} if old.get(k) != new.get(k)}
    if not changed:
        return "", set()
    source = transposes.kernel(ex.reveal).source.splitlines()
    uses = re.compile(r"\b(" + "|".join(map(re.escape, changed)) + r")\b")
    lines = {n for n, text in enumerate(source, 1)
             if uses.search(text.split("//")[0]) and not text.lstrip().startswith("template")}
    said = ", ".join(f"{k} = {b} where notebook {before.lesson}'s `{before.reveal}` has {a}" for k, (a, b) in changed.items())
    shown = "; ".join(f"line {n}: `{source[n - 1].strip()}`" for n in sorted(lines))
    mine = dict(ex.params)
    own = [f"{k} = {mine[k]}" for k in changed if k == "PAD" and k in mine and mine[k] != changed[k][1]]
    yours = (f" Your exercise's elements are `{mine.get('T', 'float')}`, which need {', '.join(own)}: the padding "
             "is one 4-byte bank, counted in elements." if own else "")
    return (f"The same file as notebook {before.lesson}'s `{before.reveal}`, with {said}: that changes "
            f"{len(lines)} line{'s' if len(lines) != 1 else ''} — {shown} (marked below); everything else is "
            f"notebook {before.lesson}'s kernel.{yours}"), lines
