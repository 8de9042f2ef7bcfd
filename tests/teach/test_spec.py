"""exercise.toml read strictly (issue 33 item 3, issue 36 item 4): every mistake an instructor made in the trial
is an error naming the file, the key and the fix — never a traceback, never a value quietly coerced or ignored.
Also: the schema's table is the one docs/INSTRUCTORS.md shows, declared signatures and their buffers, the
expressions a launch may use, ``{{ }}`` in prose, and ``instructor check``'s audit of every variant.
Each case edits a copy of a course folder; nothing here compiles except the audit's cases."""
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from course_lib.teach import audit, expr, schema, signature, spec
from course_lib.teach.exercise_list import folder

REPO = Path(__file__).resolve().parents[2]


def _copy(tmp_path, key="tile_32x8", *edits):
    """A copy of exercises/<key>/ with exercise.toml edited: (old, new) pairs, each old text present."""
    if not folder(key).is_dir():
        pytest.skip(f"no exercise {key} in this course (tests/lab/test_walk.py removes it, then adds it back)")
    copy = tmp_path / key
    shutil.copytree(folder(key), copy)
    toml = (copy / "exercise.toml").read_text()
    for old, new in edits:
        assert old in toml, old
        toml = toml.replace(old, new, 1)
    (copy / "exercise.toml").write_text(toml)
    return copy


def _refused(tmp_path, key, edits, *words):
    copy = _copy(tmp_path, key, *edits)
    with pytest.raises(spec.SpecError) as caught:
        spec.load(copy)
    text = f"{caught.value.message}\nhint: {caught.value.hint}"
    assert str(copy / "exercise.toml") in text and "Traceback" not in text, text
    for w in words:
        assert w in text, f"{w!r} not in\n{text}"
    return text


# (what the instructor wrote, (old, new) edits of a course folder, words the error must hold)
MISTAKES = [
    ("a top-level typo", "padded_tile", [("properties = ", "propertise = ")], ["propertise: no such key",
                                                                              "did you mean properties"]),
    ("a [hints] key that names no declared property", "aos_struct", [("no_races = ", "no_race = ")],
     ["hints.no_race", "names no property"]),
    ("a variant key typo", "tile_32x8", [("[[variants]]\nBY = 4", "[[variants]]\nBYY = 4")],
     ["variants[0].BYY", "no [params] BYY"]),
    ("copy as a string", "first_copy", [("copy = true", 'copy = "false"')], ["copy", "true or false, without quotes"]),
    ("points a fraction", "grid_copy", [("points = 2", "points = 2.7")], ["points", "whole number >= 0"]),
    ("points negative", "grid_copy", [("points = 2", "points = -5")], ["points", "whole number >= 0"]),
    ("lesson a number", "tile_32x8", [('lesson = "06"', "lesson = 6")], ["lesson", "two-digit string"]),
    ("lesson of no notebook", "tile_32x8", [('lesson = "06"', 'lesson = "99"')], ["lesson", "'99' matches no notebook"]),
    ("lesson in full-width digits", "tile_32x8", [('lesson = "06"', 'lesson = "０６"')], ["lesson", "two-digit"]),
    ("a float in a grid", "per_element", [('grid = ["rows * cols / BLOCK"]', 'grid = ["cols / 32.5"]')],
     ["launch.grid[0]", "32.5 is not a whole number"]),
    ("no shapes", "tile_32x8", [("kernel = ", "shapes = []\nkernel = ")], ["shapes", "non-empty list"]),
    ("a property-name typo", "padded_tile", [('"no_bank_conflicts"', '"no_bank_conflict"')],
     ["no property 'no_bank_conflict'", "did you mean 'no_bank_conflicts'"]),
    ("an unknown name in block", "tile_32x8", [('block = ["TILE", "BY"]', 'block = ["TILE * BYW", "BY"]')],
     ["launch.block[0]", "no name 'BYW'"]),
    ("an unknown name in tile", "tile_32x8", [('tile = ["TILE", "TILE"]', 'tile = ["BX * BYW", "TILE"]')],
     ["launch.tile[0]", "no name 'BX'"]),
    ("a brace naming no parameter in the question", "tile_32x8", [("{EACH} elements on the way in", "{EACHH} elements")],
     ["question", "{EACHH} names no parameter", "{{ and }}"]),
    ("kernel missing", "tile_32x8", [('kernel = "transpose_32x8"\n', "")], ["kernel: missing"]),
    ("a kernel name with a space", "tile_32x8", [('kernel = "transpose_32x8"', 'kernel = "my kernel()"')],
     ["kernel", "C identifier"]),
    ("a grid dividing by zero", "per_element", [('grid = ["rows * cols / BLOCK"]', 'grid = ["rows / (cols - cols)"]')],
     ["launch.grid", "division by zero"]),
    ("a property parameter typo", "tile_32x8", [('{coalesced = {op = "ld"}}', '{coalesced = {opp = "ld"}}')],
     ["coalesced takes op, not opp"]),
    ("a property op that is no op", "tile_32x8", [('{coalesced = {op = "ld"}}', '{coalesced = {op = "load"}}')],
     ["op = 'load'", "\"ld\" (loads) or \"st\""]),
    ("a variant of another type", "tile_32x8", [("[[variants]]\nBY = 4", '[[variants]]\nBY = "4"')],
     ["variants[0].BY", "not of the type of params.BY"]),
    ("a [launch] typo", "tile_32x8", [('kind = "tile"', 'knid = "tile"')], ["launch.knid: no such key"]),
    ("a kind that is none", "tile_32x8", [('kind = "tile"', 'kind = "tiled"')], ["launch.kind", "one of 'tile'"]),
    ("a grid on a tile launch", "tile_32x8", [('kind = "tile"', 'kind = "tile"\ngrid = ["8"]')],
     ["launch.grid", "one block per tile"]),
    ("a dtype that is none", "grid_copy", [("points = 2", 'points = 2\ndtypes = ["floaty"]')], ["dtypes", "'floaty'"]),
    ("a lowercase parameter", "tile_32x8", [("BY = 8\n", "BY = 8\nby = 8\n")], ["params.by", "UPPER_CASE"]),
    ("a shape not square where hidden.square", "inplace", [("[64, 64], [96, 96]", "[64, 64], [96, 97]")],
     ["[96, 97] is not square"]),
    ("an [args] table of no parameter", "inplace", [("[args.n]", "[args.m]")], ["[args.m]", "no parameter 'm'"]),
    ("an out buffer without expect", "inplace", [('expect = "transpose(a)"\n', "")], ["[args.a]", "needs expect"]),
    ("an expect naming no buffer", "aos_split", [('expect = "in[0::3]"', 'expect = "points[0::3]"')],
     ["expect", "'points' is not a buffer"]),
    ("a number's value of no size", "inplace", [('value = "rows"', 'value = "rowz"')], ["[args.n] value", "rowz"]),
    ("an [args] key typo", "inplace", [('role = "inout"', 'rolle = "inout"')], ["args.a.rolle: no such key"]),
    ("a hidden typo", "inplace", [("square = true", "sqaure = true")], ["hidden.sqaure: no such key"]),
]


