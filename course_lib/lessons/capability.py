"""Which GPU runs what: the oldest architecture for each course kernel and each notebook, from the compiler.

    python -m course_lib capability            # compile everything for every architecture, print the tables
    python -m course_lib capability --write    # ...and store them (course_lib/lessons/capability.json)
    capability.measure()                       # the tables, as course_lib.notebook.capability stores and words them

For every course kernel (course_lib.transposes' catalog, its default instance) and every ``%%cuda``
cell of the notebooks, :func:`measure` compiles the source to machine code (NVRTC and ptxas, so
inline PTX counts too) for the architectures of ``compile.archs.ARCHS``, newest first, down to the
first that refuses it (a cell with no Hopper-era instruction for the oldest only, which every newer
one then compiles too): the oldest architecture from which it compiles for every newer one is the
one it needs, the refusal just below says why when the feature rules do not, and the Hopper-era
instructions in its PTX (``archs.needs``) say why when they do. A notebook needs what its cells and
the course kernels it names need. The stored table is what README's "Which GPU runs what" and each
notebook's banner show; tests/lessons/test_capability.py compiles everything again and holds the
stored table to the compiler. Nothing here runs a kernel.

Every answer of the compiler, a refusal included, is kept in the compile cache (``compile.cache``):
a second run compiles nothing (seconds, where the first takes a minute or two). The command says
first, in one line, when that cache cannot be used, and shows what it compiles while it takes long.
"""
from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import numpy as np

from .. import paths
from ..compile import archs, cache
from ..errors import CompileError
from ..notebook import magic
from ..notebook.capability import STORED, markdown
from ..transposes import catalog, transpose

_ITEMSIZE_DTYPE = {4: np.float32, 2: np.float16, 1: np.uint8, 8: np.float64}


def _kernel_specs(keys=None) -> dict:
    """{kernel key: Spec} of the course kernels (or of `keys`)."""
    return {k: spec for k, spec in {**catalog.SPECS, **catalog.DEMOS}.items() if keys is None or k in keys}


def _kernel_module(key, spec):
    """The RawModule of the course kernel's default instance (4-byte elements where it moves them)."""
    size = 4 if 4 in spec.itemsizes else spec.itemsizes[0]
    return transpose.kernel(key, _ITEMSIZE_DTYPE[size]).function.module


def _cells(nb_path: Path):
    """(index, magic line, body) of each %%cuda cell, and the course kernels the notebook's code names."""
    nb = json.loads(nb_path.read_text())
    cells, named = [], set()
    keys = set(catalog.SPECS) | set(catalog.DEMOS)
    for i, c in enumerate(nb["cells"]):
        src = "".join(c["source"]) if c["cell_type"] == "code" else ""
        if src.startswith("%%cuda"):
            line, _, body = src.partition("\n")
            cells.append((i, line[len("%%cuda"):].strip(), body))
        else:
            named |= {k for k in re.findall(r"""["'](\w+)["']""", src) if k in keys}
    return cells, named


def _oldest(module, every: bool = True) -> dict:
    """{'sm': oldest architecture it compiles for (with every newer one), 'why': [...], 'fails': {sm: error}}.
    With every=False, source whose sm_90 code uses none of archs.FEATURES is compiled for the oldest
    architecture only: what compiles there compiles for every newer one (no course cell uses an
    instruction a newer GPU dropped); a cell that fails there, or uses a feature, gets every architecture."""
    fails, plain = {}, not archs.used(module.ptx)
    targets = sorted(archs.ARCHS, reverse=True) if every or not plain else [archs.OLDEST]
    for sm in targets:              # newest first: below the first refusal, nothing changes the answer
        try:
            module.cubin_for(sm)       # ptxas too: inline asm (stmatrix) passes NVRTC for any target
        except CompileError as exc:
            fails[sm] = exc.message.splitlines()[0]
            break
    if not every and plain and fails:
        return _oldest(module, every=True)
    newer_ok = [sm for sm in archs.ARCHS if all(s not in fails for s in archs.ARCHS if s >= sm)]
    sm = min(newer_ok) if newer_ok else None
    needed, features = archs.needs(module.ptx)
    if sm is None:
        why = ["compiles for none of " + ", ".join(f"sm_{a}" for a in archs.ARCHS)]
    elif sm == needed:
        why = [str(f) for f in features]
    elif sm < needed:      # e.g. cuda_pipeline.h: below sm_80 its copies are ordinary loads and stores
        why = [f"its sm_90 code uses {', '.join(f.name for f in features)}; for older GPUs the CUDA headers "
               "do the same work with ordinary loads and stores"]
    else:
        why = [f"the compiler: {fails[max(s for s in archs.ARCHS if s < sm)]}"]
    return {"sm": sm, "features_sm": needed, "why": why, "fails": {str(k): v for k, v in fails.items()}}


