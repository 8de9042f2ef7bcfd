"""Verdicts on kernels a hidden set of student kernels found misjudged (issue 27, item 4), each written
here as a kernel: honest ones that must pass, wrong ones that must fail, and for what reason.

- any one-to-one mapping of blocks to tiles passes (diagonal reordering, tiles taken in reverse), and
  every block of every shape is judged, not a few fixed samples;
- "each element once" is a property of its own (a grid-stride copy whose step is blockDim.x);
- atomics are the loads and stores they are, for traffic and coalescing;
- "stages the tile in shared memory" means the tile's data passes through it, not a token;
- a kernel that reads the clock or the SM it runs on is refused, with the line;
- a renamed copy of a course kernel is refused; an include reaches no solution, by any path;
- hints use the exercise's own parameters; "too slow" says how much.

Simulator only; nothing timed."""
import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

import course_lib as cl
from course_lib import paths
from course_lib.compile import headers
from course_lib.notebook import magic
from course_lib.teach import exercises as E
from course_lib.teach import properties as P
from course_lib.teach import solutions

SOL = {key: solutions.body(key) for key in solutions.keys()}
SMALL = [(64, 64), (96, 160), (100, 130), (1, 300), (300, 1)]


def _kernel(source, name, line=""):
    return magic.compile_cell(line, source)[1][name]


def _refused(key, fn, **options):
    report = E.check(key, fn, gpu=False, **options)
    text = repr(report)
    assert not report.ok and "hint:" in text and "Traceback" not in text, text
    return text


def _passes(key, fn, **options):
    report = E.check(key, fn, gpu=False, **options)
    assert report.ok, repr(report)


# ------------------------------------------------------------------------------------ blocks and tiles

MOVE = """
__device__ void move(float* out, const float* in, int rows, int cols, int bx, int by, float (*t)[33])
{
    int c = bx * 32 + threadIdx.x, r = by * 32 + threadIdx.y;
    if (c < cols && r < rows) t[threadIdx.y][threadIdx.x] = in[(size_t)r * cols + c];
    __syncthreads();
    c = by * 32 + threadIdx.x; r = bx * 32 + threadIdx.y;
    if (c < rows && r < cols) out[(size_t)r * rows + c] = t[threadIdx.x][threadIdx.y];
    __syncthreads();
}
"""

DIAGONAL = MOVE + """
__global__ void transpose_tile(float* out, const float* in, int rows, int cols)
{
    __shared__ float t[32][33];
    // diagonal block ordering: block b takes tile (bx, by) on a diagonal, a one-to-one mapping
    int b = blockIdx.x + gridDim.x * blockIdx.y;
    int by = b % gridDim.y, bx = (b / gridDim.y + by) % gridDim.x;
    move(out, in, rows, cols, bx, by, t);
}
"""

REVERSED = MOVE + """
__global__ void transpose_tile(float* out, const float* in, int rows, int cols)
{
    __shared__ float t[32][33];
    move(out, in, rows, cols, gridDim.x - 1 - blockIdx.x, gridDim.y - 1 - blockIdx.y, t);
}
"""

SAMPLED = MOVE + """
__global__ void transpose_tile(float* out, const float* in, int rows, int cols)
{
    __shared__ float t[32][33];
    int gx = gridDim.x, gy = gridDim.y;
    // the last block and the middle one behave; block (0, 0) does every other tile
    bool last = blockIdx.x == gx - 1 && blockIdx.y == gy - 1, mid = blockIdx.x == gx / 2 && blockIdx.y == gy / 2;
    if (last || mid) { move(out, in, rows, cols, blockIdx.x, blockIdx.y, t); return; }
    if (blockIdx.x || blockIdx.y) return;
    for (int by = 0; by < gy; ++by)
        for (int bx = 0; bx < gx; ++bx)
            if (!(bx == gx - 1 && by == gy - 1) && !(bx == gx / 2 && by == gy / 2))
                move(out, in, rows, cols, bx, by, t);
}
"""

