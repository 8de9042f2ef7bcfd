"""``new-exercise`` and ``rename-exercise``: an exercise folder written, or renamed with everything that names it.

    scaffold("grid_copy", "02")                          # exercises/grid_copy/ and the next steps
    rename("tile_32x8", "tile_64", kernel="transpose_64")   # the folder, its files, the lesson's cells

:func:`scaffold` writes ``exercise.toml`` (it loads: the schema holds), ``solution.cu`` with markers (its naive
solution passes the checker, its stub does not), ``stub.cu`` and a ``wrong.toml`` to fill in. :func:`rename`
moves ``exercises/OLD/`` to ``exercises/NEW/``, rewrites the key in its files' headers and, with ``kernel``,
the kernel's name in exercise.toml, solution.cu and wrong.toml; in the lesson's notebook it rewrites the key
in the get/check/reveal cells; the exercise cell becomes the new stub, and the check cell names the new
kernel, at the next ``check --sync-stubs``, which follows the kernel's new name. Every argument is checked
first, and a folder that cannot be written is said so, never a traceback. Nothing here runs a kernel.
"""
from __future__ import annotations

import re
from pathlib import Path

from ... import paths
from ...teach import solutions, spec

KEY = re.compile(r"[a-z][a-z0-9_]{0,39}")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")

TOML_TEMPLATE = '''# Exercise '{key}': everything but the solution (solution.cu) and the wrong kernels (wrong.toml), both
# instructor-only, and the stub (stub.cu, generated: python -m course_lib instructor check --sync-stubs).
# docs/INSTRUCTORS.md §7 lists every key.
title = "TODO: one line, what the kernel does"
lesson = "{lesson}"
kernel = "{kernel}"
points = 2
question = """
## Exercise: TODO

TODO: what to write, how it is launched, what the checker requires (the notebook shows this).
"""
reveal = ""                  # a course kernel (course_lib.transposes) reveal() shows after a pass, or "solution"
# properties by name (course_lib/teach/properties.py), with parameters: {{coalesced = {{op = "st"}}}}
# (the scaffold's naive solution passes these; add what the lesson is about)
properties = [{{coalesced = {{op = "ld"}}}}]

[launch]
kind = "tile"                # tile | batched | grid-stride | custom (grid = ["expressions of rows, cols"])
block = [32, 8]
tile = [32, 16]
'''

CU_TEMPLATE = '''//! Exercise '{key}' ({lesson}_*.ipynb): the instructor's version of the exercise's %%cuda cell.
//! The notebook holds this file without the //! lines and with each BEGIN/END SOLUTION block
//! replaced by its //> stub lines (stub.cu beside it, generated). Instructor-only: never in the wheel.
__global__ void {kernel}(float* out, const float* in, int rows, int cols)
{{
    // BEGIN SOLUTION
    //> // TODO: the student's starting point (these //> lines are the stub)
    int c = blockIdx.x * 32 + threadIdx.x;              // a naive transpose, two rows per thread
    int last = min(rows, (int)(blockIdx.y + 1) * 16);
    for (int r = blockIdx.y * 16 + threadIdx.y; r < last; r += 8)
        if (c < cols)
            out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
    // END SOLUTION
}}
'''

WRONG_TEMPLATE = '''# Wrong kernels of exercise '{key}': what a student who half-understood writes. Instructor-only: never
# published, never in the wheel (docs/INSTRUCTORS.md §7). Each [[wrong]] is solution.cu with `replace` applied
# ([old, new, old, new, ...], parameters as their names), or a whole cell body `source`; the checker's report
# on it must hold every one of `words` ("a|b": either). `mutations`: the mistakes course_lib/teach/mutants.py
# derives from the solution that must still apply to it. Three wrong kernels at least, derived ones included.
mutations = []

# [[wrong]]
# what = "rows and cols swapped in the load"
# replace = ["in[(size_t)r * cols + c]", "in[(size_t)c * rows + r]"]
# words = ["elements are wrong"]
'''


def _lessons() -> set[str]:
    found = paths.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if paths.NOTEBOOKS.is_dir() else ()
    return {p.name[:2] for p in found}


def _arguments(key: str, lesson: str | None, kernel: str | None) -> None:
    if not KEY.fullmatch(key or ""):
        raise ValueError(f"the key {key[:60]!r}{'...' if len(key) > 60 else ''} is not a key: lower_case_with_underscores, "
                         "ASCII, starting with a letter, at most 40 characters (it names a folder and a Python string)")
    if lesson is not None and not re.fullmatch(r"[0-9][0-9]", lesson):
        raise ValueError(f"--lesson {lesson!r}: the notebook's number, two ASCII digits such as 06")
    if lesson is not None and _lessons() and lesson not in _lessons():
        raise ValueError(f"--lesson {lesson}: no notebook {lesson}_*.ipynb in {paths.NOTEBOOKS} (the lessons: "
                         f"{', '.join(sorted(_lessons()))})")
    if kernel is not None and not IDENT.fullmatch(kernel):
        raise ValueError(f"--kernel {kernel!r}: the __global__ function's name, a C identifier (letters, digits, _; "
                         "no spaces or parentheses), at most 64 characters")


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: cannot write it ({exc.strerror}): check the folder's permissions") from None