def measure(notebooks=None, kernels=None, progress=None) -> dict:
    """Compile everything for every architecture: {'kernels': {key: row}, 'notebooks': {stem: row}}.
    `notebooks`: paths (default: the course's; [] for none); `kernels`: keys (default: every course kernel);
    `progress(done, total, what)`: called before each kernel and notebook."""
    specs = _kernel_specs(kernels)
    books_paths = sorted(paths.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")) if notebooks is None else list(notebooks)
    say = progress or (lambda done, total, what: None)
    table = {}
    for n, (key, spec) in enumerate(specs.items()):
        say(n, len(specs) + len(books_paths), f"kernel {key}")
        table[key] = {"file": spec.file, "lesson": spec.lesson, **_oldest(_kernel_module(key, spec))}
    books = {}
    for n, nb in enumerate(books_paths):
        say(len(specs) + n, len(specs) + len(books_paths), f"notebook {Path(nb).stem}")
        books[Path(nb).stem] = _notebook(Path(nb), table)
    return {"archs": list(archs.ARCHS), "kernels": table, "notebooks": books}


def _notebook(nb: Path, kernels: dict) -> dict:
    """A notebook's row: what its %%cuda cells and the course kernels it names (or belong to its lesson) need."""
    cells, named = _cells(nb)
    rows = {}
    for i, line, body in cells:
        try:
            module = magic.compile_cell(line, body)[0]
        except CompileError:         # a cell that shows a compile error on purpose (notebook 00)
            continue
        # named by its kernels, not its index: a cell inserted above must not change the table
        rows[f"cell {', '.join(module.source.names) or i}"] = _oldest(module, every=False)
    rows.update({k: kernels[k] for k in sorted(named) if k in kernels})
    rows.update({k: r for k, r in kernels.items() if r["lesson"] == nb.name[:2]})
    sm = max([r["sm"] or 0 for r in rows.values()], default=archs.OLDEST)
    return {"sm": sm, "needs_newer": sorted(k for k, r in rows.items() if (r["sm"] or 0) > archs.OLDEST),
            "why": sorted({w for r in rows.values() if (r["sm"] or 0) == sm > archs.OLDEST for w in r["why"]})}


class _Shown:
    """What the command is compiling, on stderr: a line rewritten in place in a terminal; elsewhere (a log, CI)
    a line now and then, so a long first run is never silent."""

    def __init__(self, stream=None, every_s=10.0):
        self.stream = stream or sys.stderr
        self.tty = getattr(self.stream, "isatty", lambda: False)()
        self.start, self.last, self.every_s, self.width = time.monotonic(), None, every_s, 0

    def __call__(self, done, total, what):
        now = time.monotonic()
        text = f"capability: {done} of {total} compiled ({now - self.start:.0f} s), now {what}"
        if self.tty:
            self.stream.write("\r" + text.ljust(self.width))
            self.width = len(text)
        elif self.last is None or now - self.last >= self.every_s:
            self.stream.write(text + "\n")
            self.last = now
        self.stream.flush()

    def close(self):
        if self.tty and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m course_lib capability", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"store the tables in {STORED.name}")
    args = ap.parse_args(argv)
    cache.private_dir()                 # a cache that cannot be used is said now, not after minutes of compiling
    shown = _Shown()
    try:
        table = measure(progress=shown)
    finally:
        shown.close()
    if args.write:
        STORED.write_text(json.dumps(table, indent=1, sort_keys=False) + "\n")
    print(markdown(table))
    return 0