TWICE = MOVE + """
__global__ void transpose_tile(float* out, const float* in, int rows, int cols)
{
    __shared__ float t[32][33];
    move(out, in, rows, cols, blockIdx.x, blockIdx.y, t);
    if (blockIdx.x == 1) move(out, in, rows, cols, 0, blockIdx.y, t);    // and block 0's tile again
}
"""


@pytest.mark.parametrize("src", [DIAGONAL, REVERSED], ids=["diagonal", "reversed"])
def test_any_one_to_one_mapping_of_blocks_to_tiles_passes(src):
    _passes("shared_tile", _kernel(src, "transpose_tile"))


SWAPPED = MOVE + """
__global__ void transpose_tile(float* out, const float* in, int rows, int cols)
{
    __shared__ float t[32][33];
    move(out, in, rows, cols, blockIdx.y, blockIdx.x, t);      // blockIdx.y picks the columns
}
"""


def test_swapped_block_indices_with_a_matching_grid_pass():
    ex = dataclasses.replace(E.get("shared_tile"), grid=lambda rows, cols: (-(-rows // 32), -(-cols // 32)))
    _passes(ex, _kernel(SWAPPED, "transpose_tile"))
    _refused("shared_tile", _kernel(SWAPPED, "transpose_tile"), shapes=[(64, 96)])    # the usual grid: wrong


def test_a_kernel_that_behaves_only_in_the_sampled_blocks_is_refused():
    text = _refused("shared_tile", _kernel(SAMPLED, "transpose_tile"), shapes=SMALL)
    assert "block (0, 0, 0) moved" in text and "tiles" in text and "moved none" in text, text
    assert "one tile per block" in text


def test_two_blocks_moving_the_same_tile_are_refused():
    text = _refused("shared_tile", _kernel(TWICE, "transpose_tile"), shapes=SMALL)
    assert "blocks (0, 0, 0) and (1, 0, 0)" in text or "loaded more than once" in text, text


# ------------------------------------------------------------------------------------ each element once

GRID_STRIDE = """
__global__ void copy_all(float* out, const float* in, int rows, int cols)
{
    size_t n = (size_t)rows * cols;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += STEP)
        out[i] = in[i];
}
"""


def _grid_stride_exercise(*props):
    return E.Exercise("grid_stride", "a grid-stride copy", "copy_all", (256, 1), (256, 1), props, copy=True,
                      grid=lambda rows, cols: (8,), shapes=((64, 64), (33, 70)))


def test_each_element_once_is_a_property_of_its_own():
    ex = _grid_stride_exercise(P.each_element_once(), P.coalesced("ld"), P.coalesced("st"))
    assert not ex.own_tiles and "each_element_once" in P.__all__ and "one_tile_per_block" in P.__all__
    right = _kernel(GRID_STRIDE.replace("STEP", "(size_t)gridDim.x * blockDim.x"), "copy_all")
    report = E.check(ex, right, gpu=False)
    assert report.ok and "each element loaded and stored once" in repr(report), repr(report)
    wrong = _kernel(GRID_STRIDE.replace("STEP", "blockDim.x"), "copy_all")     # block b: elements 256 b to n
    text = repr(E.check(ex, wrong, gpu=False))
    assert "6.2 times the 16,384 bytes of in" in text and "each element loaded and stored once" in text, text
    assert "8 rows of threads" not in text and "j from 0 to 32" not in text   # another exercise's loop


# ------------------------------------------------------------------------------------ atomics

STORE = "        out[(size_t)y * rows + x] = tile[threadIdx.x][threadIdx.y];"
LOAD = "        tile[threadIdx.y][threadIdx.x] = in[(size_t)y * cols + x];"
ATOMICS = [
    ("atomicExch stores", STORE, "        atomicExch(&out[(size_t)y * rows + x], tile[threadIdx.x][threadIdx.y]);"),
    ("atomicAdd(0) loads", LOAD,
     "        tile[threadIdx.y][threadIdx.x] = atomicAdd(const_cast<float*>(&in[(size_t)y * cols + x]), 0.0f);"),
]


@pytest.mark.parametrize("what,old,new", ATOMICS, ids=[a[0] for a in ATOMICS])
def test_atomics_are_judged_as_the_loads_and_stores_they_are(what, old, new):
    assert old in SOL["shared_tile"]
    fn = _kernel(SOL["shared_tile"].replace(old, new), "transpose_tile")
    text = _refused("shared_tile", fn)                 # every shape, 1000x1030 included
    assert "too slow" not in text and "atomic" in text and "line " in text, text


def test_uncoalesced_atomic_stores_are_uncoalesced_stores():
    """A copy whose warps cover 8 rows x 4 columns: 8 sectors per request where 4 would do."""
    src = """
__global__ void first_copy(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * 32 + threadIdx.y * 4 + threadIdx.x / 8, y = blockIdx.y * 8 + threadIdx.x % 8;
    if (x < cols && y < rows) atomicExch(&out[(size_t)y * cols + x], in[(size_t)y * cols + x]);
}
"""
    text = _refused("first_copy", _kernel(src, "first_copy"))
    assert "global stores coalesced: on 64x64: the global atomics on line 6 touch 8.0 sectors per request" in text


# ------------------------------------------------------------------------------------ shared memory

TOKEN = """
__global__ void transpose_tile(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][32];
    tile[threadIdx.y][threadIdx.x] = 0;           // a token round trip through shared memory
    __syncthreads();
    float z = tile[threadIdx.y][threadIdx.x];
    int c = blockIdx.x * 32 + threadIdx.x, r = blockIdx.y * 32 + threadIdx.y;
    if (c < cols && r < rows) out[(size_t)c * rows + r] = in[(size_t)r * cols + c] + OP;
}
"""


@pytest.mark.parametrize("op", ["0 * z", "z"])
def test_a_token_round_trip_through_shared_memory_is_not_staging(monkeypatch, op):
    ex = E.get("shared_tile")
    monkeypatch.setitem(E.EXERCISES, "shared_tile", dataclasses.replace(ex, properties=(P.uses_shared(),)))
    text = _refused("shared_tile", _kernel(TOKEN.replace("OP", op), "transpose_tile"), shapes=SMALL)
    assert "stages the tile in shared memory" in text and "do not pass through shared memory" in text, text


# ------------------------------------------------------------------------------------ clocks

READS = {"%clock64": "    if (clock64() == 1) return;\n",
         "%globaltimer": '    { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); if (t == 1) return; }\n',
         "%smid": '    { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); if (s == 200) return; }\n'}


@pytest.mark.parametrize("reg", sorted(READS))
def test_a_kernel_that_reads_the_clock_or_its_sm_is_refused(monkeypatch, reg):
    mine = "\n".join(line.split("//")[0].rstrip() for line in solutions.solved(SOL["shared_tile"]).splitlines())
    fn = _kernel(mine.replace("    __syncthreads();\n", "    __syncthreads();\n" + READS[reg], 1), "transpose_tile")
    for graded in ("1", "0"):
        monkeypatch.setenv("COURSE_LIB_GRADED", graded)
        text = _refused("shared_tile", fn, shapes=[(64, 64)])
        what = "placement" if reg == "%smid" else "timer"
        assert f"reads the {what} register {reg} (line 1" in text and "must not depend on time or placement" in text


# ------------------------------------------------------------------------------------ the course's text

def test_a_renamed_copy_of_a_course_kernel_is_refused():
    """tile.cu with every name of its own changed (and its comments dropped): still the course's kernel."""
    course = (paths.KERNELS / "tile.cu").read_text()
    renamed = course[course.index("template"):]
    for old, new in (("TILE", "TS"), ("BLOCK_ROWS", "NR"), ("PAD", "EXTRA"), ("tile", "transpose_tile"),
                     ("out", "dst"), ("in", "src"), ("t", "buf"), ("(?<!\\.)x", "col"), ("(?<!\\.)y", "row"), ("j", "k")):
        renamed = re.sub(rf"\b{old}\b", new, re.sub(r"//[^\n]*", "", renamed))
    assert "__global__ void transpose_tile(T* __restrict__ dst, const T* __restrict__ src" in renamed, renamed
    fn = _kernel(renamed, "transpose_tile", '-i "transpose_tile=transpose_tile<float, 32, 32, 0>"')
    text = _refused("shared_tile", fn)
    assert "kernels/tile.cu" in text and "renamed" in text, text


def test_a_kernel_in_the_students_own_words_is_not_a_renamed_copy():
    mine = ("__global__ void transpose_tile(float* out, const float* in, int rows, int cols)\n{\n"
            "    __shared__ float s[32][32];\n"
            "    int i = blockIdx.y * 32 + threadIdx.y, j = blockIdx.x * 32 + threadIdx.x;\n"
            "    if (i < rows && j < cols) s[threadIdx.y][threadIdx.x] = in[(size_t)i * cols + j];\n"
            "    __syncthreads();\n"
            "    i = blockIdx.x * 32 + threadIdx.y; j = blockIdx.y * 32 + threadIdx.x;\n"
            "    if (i < cols && j < rows) out[(size_t)i * rows + j] = s[threadIdx.x][threadIdx.y];\n}\n")
    _passes("shared_tile", _kernel(mine, "transpose_tile"))


@pytest.mark.parametrize("include", ['"solutions/shared_tile.cu"', '"../kernels/solutions/shared_tile.cu"'])
def test_no_include_reaches_a_solution(include):
    with pytest.raises(cl.CompileError):
        _kernel(f"#include {include}\n", "transpose_tile")


def test_no_solution_lies_under_an_include_folder():
    module = cl.RawModule(code="__global__ void k(float* a) { a[0] = 1; }")
    folders = [Path(o.split("=", 1)[1]).resolve() for o in module.options if o.startswith("--include-path=")]
    assert folders and not any(p.is_dir() for f in folders for p in f.iterdir())      # the course's files only
    folders += [f.resolve() for f in headers.folders(13) + headers.folders(12)]
    for key in solutions.keys():
        where = solutions.path(key).resolve()
        assert not any(where.is_relative_to(f) for f in folders), (where, folders)


def test_an_included_solution_is_refused_by_its_content(tmp_path):
    copy = tmp_path / "mine.cu"
    copy.write_text(solutions.path("shared_tile").read_text())
    # the file writes its parameters as names (T, TILE: exercises/<key>/, variants); the attack defines them
    cell = f'#define T float\n#define TILE 32\n#include "{copy}"\n'
    text = _refused("shared_tile", _kernel(cell, "transpose_tile"))
    assert "mine.cu" in text and "solution" in text, text


# ------------------------------------------------------------------------------------ hints and "too slow"

def test_hints_use_the_exercises_own_tile_and_type():
    ex = dataclasses.replace(E.get("padded_tile"), tile=(16, 16), block=(16, 16))
    src = SOL["padded_tile"].replace("32", "16")
    src = src.replace("tile[16][16 + 2]", "tile[16][16]")
    text = repr(E.check(ex, _kernel(src, "transpose_padded"), gpu=False, shapes=[(64, 64)]))
    assert "no bank conflicts" in text and "[16][16 + ?]" in text and "one unsigned short" in text, text
    assert "[32]" not in text, text


def test_too_slow_says_how_long_and_why():
    one = """
__global__ void transpose_tile(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][32];
    if (blockIdx.x || blockIdx.y) return;               // one block does it all
    for (int r = threadIdx.y; r < rows; r += 32)
        for (int c = threadIdx.x; c < cols; c += 32) {
            tile[threadIdx.y][threadIdx.x] = in[(size_t)r * cols + c];
            out[(size_t)c * rows + r] = tile[threadIdx.y][threadIdx.x];
        }
}
"""
    text = _refused("shared_tile", _kernel(one, "transpose_tile"))
    assert "too slow" in text and "per thread" in text and "0.4 seconds" not in text, text
    # projected past the work limit (how many times it), or, on a loaded machine, stopped by the
    # wall clock of its first batch first (the loop named, the elements per thread it should move)
    assert "times the work the checker allows" in text or "implies 1 element per thread" in text, text
