"""The ways a checker could be fooled (issue 18), each a rejected case with what is wrong and a hint:

- the course's own kernel, by every route (``transposes.kernel(...).function``, ``RawModule(path=)``,
  the file's text, ``#include`` with ``-i``, the body pasted under another name); a solution's text
  in a graded run;
- a correct result from a grid whose work is not spread (block (0, 0) does every tile);
- redundant traffic (every element stored twice) that per-request ratios do not see;
- 32-bit offsets, where the exercise asks for 64 (a launch over 2^32 elements, a few blocks simulated);
- a slow kernel is called slow, and "endless" is kept for a loop that does not end;
- notebook 12's cp.async tile: ordinary loads beside a few cp.async copies, and the tile's elements
  brought by another route (atomics, which no load counter sees) beside cp.async copies of one row.

Each hole is first shown open (the checker with that check switched off accepts the kernel), so a
test here cannot pass by accident. Simulator only; nothing timed."""
import dataclasses
import re

import numpy as np
import pytest

import course_lib as cl
from course_lib import paths
from course_lib.notebook import magic
from course_lib.teach import exercises as E
from course_lib.teach import footprint, origin, solutions

SOL = {key: solutions.body(key) for key in solutions.keys()}


def _kernel(source, name, line=""):
    return magic.compile_cell(line, source)[1][name]


def _report(key, fn, **options):
    report = E.check(key, fn, gpu=False, **options)
    text = repr(report)
    assert not report.ok and "hint:" in text and "Traceback" not in text, text
    return text


def _open_without(monkeypatch, key, fn, *switched_off, **options):
    """The hole is real: with these checks switched off, the checker accepts the kernel."""
    with monkeypatch.context() as m:
        for module, name, value in switched_off:
            m.setattr(module, name, value)
        report = E.check(key, fn, gpu=False, **options)
    assert report.ok, repr(report)


NOT_MINE = (origin, "borrowed", lambda fn, ex=None: None)
NOT_SPREAD = (footprint, "spread", lambda *a: [])
NO_TRAFFIC = (footprint, "traffic", lambda *a: [])
NOT_WIDE = (footprint, "wide", lambda *a: [])


# ------------------------------------------------------------------------------------ the course's kernels

def _answers(ex, t) -> bool:
    """The course kernel `t` is launched as exercise `ex` is: the same block, tile and output (then it answers it)."""
    return (not ex.custom and ex.grid is None and len(ex.shapes[0]) == 2 and tuple(t.block) == tuple(ex.block[:2])
            and tuple(t.tile) == ex.tile and t.is_copy == ex.copy and not t.swap_grid and t._grid is None)


# every exercise whose reveal is a course kernel, with the parameters its folder gives (so a 64x64 tile_32x8
# reveals, and is answered by, tile<float, 64, 8, 1>); and two whose reveal is a pipeline, answered by one stage
COURSE = [(key, ex.reveal, dict(ex.reveal_params)) for key, ex in sorted(E.EXERCISES.items())
          if ex.reveal in cl.transposes.SPECS and not ex.custom]
COURSE += [("vectorized", "vec", {"PAD": 1}), ("async_tile", "async", {"STAGES": 1, "TILES": 1})]


@pytest.mark.parametrize("key,course,params", COURSE, ids=[f"{c[0]}-{c[1]}" for c in COURSE])
def test_the_course_kernel_is_refused(monkeypatch, key, course, params):
    ex = E.get(key)
    t = cl.transposes.kernel(course, ex.dtypes[0], **params)
    text = _report(key, t.function)                                    # the idiom notebook 06 shows
    assert "course's own kernel" in text and "not one you wrote" in text and "%%cuda cell" in text


def test_the_hole_is_real_course_kernels_answer_at_least_three_exercises_as_their_folders_reveal_them(monkeypatch):
    answered = []
    for key, course, params in COURSE:
        ex = E.get(key)
        t = cl.transposes.kernel(course, ex.dtypes[0], **params)
        if _answers(ex, t):
            with monkeypatch.context() as m:
                m.setattr(*NOT_MINE)
                if E.check(key, t.function, gpu=False).ok:
                    answered.append(key)
    assert len(answered) >= 3, answered


TILE_CU = (paths.KERNELS / "tile.cu").read_text()
EXPR = "tile<float, 32, 32, 0>"