def scaffold(key: str, lesson: str, kernel: str | None = None, root: Path | None = None) -> list[str]:
    """Write exercises/<key>/ (exercise.toml, solution.cu with markers, stub.cu, wrong.toml); the next steps."""
    _arguments(key, lesson, kernel)
    folder = Path(root or paths.EXERCISES) / key
    if folder.exists():
        raise ValueError(f"{folder} exists already: edit its files instead")
    kernel = kernel or key
    try:
        folder.mkdir(parents=True)
    except OSError as exc:
        raise ValueError(f"{folder}: cannot create it ({exc.strerror}): check that {folder.parent} is writable") from None
    _write(folder / spec.TOML, TOML_TEMPLATE.format(key=key, lesson=lesson, kernel=kernel))
    _write(folder / spec.SOLUTION, CU_TEMPLATE.format(key=key, lesson=lesson, kernel=kernel))
    _write(folder / spec.WRONG, WRONG_TEMPLATE.format(key=key))
    body = solutions._cell((folder / spec.SOLUTION).read_text())
    _write(folder / spec.STUB, f"{solutions.DOC} Generated from {spec.SOLUTION} (instructor-only) by `python -m "
           f"course_lib instructor check --sync-stubs`: edit {spec.SOLUTION}, not this file.\n"
           + solutions.strip_solutions(body) + "\n")
    nb = f"notebooks/{lesson}_*.ipynb"
    return [f"wrote {folder}/{{{spec.TOML},{spec.SOLUTION},{spec.STUB},{spec.WRONG}}}",
            f"1. edit {folder / spec.TOML}: title, question, signature, launch, properties (docs/INSTRUCTORS.md §7)",
            f"2. write the solution between the markers of {folder / spec.SOLUTION}, the stub as //> lines",
            f"3. in {nb}: a predict-then-see cell, then cl.exercises.get(\"{key}\"), a %%cuda cell, "
            f"cl.exercises.check(\"{key}\", {kernel}), cl.exercises.reveal(\"{key}\")",
            f"4. python -m course_lib instructor check --sync-stubs {nb}   (writes the cells and stub.cu, checks all)",
            f"5. python -m course_lib instructor refresh {nb}; then python -m pytest -n 0 tests/teach/test_exercises.py "
            f"-k {key} (write wrong kernels into {folder / spec.WRONG} until it has three)"]


def rename(old: str, new: str, kernel: str | None = None, root: Path | None = None,
           notebooks: Path | None = None) -> list[str]:
    """Rename exercise `old` to `new` (and its kernel to `kernel`): its folder, files and notebook cells."""
    _arguments(new, None, kernel)
    root = Path(root or paths.EXERCISES)
    src, dst = root / old, root / new
    if not (src / spec.TOML).is_file():
        raise ValueError(f"no exercise {old!r}: {src / spec.TOML} does not exist")
    if dst.exists():
        raise ValueError(f"{dst} exists already: choose another key")
    data = spec.read(src)
    was = data["kernel"]
    try:
        src.rename(dst)
    except OSError as exc:
        raise ValueError(f"{src} -> {dst}: cannot rename ({exc.strerror})") from None
    done = [f"moved exercises/{old}/ to exercises/{new}/"]
    for name in (spec.TOML, spec.SOLUTION, spec.STUB, spec.WRONG):
        f = dst / name
        if f.exists():
            text = f.read_text(encoding="utf-8").replace(f"Exercise '{old}'", f"Exercise '{new}'")
            if kernel:
                text = re.sub(rf"\b{re.escape(was)}\b", kernel, text)
            _write(f, text)
    if kernel:
        done.append(f"the kernel {was} is now {kernel} in exercises/{new}/ (exercise.toml, solution.cu, stub.cu, "
                    "wrong.toml)")
    return done + _rename_in_notebooks(old, new, data["lesson"], was, kernel, notebooks)


def _rename_in_notebooks(old, new, lesson, was, kernel, notebooks) -> list[str]:
    """The key in the lesson's get/check/reveal cells; the kernel's old name stays in the check cell, which is
    how --sync-stubs finds the exercise cell that still defines it (and then writes both anew)."""
    import nbformat
    folder = Path(notebooks or paths.NOTEBOOKS)
    done = []
    for path in sorted(folder.glob(f"{lesson}_*.ipynb")):
        nb = nbformat.read(path, 4)
        changed = 0
        for c in nb.cells:
            if c.cell_type != "code":
                continue
            text = re.sub(rf"(exercises\.(?:get|check|reveal|grade|variant|stub)\(\s*)(['\"]){old}\2",
                          rf"\g<1>\g<2>{new}\g<2>", c.source)
            changed += text != c.source
            c.source = text
        if changed:
            nbformat.write(nb, path)
            done.append(f"{path.name}: {changed} cell(s) name '{new}' now; next: python -m course_lib instructor "
                        f"check --sync-stubs {path.name} (the exercise cell becomes the new stub), then refresh it")
    return done
