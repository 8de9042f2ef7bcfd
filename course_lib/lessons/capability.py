"""Which GPU runs what: the oldest architecture for each course kernel and each notebook, from the compiler.

    python -m course_lib capability            # compile everything for every architecture, print the tables
    python -m course_lib capability --write    # ...and store them (course_lib/lessons/capability.json)
    capability.measure()                       # the tables, as course_lib.notebook.capability stores and words them

For every course kernel (course_lib.transposes' catalog, its default instance) and every ``%%cuda``
cell of the notebooks, :func:`measure` compiles the source to machine code (NVRTC and ptxas, so
inline PTX counts too) for each architecture of ``compile.archs.ARCHS`` (a cell with no Hopper-era
instruction for the oldest only, which every newer one then compiles too): the oldest architecture from which it compiles for
every newer one is the one it needs, and the Hopper-era instructions in its PTX (``archs.needs``)
say why. A notebook needs what its cells and the course kernels it names need. The stored table is
what README's "Which GPU runs what" and each notebook's banner show; tests/lessons/test_capability.py
compiles everything again and holds the stored table to the compiler. Nothing here runs a kernel.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from .. import paths
from ..compile import archs
from ..errors import CompileError
from ..notebook import magic
from ..notebook.capability import STORED, markdown
from ..transposes import catalog, transpose

_ITEMSIZE_DTYPE = {4: np.float32, 2: np.float16, 1: np.uint8, 8: np.float64}


def _kernel_modules():
    """{kernel key: (the RawModule of its default instance, file, lesson)} for every course kernel."""
    out = {}
    for key, spec in {**catalog.SPECS, **catalog.DEMOS}.items():
        size = 4 if 4 in spec.itemsizes else spec.itemsizes[0]
        fn = transpose.kernel(key, _ITEMSIZE_DTYPE[size]).function
        out[key] = (fn.module, spec.file, spec.lesson)
    return out


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
    targets = list(archs.ARCHS) if every or not plain else [archs.OLDEST]
    for sm in targets:
        try:
            module.cubin_for(sm)       # ptxas too: inline asm (stmatrix) passes NVRTC for any target
        except CompileError as exc:
            fails[sm] = exc.message.splitlines()[0]
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


def measure(notebooks=None) -> dict:
    """Compile everything for every architecture: {'kernels': {key: row}, 'notebooks': {stem: row}}."""
    kernels = {}
    for key, (module, file, lesson) in _kernel_modules().items():
        kernels[key] = {"file": file, "lesson": lesson, **_oldest(module)}
    books = {}
    for nb in notebooks or sorted(paths.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        cells, named = _cells(Path(nb))
        rows = {}
        for i, line, body in cells:
            try:
                module = magic.compile_cell(line, body)[0]
            except CompileError:         # a cell that shows a compile error on purpose (notebook 00)
                continue
            # named by its kernels, not its index: a cell inserted above must not change the table
            rows[f"cell {', '.join(module.source.names) or i}"] = _oldest(module, every=False)
        rows.update({k: kernels[k] for k in sorted(named)})
        lesson = Path(nb).name[:2]
        rows.update({k: r for k, r in kernels.items() if r["lesson"] == lesson})
        sm = max([r["sm"] or 0 for r in rows.values()], default=archs.OLDEST)
        books[Path(nb).stem] = {"sm": sm, "needs_newer": sorted(k for k, r in rows.items() if (r["sm"] or 0) > archs.OLDEST),
                                "why": sorted({w for r in rows.values() if (r["sm"] or 0) == sm > archs.OLDEST
                                               for w in r["why"]})}
    return {"archs": list(archs.ARCHS), "kernels": kernels, "notebooks": books}


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m course_lib capability", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"store the tables in {STORED.name}")
    args = ap.parse_args(argv)
    table = measure()
    if args.write:
        STORED.write_text(json.dumps(table, indent=1, sort_keys=False) + "\n")
    print(markdown(table))
    return 0