@pytest.mark.parametrize("route", ["path", "code", "include", "pasted", "renamed"])
def test_the_course_kernel_is_refused_by_every_route(monkeypatch, route):
    if route == "path":
        fn = cl.RawModule(path="tile", name_expressions=[EXPR]).get_function(EXPR)
    elif route == "code":
        fn = cl.RawModule(code=TILE_CU, name_expressions=[EXPR]).get_function(EXPR)
    elif route == "include":
        fn = _kernel('#include "tile.cu"\n', "transpose_tile", f'-i "transpose_tile={EXPR}"')
    elif route == "pasted":
        fn = _kernel(TILE_CU, "transpose_tile", f'-i "transpose_tile={EXPR}"')
    else:   # the body under the exercise's name, comments and spacing changed
        body = TILE_CU.replace("void tile(", "void transpose_tile(").replace("// column of in", "")
        fn = _kernel("\n".join("  " + line for line in body.splitlines()), "transpose_tile",
                     '-i "transpose_tile=transpose_tile<float, 32, 32, 0>"')
    if route != "include":                  # included, its parameters are not even in the cell
        _open_without(monkeypatch, "shared_tile", fn, NOT_MINE)
    text = _report("shared_tile", fn)
    assert "kernels/tile.cu" in text


def test_the_same_algorithm_in_the_students_own_words_passes():
    """A kernel like the course's tile.cu, written out (no template, literals): not the course's."""
    mine = ("__global__ void transpose_tile(float* out, const float* in, int rows, int cols)\n{\n"
            "    __shared__ float t[32][32];\n"
            "    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;\n"
            "    if (x < cols && y < rows) t[threadIdx.y][threadIdx.x] = in[(size_t)y * cols + x];\n"
            "    __syncthreads();\n"
            "    x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;\n"
            "    if (x < rows && y < cols) out[(size_t)y * rows + x] = t[threadIdx.x][threadIdx.y];\n}\n")
    assert E.check("shared_tile", _kernel(mine, "transpose_tile"), gpu=False).ok


# ------------------------------------------------------------------------------------ solutions' text

def _uncommented(src):
    return "\n".join(line.split("//")[0].rstrip() for line in solutions.solved(src).splitlines())


@pytest.mark.parametrize("key", sorted(SOL))
def test_a_solution_file_is_refused_and_its_text_too_in_a_graded_run(monkeypatch, key):
    """Self-study and the instructor copy accept the solution's text (test_exercises.py: every solution
    passes); a graded run refuses it. The same code in a student's words passes (the last test here)."""
    ex = E.get(key)
    from_file = cl.RawModule(code=solutions.file_text(key)).get_function(ex.kernel)   # parameters rendered
    assert "solution file" in _report(key, from_file)
    monkeypatch.setenv("COURSE_LIB_GRADED", "1")
    assert "markers" in _report(key, _kernel(SOL[key], ex.kernel))
    if origin._own_comments(key, SOL[key]):
        copied = _kernel(solutions.solved(SOL[key]), ex.kernel)
        assert "is the solution's" in _report(key, copied)


# ------------------------------------------------------------------------------------ the grid's work

ONE_BLOCK = """__global__ void transpose_tile(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][32];
    if (blockIdx.x != 0 || blockIdx.y != 0) return;         // block (0, 0) does every tile
    for (int by = 0; by * 32 < rows; ++by)
        for (int bx = 0; bx * 32 < cols; ++bx) {
            int x = bx * 32 + threadIdx.x, y = by * 32 + threadIdx.y;
            if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[(size_t)y * cols + x];
            __syncthreads();
            x = by * 32 + threadIdx.x; y = bx * 32 + threadIdx.y;
            if (x < rows && y < cols) out[(size_t)y * rows + x] = tile[threadIdx.x][threadIdx.y];
            __syncthreads();
        }
}
"""


SMALL = [(64, 64), (96, 160), (100, 130), (1, 300), (300, 1)]      # where one block's loop stays quick


def test_one_block_doing_every_tile_is_refused(monkeypatch):
    fn = _kernel(ONE_BLOCK, "transpose_tile")
    _open_without(monkeypatch, "shared_tile", fn, NOT_SPREAD, shapes=SMALL)
    text = _report("shared_tile", fn, shapes=SMALL)
    assert "on a 64x64 matrix, block (0, 0, 0) moved 4 tiles (rows 0-31, columns 0-31; rows 0-31, columns 32-63; " \
           "...) while blocks (1, 0, 0), (0, 1, 0), (1, 1, 0) moved none: one tile per block" in text, text
    assert "spread the work over the grid" in text
    text = _report("shared_tile", fn)         # on 1000x1030 the step limit or the projection stops it first
    assert "too slow" in text and "spread the work over the grid" in text and "infinite" not in text


