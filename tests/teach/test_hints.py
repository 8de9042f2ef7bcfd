"""The hint a wrong result gets names the cause a student can act on (issue 25): the untouched stub of
notebook 03 (every thread stores to the same element), a wrong block-to-tile mapping, a tile padded by 2
(2-way, not one bank) and notebook 12's cp.async kernel that reads before its copies land (out written,
but with poison). Simulator only; nothing timed."""
import pytest

from course_lib.notebook import magic
from course_lib.teach import exercises as E
from course_lib.teach import solutions


def _report(key, pairs=(), source=None):
    src = source if source is not None else solutions.body(key)
    for old, new in zip(pairs[::2], pairs[1::2]):
        assert old in src
        src = src.replace(old, new)
    ex = E.get(key)
    return repr(E.check(ex, magic.compile_cell("", src)[1][ex.kernel]))


def _hint_of_first_problem(text):
    return next(line for line in text.splitlines() if "hint:" in line)


def test_the_untouched_stub_hears_that_every_thread_stores_to_one_place():
    hint = _hint_of_first_problem(_report("column_read", source=solutions.stub("column_read")))
    assert "same" in hint and "threadIdx" in hint and "out[c * rows + r]" not in hint


def test_a_wrong_block_to_tile_mapping_gets_its_own_hint():
    hint = _hint_of_first_problem(_report("column_read", ("int r = blockIdx.y * 32", "int r = blockIdx.x * 32",
                                                           "int c = blockIdx.x * 8", "int c = blockIdx.y * 8")))
    assert "blockIdx" in hint and "tile" in hint and "out[c * rows + r]" not in hint


def test_a_tile_padded_by_two_banks_is_not_told_one_bank():
    text = _report("padded_tile", ("[32 + 2]", "[32 + 4]"))        # 2-byte elements: 4 of them are two banks
    assert "2.0 wavefronts per request" in text and "hit one bank" not in text


def test_the_padding_hint_asks_for_the_idea_before_the_fix():
    """padded_tile's first hint leads to banks and element sizes; it does not hand over `[32][32 + 2]`."""
    text = _report("padded_tile", ("[32 + 2]", "[32 + 1]"))        # one element: half a bank, still 1.5-way
    hint = _hint_of_first_problem(text)
    assert "1.5 wavefronts per request" in text and "4 bytes wide" in hint and "how many bytes is one unsigned short" in hint
    assert "[32][32 + 2]" not in hint and "[32][32 + ?]" in hint


def test_reading_before_the_copies_land_is_not_told_nothing_was_written():
    text = _report("async_tile", ("__pipeline_wait_prior(0);", "__pipeline_wait_prior(1);"))
    hint = _hint_of_first_problem(text)
    assert "nothing was written" not in hint and "reads the tile before the cp.async copy of line" in hint


# ------------------------------------------------------------------------------------------ issue 36
# Hints ordered by likely cause: the first hint is the one the evidence supports best, the wrong elements'
# pattern is named, and no hint speaks of what the kernel does not have. Notebook 04's kernels are written
# whole, as the student trial wrote them; the others are the exercise's solution with the one mistake.

def _student(body_of_store, load_bounds="col < cols && row < rows"):
    return ("__global__ void transpose_tile(float* out, const float* in, int rows, int cols)\n"
            "{\n"
            "    __shared__ float tile[32][32];\n"
            "    int col = blockIdx.x * 32 + threadIdx.x;\n"
            "    int row = blockIdx.y * 32 + threadIdx.y;\n"
            f"    if ({load_bounds})\n"
            "        tile[threadIdx.y][threadIdx.x] = in[row * cols + col];\n"
            "    __syncthreads();\n" + body_of_store + "}\n")


RIGHT_STORE = ("    int out_col = blockIdx.y * 32 + threadIdx.x;\n"
               "    int out_row = blockIdx.x * 32 + threadIdx.y;\n"
               "    if (out_col < rows && out_row < cols)\n"
               "        out[out_row * rows + out_col] = tile[threadIdx.x][threadIdx.y];\n")
STORE_GUARDED_BY_LOADS_TEST = RIGHT_STORE.replace("if (out_col < rows && out_row < cols)",
                                                  "if (out_col < cols && out_row < rows)")
BLOCKS_NOT_SWAPPED = RIGHT_STORE.replace("blockIdx.y * 32 + threadIdx.x", "blockIdx.x * 32 + threadIdx.x").replace(
    "blockIdx.x * 32 + threadIdx.y", "blockIdx.y * 32 + threadIdx.y")
UNTURNED = RIGHT_STORE.replace("= tile[threadIdx.x][threadIdx.y]", "= tile[threadIdx.y][threadIdx.x]")
NO_BARRIER = _student(RIGHT_STORE).replace("    __syncthreads();\n", "")


