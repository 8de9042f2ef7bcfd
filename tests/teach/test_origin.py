"""The course's kernel is not the student's, however it is dressed (issue 32), and an honest student passes.

- every exercise with a ``reveal``: its reveal kernel from kernels/ with each cosmetic edit (an extra ``;``,
  the template's constants written in, comments dropped, every variable renamed, two independent
  statements swapped) and all of them at once is refused by the checker, with words that say it is the
  course's kernel — also as each variant's kernel, and through the trusted grader (slow);
- the hole was open: with the code comparison switched off, such a copy passes the checker;
- every exercise's solution as a student writes it (every variant), and hand-written kernels in other words
  (tests/teach/honest.py), are not taken for a course kernel (and, slow, pass the whole check);
- the one kernel no check by code can tell from the course's: the textbook tile with ``__restrict__`` added
  to the stub's signature compiles to tile.cu's code (the stub's signature is what tells them apart);
- the fingerprint (``codeprint``) ignores what spelling changes and sees what the code changes.
Simulator only; nothing timed."""
import re

import numpy as np
import pytest

from course_lib import transposes
from course_lib.compile.source import C_NAME
from course_lib.notebook import magic
from course_lib.teach import codeprint, course_code, origin, spec, variants
from course_lib.teach import exercises as E
from course_lib.teach.exercise_list import folder

from dressing import EDITS, dressed
from honest import honest, own

REVEALED = sorted(k for k, ex in E.EXERCISES.items() if ex.reveal in transposes.SPECS)   # "solution": no kernel
ANSWERED = ("shared_tile", "padded_tile", "tile_32x8", "vectorized", "aos_struct", "packed_b16", "async_tile")


def _compile(cell: str, name: str):
    line, _, body = cell.partition("\n")
    return magic.compile_cell(line[len("%%cuda"):].strip(), body)[1][name]


def _reveal_instance(ex) -> str:
    return next(name for key, name in course_code.instances(ex) if key == ex.reveal)


def _refused(ex, fn) -> str:
    report = E.check(ex, fn, gpu=False)
    text = repr(report)
    assert not report.ok and "is the course's kernel" in text and "hint:" in text, text
    return text


@pytest.mark.slow
@pytest.mark.folder
@pytest.mark.parametrize("key", REVEALED)
def test_a_cosmetic_copy_of_the_reveal_kernel_is_the_course_s(key):
    ex = E.get(key)
    instance = _reveal_instance(ex)
    base = instance.split("<")[0]
    for edits in [(e,) for e in EDITS]:     # some are the same text still: refused by the older routes too
        text = _refused(ex, _compile(dressed(ex.reveal, instance, ex.kernel, *edits), ex.kernel))
        assert instance in text or f"'{base}' of kernels/" in text, (edits, text)
    text = _refused(ex, _compile(dressed(ex.reveal, instance, ex.kernel), ex.kernel))
    assert instance in text and "same code" in text, text                   # all at once: only the code tells


def _variants(key):
    base = spec.defaults(spec.read(folder(key)))
    return [spec.load(folder(key), {**base, **v}) for v in variants.declared(key)]


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(k for k in REVEALED if variants.declared(k)))
def test_a_cosmetic_copy_of_a_variant_s_reveal_kernel_is_the_course_s(key):
    for ex in _variants(key):
        instance = _reveal_instance(ex)
        assert C_NAME[np.dtype(ex.dtypes[0])] in instance, (ex.params, instance)      # the variant's type
        text = _refused(ex, _compile(dressed(ex.reveal, instance, ex.kernel), ex.kernel))
        assert instance in text, (ex.params, text)


def test_the_hole_was_open_a_dressed_tile_cu_passed_the_checker(monkeypatch):
    ex = E.get("tile_32x8")
    fn = _compile(dressed(ex.reveal, _reveal_instance(ex), ex.kernel), ex.kernel)
    monkeypatch.setattr(course_code, "same_code", lambda fn, ex: None)
    assert E.check(ex, fn, gpu=False).ok
    monkeypatch.undo()
    _refused(ex, fn)


@pytest.mark.slow
@pytest.mark.parametrize("key", ANSWERED)
def test_the_hole_was_open_for_every_exercise_a_course_kernel_answers(monkeypatch, key):
    """One of the reveal kernel's instances (its PAD, its STAGES...) passes the exercise when dressed: the first
    that does is the one shown (each is compiled and checked only until then)."""
    ex = E.get(key)
    copies = (_compile(dressed(ex.reveal, name, ex.kernel), ex.kernel)
              for name, (k, _, _) in course_code.table(ex).items() if k == ex.reveal)
    with monkeypatch.context() as m:
        m.setattr(course_code, "same_code", lambda fn, ex: None)
        passing = next((fn for fn in copies if E.check(ex, fn, gpu=False).ok), None)
    assert passing is not None
    _refused(ex, passing)