def test_a_block_that_also_does_its_neighbours_tile_is_refused(monkeypatch):
    """Every block moves its tile and the next one's: correct, coalesced, but twice the traffic."""
    src = SOL["shared_tile"].replace("    // BEGIN SOLUTION\n", "    for (int k = 0; k < 2; ++k) {\n"
                                     "    // BEGIN SOLUTION\n").replace("    // END SOLUTION\n", "    // END SOLUTION\n"
                                                                   "    __syncthreads();\n    }\n")
    src = src.replace("blockIdx.x * 32 + threadIdx.x;          // column of in",
                      "(blockIdx.x + k) % gridDim.x * 32 + threadIdx.x;")
    src = src.replace("y = blockIdx.x * 32 + threadIdx.y;              // row of out",
                      "y = (blockIdx.x + k) % gridDim.x * 32 + threadIdx.y;")
    fn = _kernel(src, "transpose_tile")
    _open_without(monkeypatch, "shared_tile", fn, NOT_SPREAD, NO_TRAFFIC)
    text = _report("shared_tile", fn)
    assert "loads move" in text and "2 times" in text and "more than once" in text


_TILE_STORE = re.compile(r"^(?P<indent>[ \t]*)out\[(?P<at>[^\]\n]+)\] = (?P<value>tile\[[^;\n]+\]);[ \t]*$", re.M)


def _stored_from_a_tile():
    """The first exercise (one block per tile, the course's signature) whose solution stores `out[...] = tile[...];`."""
    for key in sorted(SOL):
        ex = E.get(key)
        m = _TILE_STORE.search(SOL[key])
        if m and ex.own_tiles and not ex.custom and len(ex.shapes[0]) == 2:
            return key, ex, m
    pytest.fail("no exercise stores out[...] = tile[...]: the test needs one")


def test_storing_every_element_twice_is_refused(monkeypatch):
    """Each element stored twice (volatile, so the compiler keeps both): per-request ratios stay ideal."""
    key, ex, m = _stored_from_a_tile()
    t = ex.parameters[0].ctype.rstrip("*")
    twice = (f"{m['indent']}{{ volatile {t}* o = out + {m['at']}; *o = {m['value']}; *o = {m['value']}; }}")
    src = SOL[key][:m.start()] + twice + SOL[key][m.end():]
    fn = _kernel(src, ex.kernel)
    _open_without(monkeypatch, key, fn, NO_TRAFFIC)
    text = _report(key, fn)
    assert "stores move" in text and "2 times" in text and "stored more than once" in text


# ------------------------------------------------------------------------------------ 64-bit offsets

NARROW = [
    ("column_read", "int offsets", ("out[(size_t)c * rows + r] = in[(size_t)r * cols + c];",
                                    "out[c * rows + r] = in[r * cols + c];"), "wrapped around"),
    ("column_read", "unsigned offsets", ("out[(size_t)c * rows + r] = in[(size_t)r * cols + c];",
                                         "out[(unsigned)c * rows + r] = in[(unsigned)r * cols + c];"), "wrapped"),
    ("column_read", "widened too late", ("out[(size_t)c * rows + r] = in[(size_t)r * cols + c];",
                                         "out[(size_t)(c * rows + r)] = in[(size_t)(r * cols + c)];"), "2^32"),
    ("batched", "an int matrix size", ("const size_t matrix = (size_t)rows * cols;", "const int matrix = rows * cols;"),
     "wrapped"),
    ("batched", "the offset widened after the product",
     ("in += blockIdx.z * matrix;", "in += (size_t)(blockIdx.z * rows * cols);",
      "out += blockIdx.z * matrix;", "out += (size_t)(blockIdx.z * rows * cols);"), "wrapped"),
]


@pytest.mark.parametrize("key,what,pairs,word", NARROW, ids=[f"{n[0]}: {n[1]}" for n in NARROW])
def test_32_bit_offsets_are_refused_where_the_exercise_asks_for_64(monkeypatch, key, what, pairs, word):
    src = SOL[key]
    for old, new in zip(pairs[::2], pairs[1::2]):
        assert old in src
        src = src.replace(old, new)
    fn = _kernel(src, E.get(key).kernel)
    _open_without(monkeypatch, key, fn, NOT_WIDE)
    text = _report(key, fn)
    assert word in text and "more than 2^32" in text and "64 bits" in text