# (key, the mistake, the student's kernel: its whole text or (old, new, ...) on the solution,
#  words of the first problem, words of its hint, words no hint (nor 'already right') may hold). The slips that
#  are replacements in an exercise's solution live in its folder's wrong.toml (first, hint, never), where an
#  edit of the exercise meets them: tests/teach/test_exercises.py checks them.
FIRST = [
    ("shared_tile", "the store guarded by the load's bounds test (student trial)", _student(STORE_GUARDED_BY_LOADS_TEST),
     ["Out of bounds store", "'out'"], ["bounds test", "row < cols and col < rows"],
     ["blockIdx picks", "whole tiles", "loop", "spread over"]),
    ("shared_tile", "the block indices not swapped for the store (student trial)", _student(BLOCKS_NOT_SWAPPED),
     ["every tile off the diagonal is wrong and every tile on it right"], ["swap the block indices", "blockIdx.x"],
     ["spread over", "loop"]),
    ("shared_tile", "the tile read back untransposed (an index swap)", _student(UNTURNED),
     ["only the elements on the tile's own diagonal are right"], ["not turned inside", "tile[threadIdx.x][threadIdx.y]"],
     ["loop", "spread over"]),
    ("shared_tile", "no barrier between the phases", NO_BARRIER,
     ["no races on shared memory", "RAW hazard"], ["__syncthreads() between the two phases"], ["loop"]),
]


@pytest.mark.parametrize("key,what,kernel,first,hint_words,never", FIRST, ids=[f"{c[0]}: {c[1]}" for c in FIRST])
def test_the_first_hint_is_the_one_the_evidence_supports_best(key, what, kernel, first, hint_words, never):
    if isinstance(kernel, str):
        ex = E.get(key)
        report = E.check(ex, magic.compile_cell("", kernel)[1][ex.kernel])
    else:
        ex = E.get(key)
        src = solutions.body(key)
        for old, new in zip(kernel[::2], kernel[1::2]):
            assert old in src, f"{key}: {old!r} is not in the solution"
            src = src.replace(old, new)
        report = E.check(ex, magic.compile_cell("", src)[1][ex.kernel])
    text = repr(report)
    assert not report.ok, f"{what}: passed"
    what_first, hint_first = report.problems[0]
    for w in first:
        assert w in what_first, f"{what}: {w!r} is not in the first problem\n{text}"
    for w in hint_words:
        assert w in hint_first, f"{what}: {w!r} is not in the first hint\n{text}"
    for w in never:
        assert w not in text, f"{what}: a false hint, {w!r}\n{text}"


def test_the_store_guarded_by_the_loads_test_names_the_band_beyond_rows_second():
    """The student trial's kernel: after the out-of-bounds store, the wrong result names where it is wrong —
    out's rows from `rows` on, a limit of in — and the bounds test, never 'which blockIdx picks the columns'."""
    ex = E.get("shared_tile")
    report = E.check(ex, magic.compile_cell("", _student(STORE_GUARDED_BY_LOADS_TEST))[1][ex.kernel])
    what, hint = report.problems[1]
    assert "out's rows 96..159" in what and "which is rows" in what and "96x160" in what
    assert "bounds test" in hint and "out is cols x rows" in hint and "blockIdx" not in hint


def test_a_kernel_without_loops_hears_of_none():
    """Before: a 32x32 kernel with no loop was told 'one loop per phase' for its unwritten-shared read."""
    ex = E.get("shared_tile")
    for kernel in (_student(STORE_GUARDED_BY_LOADS_TEST), _student(BLOCKS_NOT_SWAPPED), _student(UNTURNED)):
        text = repr(E.check(ex, magic.compile_cell("", kernel)[1][ex.kernel]))
        assert "reads only shared memory that was written" in text and "loop" not in text, text


@pytest.mark.parametrize("key", ["first_copy", "per_element", "grid_copy", "column_read", "shared_tile", "tile_32x8",
                                 "vectorized", "async_tile"])
def test_a_stub_that_writes_nothing_is_told_nothing_is_already_right(key):
    """Before: the untouched stubs heard 'already right: each element loaded and stored once' (or coalesced
    stores) of a kernel that stored nothing, or one element many times."""
    ex = E.get(key)
    report = E.check(ex, magic.compile_cell("", solutions.stub(key))[1][ex.kernel])
    assert not report.ok and not report.passed and "already right" not in repr(report), repr(report)


def test_each_element_once_is_not_said_of_a_kernel_that_moved_only_some():
    from course_lib.teach.properties import Shape, each_element_once
    from types import SimpleNamespace
    run = SimpleNamespace(instructions=[dict(space="global", op="ld", requests=1, bytes=64),
                                        dict(space="global", op="st", requests=1, bytes=64)], atomics=[])
    on = Shape(8, 8, 4)                       # 256 bytes each way, 64 moved
    assert each_element_once().test(run, on) is False
    run.instructions[1]["bytes"] = 512        # stored twice as much, loaded too little: the double store is named
    assert "more than once" in each_element_once().test(run, on)