@pytest.mark.slow
@pytest.mark.folder
@pytest.mark.needs_solutions
@pytest.mark.parametrize("key", sorted(E.EXERCISES))
def test_an_honest_student_is_not_taken_for_the_course(key):
    """The solution in a student's words and the hand-written kernels of honest.py."""
    ex = E.get(key)
    for i, text in enumerate([own(key)] + honest(key)):
        fn = _compile("%%cuda\n" + text, ex.kernel)
        assert origin.borrowed(fn, ex) is None, (i, origin.borrowed(fn, ex))


@pytest.mark.slow
@pytest.mark.needs_solutions
@pytest.mark.parametrize("key", sorted(k for k in E.EXERCISES if variants.declared(k)))
def test_an_honest_student_of_any_variant_is_not_taken_for_the_course(key):
    for ex in _variants(key):
        fn = _compile("%%cuda\n" + own(key, dict(ex.params)), ex.kernel)
        assert origin.borrowed(fn, ex) is None, (ex.params, origin.borrowed(fn, ex))


@pytest.mark.slow
@pytest.mark.needs_solutions
@pytest.mark.parametrize("key", sorted(E.EXERCISES))
def test_the_honest_kernels_are_correct(key):
    """honest.py's kernels pass the whole check: they are what an honest student could hand in."""
    ex = E.get(key)
    for i, text in enumerate(honest(key)):
        report = E.check(key, _compile("%%cuda\n" + text, ex.kernel), gpu=False)
        assert report.ok, (i, repr(report))


@pytest.mark.needs_solutions
@pytest.mark.parametrize("key", ["shared_tile", "padded_tile", "tile_32x8"])
def test_the_textbook_tile_with_restrict_is_tile_cu_and_the_stub_s_signature_tells_them_apart(key):
    """The limit of a check by code: this solution with __restrict__ on both pointers compiles to tile.cu's
    instance, so it is refused; as the stub gives it (no __restrict__), the same algorithm passes."""
    ex = E.get(key)
    mine = own(key)
    restricted = re.sub(r"(\w[\w ]*)\* out, const (\w[\w ]*)\* in", r"\1* __restrict__ out, const \2* __restrict__ in",
                        mine, count=1)
    assert restricted != mine
    text = _refused(ex, _compile("%%cuda\n" + restricted, ex.kernel))
    assert "kernels/tile.cu" in text and "stub" in text
    assert origin.borrowed(_compile("%%cuda\n" + mine, ex.kernel), ex) is None


@pytest.mark.slow
@pytest.mark.parametrize("key", REVEALED)
def test_the_grader_gives_a_dressed_course_kernel_nothing(key):
    """Through the trusted grader (the sandbox, the course kernels' digests computed outside it)."""
    import nbformat

    from course_lib.lab.grader import sandbox, trusted
    try:
        sandbox.require()
    except sandbox.SandboxUnavailable as exc:
        pytest.skip(str(exc))
    ex = E.get(key)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(dressed(ex.reveal, _reveal_instance(ex), ex.kernel))]
    nb.cells[0].metadata["nbgrader"] = {"grade_id": f"{key}_kernel"}
    ok, text = trusted.grade(nb, key, [])
    assert not ok and "is the course's kernel" in text and _reveal_instance(ex) in text, text


# ------------------------------------------------------------------------------------ the fingerprint

TWO = """__global__ void k(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 8 + threadIdx.y;
    if (x < cols && y < rows) out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}"""


def _print(text):
    return codeprint.of(_compile("%%cuda\n" + text, "k"))


def test_the_fingerprint_ignores_spelling_and_order_and_sees_the_code():
    same = [TWO.replace("int x = blockIdx.x * 32 + threadIdx.x;\n    int y = blockIdx.y * 8 + threadIdx.y;",
                        "int b = threadIdx.y + 8 * blockIdx.y;\n    int a = threadIdx.x + blockIdx.x * 32;")
            .replace("x", "a").replace("y", "b").replace("blockIda", "blockIdx").replace("threadIda", "threadIdx")
            .replace("blockIdx.b", "blockIdx.y").replace("threadIdx.b", "threadIdx.y")
            .replace("blockIdx.a", "blockIdx.x").replace("threadIdx.a", "threadIdx.x"),
            TWO.replace("x < cols && y < rows", "cols > x && rows > y"),
            TWO.replace(";", ";;").replace("{", "{ // a comment\n")]
    assert all(_print(t) == _print(TWO) for t in same)
    other = [TWO.replace("8 + threadIdx.y", "8 + threadIdx.y + 0 * cols").replace("rows + y", "rows + y + 1"),
             TWO.replace("(size_t)x * rows + y", "(size_t)y * rows + x"),
             TWO.replace("float* out, const float* in", "float* __restrict__ out, const float* __restrict__ in")]
    assert all(_print(t) != _print(TWO) for t in other)