def test_wide_launches_are_simulated_sparsely_on_stand_ins():
    """The 70000 x 70000 launch: two blocks, nothing allocated, the solution's blocks move exactly their tile."""
    ex, fn = E.get("column_read"), _kernel(SOL["column_read"], "transpose_col")
    grid, _ = ex.launch(70000, 70000)
    assert footprint.sample_blocks(grid) == [(8749, 2187, 0), (4375, 1094, 0)]
    read, written = footprint.run_block(fn, ex, (1, 70000, 70000), np.float32, (8749, 2187, 0))
    src, dst, where = footprint.tile_of(ex, (1, 70000, 70000), (8749, 2187, 0))
    assert where == "rows 69984-69999, columns 69992-69999" and src.max() > 2**32
    assert np.array_equal(read, np.sort(src)) and sorted(written) == sorted(dst.tolist())


# ------------------------------------------------------------------------------------ cp.async (notebook 12)

ASYNC_COPY = ("__pipeline_memcpy_async(&tile[threadIdx.y + j][threadIdx.x], &in[(size_t)(y + j) * cols + x],\n"
              "                                    sizeof(float));")
FEW_COPIES = [   # (what, the tile's fill instead of one cp.async per element, words of the refusal)
    ("the first row by cp.async, the others by ordinary loads",
     "{ if (j == 0) " + ASYNC_COPY + " else tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x]; }",
     ["ordinary loads", "ld.global"]),
    ("the first row by cp.async, the others by atomics (no load counter sees them)",
     "{ if (j == 0) " + ASYNC_COPY + " else tile[threadIdx.y + j][threadIdx.x] = "
     "atomicAdd(const_cast<float*>(&in[(size_t)(y + j) * cols + x]), 0.0f); }",
     ["cp.async copies bring", "of the 16,384 bytes of in"]),
]


@pytest.mark.parametrize("what,fill,words", FEW_COPIES, ids=[f[0] for f in FEW_COPIES])
def test_a_tile_only_partly_filled_by_cp_async_is_refused(monkeypatch, what, fill, words):
    fn = _kernel(SOL["async_tile"].replace(ASYNC_COPY, fill), "transpose_async")
    ex = E.get("async_tile")
    others = tuple(p for p in ex.properties if "cp.async" not in p.name)
    assert len(others) == len(ex.properties) - 1
    monkeypatch.setitem(E.EXERCISES, "async_tile", dataclasses.replace(ex, properties=others))
    if "atomics" in what:     # atomics count as loads and stores now: the traffic check sees them too
        assert "an atomic reads and writes" in repr(E.check("async_tile", fn, gpu=False, shapes=SMALL))
        _open_without(monkeypatch, "async_tile", fn, NO_TRAFFIC, shapes=SMALL)
    else:
        assert E.check("async_tile", fn, gpu=False, shapes=SMALL).ok     # every other check accepts the kernel
    monkeypatch.setitem(E.EXERCISES, "async_tile", ex)
    text = _report("async_tile", fn, shapes=SMALL)
    assert all(w in text for w in words), text


# ------------------------------------------------------------------------------------ slow, or endless

SLOW = """__global__ void transpose_tile(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][32];
    if (blockIdx.x || blockIdx.y || threadIdx.x || threadIdx.y) return;   // one thread does it all
    tile[0][0] = 0;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
}
"""


@pytest.mark.slow          # it runs to the checker's real step and time limits
def test_a_slow_kernel_is_called_slow_and_an_endless_one_endless():
    text = _report("shared_tile", _kernel(SLOW, "transpose_tile"))
    assert "too slow" in text and "it is not stuck" in text and "infinite" not in text and "endless" not in text
    assert "spread the work over the grid" in text
    endless = SLOW.replace("++c)", "c += 0)")
    text = _report("shared_tile", _kernel(endless, "transpose_tile"))
    assert "an endless loop (on a 2x3 matrix too)" in text and "too slow" not in text


# ------------------------------------------------------------------------------------ every exercise

def test_shapes_given_to_the_checker_are_checked():
    fn = _kernel(SOL["padded_tile"], "transpose_padded")
    for bad in ([(0, 5)], [(3, 4, 5)], "64x64", [("a", 2)], []):
        with pytest.raises(cl.ArgumentError, match="shapes="):
            E.check("padded_tile", fn, shapes=bad)
    assert "correct on 1 shape;" in repr(E.check("padded_tile", fn, shapes=[(40, 70)], gpu=False))


@pytest.mark.slow
@pytest.mark.folder
@pytest.mark.parametrize("key", sorted(SOL))
def test_a_correct_kernel_written_by_a_student_passes_every_check(key):
    """The solution without the solution's comments, in a graded run: accepted."""
    with pytest.MonkeyPatch.context() as m:
        m.setenv("COURSE_LIB_GRADED", "1")
        report = E.check(key, _kernel(_uncommented(SOL[key]), E.get(key).kernel), gpu=False)
    assert report.ok, repr(report)