@pytest.mark.parametrize("what,key,edits,words", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_every_mistake_is_an_error_naming_the_file_and_the_key(tmp_path, what, key, edits, words):
    _refused(tmp_path, key, edits, *words)


def test_unreadable_files_are_errors_too(tmp_path):
    copy = _copy(tmp_path)
    (copy / "exercise.toml").write_bytes(b'title = "\xff\xfe"\n')
    with pytest.raises(spec.SpecError, match="not UTF-8 text"):
        spec.load(copy)
    (copy / "exercise.toml").write_text("title = \n")
    with pytest.raises(spec.SpecError, match="exercise.toml: "):
        spec.load(copy)
    with pytest.raises(spec.SpecError, match="no such file"):
        spec.load(tmp_path / "nowhere")


def test_braces_escape_and_expressions_render():
    params = {"TILE": 32, "BY": 8}
    assert spec.render_text("{TILE} by {2 * BY}, {TILE / 3} tiles; {{TILE}} and {{ x }}", params) == \
        "32 by 16, 11 tiles; {TILE} and { x }"
    with pytest.raises(spec.SpecError, match="names no parameter"):
        spec.render_text("{TILLE}", params, "question")


def test_expressions_allow_what_a_launch_needs_and_nothing_else():
    tree = expr.parse("(cols / TILE) * (cols / TILE + 1) / 2", {"cols", "TILE"}, "grid")
    assert expr.evaluate(tree, {"cols": 100, "TILE": 32}) == 10                  # 4 * 5 / 2: / rounds up
    assert expr.number("min(TILE, 16) // 3 - -1", {"TILE": 32}, "k") == 6
    for bad, word in (("__import__('os')", "the only calls"), ("cols.real", "Attribute"), ("2 ** 3", "Pow"),
                      ("1.5", "whole number"), ("True", "whole number"), ("rows", "no name 'rows'")):
        with pytest.raises(expr.ExprError, match=re.escape(word)):
            expr.parse(bad, {"cols"}, "k")
    a = np.arange(12).reshape(4, 3)
    assert (expr.expect("transpose(in)", {"in": a}, {}) == a.T).all()
    assert (expr.expect("in[:, 1]", {"in": a}, {}) == a[:, 1]).all()
    assert (expr.expect("in[1::3]", {"in": a.ravel()}, {"rows": 4}) == a[:, 1]).all()
    for bad in ("in.T", "open(in)", "in + 1", "in[::rows.x]"):
        with pytest.raises(expr.ExprError):
            expr.expect(bad, {"in": a}, {"rows": 4})


def test_the_docs_hold_the_schema_table():
    """docs/INSTRUCTORS.md §7 shows schema.markdown() as it is: the table and the check never drift apart."""
    assert schema.markdown() in (REPO / "docs" / "INSTRUCTORS.md").read_text()


def test_a_declared_signature_builds_each_buffer_and_checks_a_students_parameter_list():
    args = signature.declare("float* xs, float* ys, const P* in, int n",
                             {"xs": {"expect": "in[0::2]"}, "ys": {"expect": "in[1::2]"},
                              "in": {"shape": ["rows * 2"]}, "n": {"value": "rows"}}, False, "here")
    p = signature.problem(args, (5, 2), np.float32, seed=1)
    assert p.initial["in"].shape == (10,) and (p.expected["ys"] == p.initial["in"][1::2]).all()
    assert np.isnan(p.buffers["xs"]).all() and p.launch[-1] == np.int32(5) and p.launch[2] is p.buffers["in"]
    from course_lib.compile.source import Kernel
    sig = lambda text: Kernel("k", None, text).signature()     # noqa: E731
    assert signature.mismatch(args, sig("float* a, float* b, const Point* pts, int count"), "k", (np.float32,)) is None
    assert "does not take" in signature.mismatch(args, sig("float* a, const Point* pts, int count"), "k", (np.float32,))[0]
    assert "moves double" in signature.mismatch(args, sig("double* a, double* b, const P* p, int n"), "k",
                                                (np.float32,))[0]
    assert "const" in signature.mismatch(args, sig("const float* a, float* b, const P* p, int n"), "k",
                                         (np.float32,))[0]


def test_get_shows_the_signature_the_stub_declares():
    from course_lib.teach import exercises as E, solutions
    for key in ("inplace", "aos_split"):
        ex = E.get(key)
        shown = re.search(r"write: __global__ void (\w+)\((.*)\)", repr(ex))
        assert shown[1] == ex.kernel and f"{ex.kernel}({shown[2]})" in solutions.stub(key)


def test_instructor_check_compiles_and_checks_every_variant(tmp_path, monkeypatch):
    """A [[variants]] table whose T the solution cannot compile with: the audit names it (8 of 40 students)."""
    n = len(spec.read(folder("padded_tile")).get("variants", []))
    copy = _copy(tmp_path, "padded_tile")
    with open(copy / "exercise.toml", "a") as f:
        f.write('\n[[variants]]\nT = "half"\n')
    monkeypatch.setattr("course_lib.teach.audit.folder", lambda key: copy)
    monkeypatch.setattr("course_lib.teach.variants.folder", lambda key: copy)
    monkeypatch.setattr("course_lib.teach.solutions.directory", lambda: tmp_path)
    found = audit.problems("padded_tile")
    assert len(found) == 1 and f"does not compile for variants[{n}] (T = 'half')" in found[0], found
    assert "[[variants]] table" in found[0]


def test_the_gpu_rerun_of_a_declared_signature_compares_every_buffer_it_wrote(monkeypatch):
    """runs.run_on_gpu with a stand-in for CuPy whose 'GPU' is the simulator: the in-place transpose's one buffer
    and the split's three come back and are compared (benchmarks/gpu_exercises_check.py runs it on a GPU)."""
    import sys
    import types
    from course_lib.notebook import magic
    from course_lib.teach import exercises as E, runs, solutions

    class Device(np.ndarray):
        def get(self):
            return np.array(self)
    fake = types.SimpleNamespace(asarray=lambda a: np.array(a).view(Device),
                                 cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(deviceSynchronize=lambda: None)))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    for key in ("inplace", "aos_split"):
        if not folder(key).is_dir():
            pytest.skip(f"no exercise {key} in this course")
        ex = E.get(key)
        fn = magic.compile_cell("", solutions.body(key))[1][ex.kernel]
        on_gpu = lambda grid, block, args, fn=fn: fn.simulate(grid, block, args, progress=False, echo=False)  # noqa: E731
        report = E.Report(key)
        runs.run_on_gpu(ex, on_gpu, np.float32, report, seed=0)
        assert report.passed == ["correct on the GPU too"] and not report.problems, repr(report)
        wrong = magic.compile_cell("", solutions.stub(key))[1][ex.kernel]
        report = E.Report(key)
        runs.run_on_gpu(ex, lambda g, b, a: wrong.simulate(g, b, a, progress=False, echo=False), np.float32, report, 0)
        if key == "inplace":        # its stub writes nothing; the split's stub is right (only slow), and said so
            assert "on the GPU, a 64x64 matrix: a: 4032 of 4096 elements are wrong" in report.problems[0][0]
        else:
            assert report.passed == ["correct on the GPU too"]
