"""Every exercise: its solution file passes its checker, its stub (what notebooks/ holds) fails it
cleanly, and plausible wrong kernels — written as a student who half-understood would write them —
fail with a message that names the problem and a hint. The checker must judge every property on
every shape: kernels that are right on the first shape and wrong (racing, out of bounds, a barrier
some threads skip, uncoalesced) only on the others are here too. Simulator only; nothing timed."""
import re
import shutil

import numpy as np
import pytest

import course_lib as cl
from course_lib.teach import exercises as E
from course_lib.notebook import magic
from course_lib.compile import nvrtc
from course_lib.teach import mutants, solutions, spec, variants
from course_lib.teach.exercise_list import folder
from course_lib.lessons import aos
from course_lib.teach.properties import Shape

SOL = {key: solutions.body(key) for key in solutions.keys()}


def _kernel(source, name):
    return magic.compile_cell("", source)[1][name]


def _mutate(key, pairs):
    src = SOL[key]
    for old, new in zip(pairs[::2], pairs[1::2]):
        assert old in src, f"{key}: {old!r} is not in exercises/{key}/solution.cu"
        src = src.replace(old, new)
    return src


def test_every_exercise_has_a_solution_file_and_every_file_an_exercise():
    assert set(SOL) == set(E.EXERCISES)
    assert {"00", "01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12"} == {ex.lesson for ex in E.EXERCISES.values()}


@pytest.mark.parametrize("key", sorted(SOL))
def test_solution_passes(key):
    ex = E.get(key)
    report = E.check(ex, _kernel(SOL[key], ex.kernel))
    assert report.ok, repr(report)
    assert repr(report).startswith("✓") and "Well done" in repr(report) and f"correct on {len(ex.shapes)}" in repr(report)


@pytest.mark.parametrize("key", sorted(SOL))
def test_stub_compiles_and_fails_cleanly(key):
    ex = E.get(key)
    stub = solutions.stub(key)
    assert not E.has_solution(stub) and E.has_solution(SOL[key]) and "//>" not in stub
    report = E.check(ex, _kernel(stub, ex.kernel))
    assert not report.ok and "hint:" in repr(report) and all(what and hint for what, hint in report.problems)


TILE_IN = ("if (x < cols && y < rows)\n        tile[threadIdx.y][threadIdx.x] = in[(size_t)y * cols + x];\n"
           "    __syncthreads();\n")
BARRIER_IN_IF = ("if (x < cols && y < rows) {\n        tile[threadIdx.y][threadIdx.x] = in[(size_t)y * cols + x];\n"
                 "        __syncthreads();\n    }\n")
BARRIER_WORDS = ["Barrier skipped", "1000x1030", "do not return early"]
ASYNC_COPY = ("__pipeline_memcpy_async(&tile[threadIdx.y + j][threadIdx.x], &in[(size_t)(y + j) * cols + x],\n"
              "                                    sizeof(float));")
ASYNC_WAIT = "    __pipeline_wait_prior(0);                    // this thread's copies have landed\n"
ASYNC_BARRIER = "    __syncthreads();                             // ... and so have every other thread's\n"

# (exercise, what the student got wrong, (old, new, ...) applied to the solution file, words the report must hold)
WRONG = [
    # 00: the copy
    ("first_copy", "copies the transposed element", ("out[y * cols + x] = in[y * cols + x];",
                                                     "out[x * rows + y] = in[y * cols + x];"),
     ["96x160", "elements are wrong", "out[r * cols + c]"]),
    ("first_copy", "bounds test one too generous", ("if (x < cols && y < rows)", "if (x <= cols && y < rows)"),
     ["Out of bounds", "line", "bounds test"]),
    ("first_copy", "8 rows per warp: correct, 8 sectors per request",
     ("int x = blockIdx.x * blockDim.x + threadIdx.x;", "int x = blockIdx.x * 32 + threadIdx.y * 4 + threadIdx.x / 8;",
      "int y = blockIdx.y * blockDim.y + threadIdx.y;", "int y = blockIdx.y * 8 + threadIdx.x % 8;"),
     ["correct on 5 shapes", "8.0 sectors per request", "4 would be coalesced"]),
    ("first_copy", "an int temporary", ("out[y * cols + x] = in[y * cols + x];",
                                        "int v = in[y * cols + x]; out[y * cols + x] = v;"),
     ["lost their fraction", "float"]),
    # 01: one thread per element, a 1D grid
    ("per_element", "no test for the threads past the end", ("    if (i < (size_t)rows * cols) {\n", "    {\n"),
     ["Out of bounds", "bounds test"]),
    ("per_element", "row and column from the wrong division", ("size_t r = i / cols, c = i % cols;", "size_t r = i % rows, c = i / rows;"),
     ["96x160", "elements are wrong"]),
    ("per_element", "threads numbered block fastest: a warp reads 32 elements a block apart",
     ("size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;", "size_t i = (size_t)threadIdx.x * gridDim.x + blockIdx.x;"),
     ["correct on 5 shapes", "sectors per request"]),
    # 02: the grid-stride copy (a grid of 8 blocks: not one tile per block, so each element once is its own property)
    ("grid_copy", "step = gridDim.x * blockDim.x: the 8 rows of threads forgotten, every element ~8 times",
     ("size_t step = (size_t)gridDim.x * blockDim.y * blockDim.x;", "size_t step = (size_t)gridDim.x * blockDim.x;"),
     ["correct on 5 shapes", "loaded more than once", "blockDim.x * blockDim.y"]),
    ("grid_copy", "step = blockDim.x", ("size_t step = (size_t)gridDim.x * blockDim.y * blockDim.x;", "size_t step = blockDim.x;"), ["loaded more than once"]),
    ("grid_copy", "threadIdx.y left out of the thread's number", ("((size_t)blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x", "(size_t)blockIdx.x * blockDim.x + threadIdx.x"),
     ["never written"]),
    # ... and the grid must be numbered: one block, or one warp, copying everything is refused (issue 35)
    ("grid_copy", "one block copies the whole matrix, the other seven return",
     ("size_t first = ((size_t)blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;",
      "if (blockIdx.x != 0) return;\n    size_t first = (size_t)threadIdx.y * blockDim.x + threadIdx.x;",
      "size_t step = (size_t)gridDim.x * blockDim.y * blockDim.x;", "size_t step = (size_t)blockDim.y * blockDim.x;"),
     ["every block and warp does its share", "block (0, 0, 0) wrote 4,096 of the 4,096", "wrote none",
      "every block of the grid", "blockIdx.x, threadIdx.y and threadIdx.x all count"]),
    ("grid_copy", "one warp copies the whole matrix",
     ("size_t first = ((size_t)blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;",
      "if (blockIdx.x != 0 || threadIdx.y != 0) return;\n    size_t first = threadIdx.x;",
      "size_t step = (size_t)gridDim.x * blockDim.y * blockDim.x;", "size_t step = 32;"),
     ["every block and warp does its share", "all of them by its warp 0", "wrote none"]),
    ("grid_copy", "warp 0 of each block copies that block's share, threadIdx.y left idle",
     ("size_t first = ((size_t)blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;",
      "if (threadIdx.y != 0) return;\n    size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;",
      "size_t step = (size_t)gridDim.x * blockDim.y * blockDim.x;", "size_t step = (size_t)gridDim.x * blockDim.x;"),
     ["warp 0 of block (0, 0, 0) wrote 512 elements of out, 8 times its share", "warps 1-7 of each block wrote none"]),
    ("grid_copy", "threads numbered y fastest: 8 rows apart in a warp",
     ("((size_t)blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x", "((size_t)blockIdx.x * blockDim.x + threadIdx.x) * blockDim.y + threadIdx.y"),
     ["correct on 5 shapes", "32.0 sectors per request", "threadIdx.x"]),
    # 03: the column-reading naive transpose
    ("column_read", "naive_row's mapping pasted in", ("int r = blockIdx.y * 32 + threadIdx.x;", "int r = blockIdx.y * 8 + threadIdx.y;",
                                                      "int c = blockIdx.x * 8 + threadIdx.y;", "int c = blockIdx.x * 32 + threadIdx.x;"),
     ["never written", "32.0 sectors per request", "threadIdx.x"]),
    ("column_read", "threadIdx.x split over 8 columns: right answer, 8 sectors per store",
     ("int r = blockIdx.y * 32 + threadIdx.x;", "int r = blockIdx.y * 32 + threadIdx.y * 4 + threadIdx.x / 8;",
      "int c = blockIdx.x * 8 + threadIdx.y;", "int c = blockIdx.x * 8 + threadIdx.x % 8;"),
     ["correct on 5 shapes", "8.0 sectors per request", "4 would be coalesced"]),
    ("column_read", "out indexed with the input's row length", ("out[(size_t)c * rows + r]", "out[(size_t)c * cols + r]"),
     ["Out of bounds", "'out'", "line"]),
    ("column_read", "no bounds test", ("    if (r < rows && c < cols)\n", ""), ["1000x1030", "Out of bounds", "bounds test"]),
    ("column_read", "bounds test compares r with cols and c with rows", ("if (r < rows && c < cols)", "if (r < cols && c < rows)"),
     ["96x160", "never written", "Out of bounds"]),
    ("column_read", "an int temporary", ("out[(size_t)c * rows + r] = in[(size_t)r * cols + c];",
                                         "{ int v = in[(size_t)r * cols + c]; out[(size_t)c * rows + r] = v; }"),
     ["lost their fraction"]),
    # 04: the shared tile
    ("shared_tile", "tile read back untransposed", ("= tile[threadIdx.x][threadIdx.y]", "= tile[threadIdx.y][threadIdx.x]"),
     ["elements are wrong", "only the elements on the tile's own diagonal are right", "tile[threadIdx.x][threadIdx.y]"]),
    ("shared_tile", "bounds test compares y with cols", ("if (x < cols && y < rows)", "if (x < cols && y < cols)"),
     ["1000x1030", "Out of bounds", "line"]),
    ("shared_tile", "the barrier inside the bounds if (CUDA_Freshman's tile)", (TILE_IN, BARRIER_IN_IF), BARRIER_WORDS),
    ("shared_tile", "threads outside the matrix return early",
     ("    if (x < cols && y < rows)\n        tile", "    if (x >= cols || y >= rows) return;\n    tile"), BARRIER_WORDS),
    ("shared_tile", "barrier only when the matrix is a multiple of 32: races on the other shapes",
     ("__syncthreads();", "if (rows % 32 == 0 && cols % 32 == 0) __syncthreads();"),
     ["no races", "on 1000x1030", "RAW"]),
    ("shared_tile", "an int tile", ("__shared__ float tile[32][32];", "__shared__ int tile[32][32];"),
     ["lost their fraction", "float"]),
    # 05: padding — the rest is derived from the exercise's own solution and parameters (DERIVED below)
    ("shared_tile", "the tile only for square matrices, the naive transpose for the rest",
     ("    int y = blockIdx.y * 32 + threadIdx.y;          // row of in\n",
      "    int y = blockIdx.y * 32 + threadIdx.y;          // row of in\n"
      "    if (rows != cols) {\n        if (x < cols && y < rows) out[(size_t)x * rows + y] = in[(size_t)y * cols + x];\n"
      "        return;\n    }\n"),
     ["global stores coalesced", "on 96x160", "32.0 sectors per request"]),
    # 06: 32x8 threads, four elements each
    ("tile_32x8", "stores only the first quarter", ("for (int j = 0; j < 32; j += 8)\n        if (x < rows",
                                                    "for (int j = 0; j < 8; j += 8)\n        if (x < rows"),
     ["never written"]),
    ("tile_32x8", "forgets + j when reading the tile", ("tile[threadIdx.x][threadIdx.y + j]", "tile[threadIdx.x][threadIdx.y]"),
     ["elements are wrong"]),
    ("tile_32x8", "fills one row per thread (the 32x32 load kept)",
     ("    for (int j = 0; j < 32; j += 8)\n        if (x < cols && y + j < rows)\n            tile[threadIdx.y + j]",
      "    for (int j = 0; j < 8; j += 8)\n        if (x < cols && y + j < rows)\n            tile[threadIdx.y + j]"),
     ["reads only shared memory that was written", "no thread of this block has written", "fill the whole tile"]),
    ("tile_32x8", "the barrier inside the store loop's bounds test",
     ("    __syncthreads();\n", "", "            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];",
      "            { __syncthreads(); out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j]; }"),
     ["Barrier skipped", "1000x1030"]),
    # 07: float4
    ("vectorized", "scalar global accesses",
     ("float4 v = *reinterpret_cast<const float4*>(in + (size_t)r * cols + c);",
      "float4 v; const float* p = in + (size_t)r * cols + c; v.x = p[0]; v.y = p[1]; v.z = p[2]; v.w = p[3];"),
     ["16-byte", "4 bytes per thread", "float4"]),
    ("vectorized", "no column bounds test", ("if (r < rows && c < cols)", "if (r < rows)"), ["Out of bounds"]),
    ("vectorized", "the barrier inside the load's bounds test",
     ("        row[0] = v.x; row[1] = v.y; row[2] = v.z; row[3] = v.w;\n    }\n    __syncthreads();",
      "        row[0] = v.x; row[1] = v.y; row[2] = v.z; row[3] = v.w;\n        __syncthreads();\n    }"),
     ["Barrier skipped", "100x132"]),
    # 08: structs of 40 floats (Giles); ptxas makes the stub's reads ten LDS.128 per lane
    ("aos_struct", "k = i + j*I (the stub): LDS.128 reads, still 2-way", ("return n + n / 160;", "return n;"),
     ["bank conflicts", "shared loads", "8.0 wavefronts per request", "LDS.128", "32F"]),
    ("aos_struct", "Giles's mapping for I = 6 copied: runs past the array", ("return n + n / 160;", "return n + n / 96;"),
     ["Out of bounds", "'s'", "size"]),
    ("aos_struct", "padding every 32P = 256 elements instead of 32F: 2-way column reads",
     ("return n + n / 160;", "return n + n / 256;"), ["bank conflicts", "shared loads", "2.0 wavefronts per request"]),
    ("aos_struct", "one word per struct, k = i + j*(I+1): runs out of the padding", ("return n + n / 160;", "return n + j;"),
     ["Out of bounds", "'s'", "size"]),
    ("aos_struct", "one word per struct with room for it: conflicts on the writes",
     ("return n + n / 160;", "return n + j;", "32 * I + 8]", "32 * (I + 1)]"), ["bank conflicts", "shared stores"]),
    ("aos_struct", "padding after every 32 instead of 160: runs past the array", ("return n + n / 160;", "return n + n / 32;"),
     ["Out of bounds", "shared"]),
    ("aos_struct", "no __syncwarp", ("    __syncwarp();\n", ""), ["no races", "__syncwarp()"]),
    ("aos_struct", "each lane loads its own struct (no shared memory)",
     ("mine[slot(i + lane * I, lane)]", "in[(size_t)(first + lane) * I + i]"),
     ["never touches shared memory", "32.0 sectors per request", "n = l + 32m"]),
    # 09: 16-bit pairs
    ("packed_b16", "the stub: words passed through unchanged",
     ("lo = __byte_perm(a, b, 0x5410);", "lo = a;", "hi = __byte_perm(a, b, 0x7632);", "hi = b;"), ["elements are wrong", "hint:"]),
    ("packed_b16", "selectors of lo and hi swapped", ("0x5410", "0xAAAA", "0x7632", "0x5410", "0xAAAA", "0x7632"),
     ["every element is wrong"]),
    ("packed_b16", "halves of each word swapped", ("0x5410", "0x1054", "0x7632", "0x3276"), ["elements are wrong"]),
    ("packed_b16", "loads two 16-bit elements separately",
     ("v = *reinterpret_cast<const unsigned*>(in + (size_t)r * cols + c);",
      "v = in[(size_t)r * cols + c] | (unsigned)in[(size_t)r * cols + c + 1] << 16;"),
     ["4-byte global loads and stores", "2 bytes per thread", "32-bit word"]),
    ("packed_b16", "pairs built from signed shorts: the sign spreads into the high half",
     ("lo = __byte_perm(a, b, 0x5410);", "lo = (unsigned)(short)a | (unsigned)(short)b << 16;"),
     ["elements are wrong", "sign was spread", "unsigned short"]),
    ("packed_b16", "the barrier inside the load's bounds test",
     ("    __syncthreads();\n", "", "        w[j][threadIdx.x] = v;\n", "        w[j][threadIdx.x] = v;\n        if (r < rows) __syncthreads();\n"),
     ["Barrier skipped", "2x4098"]),
    # 10: batches
    ("batched", "only in is moved", ("    out += blockIdx.z * matrix;\n", ""), ["the wrong values come from matrix", "move both pointers"]),
    ("batched", "out moved by rows * rows", ("out += blockIdx.z * matrix;", "out += blockIdx.z * (size_t)rows * rows;"),
     ["96x160", "come from matrix 1", "b * cols * rows"]),
    ("batched", "threads outside the matrix return early",
     ("    for (int j = 0; j < 32; j += 8)\n        if (x < cols", "    if (x >= cols || y >= rows) return;\n    for (int j = 0; j < 32; j += 8)\n        if (x < cols"),
     ["Barrier skipped", "do not return early"]),
    ("batched", "bounds test one too generous", ("if (x < cols && y + j < rows)", "if (x <= cols && y + j < rows)"),
     ["stopped the kernel", "Out of bounds", "line"]),
    # 12: the tile filled by cp.async
    ("async_tile", "ordinary loads into the tile", (ASYNC_COPY, "tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];"),
     ["ordinary loads", "ld.global", "not cp.async", "__pipeline_memcpy_async"]),
    ("async_tile", "no wait: the tile is read while the copies are on their way",
     ("    __pipeline_wait_prior(0);                    // this thread's copies have landed\n", ""),
     ["cp.async race", "before waiting for it", "__pipeline_wait_prior(0)", "elements are wrong"]),
    ("async_tile", "the wait before the commit: it waits for no group",
     ("    __pipeline_commit();\n    __pipeline_wait_prior(0);", "    __pipeline_wait_prior(0);\n    __pipeline_commit();"),
     ["cp.async race", "before waiting for it"]),
    ("async_tile", "no barrier after the wait: other threads' copies read", (ASYNC_BARRIER, ""),
     ["RAW hazard", "line 18", "__syncthreads() that follows every thread's wait"]),
    ("async_tile", "the barrier before the wait", (ASYNC_WAIT + ASYNC_BARRIER, "    __syncthreads();\n    __pipeline_wait_prior(0);\n"),
     ["RAW hazard", "no races"]),
    ("async_tile", "the tile turned around on its way in, unpadded: each warp's copies write a column of it",
     ("tile[32][32 + 1]", "tile[32][32]", "&tile[threadIdx.y + j][threadIdx.x], &in", "&tile[threadIdx.x][threadIdx.y + j], &in",
      "= tile[threadIdx.x][threadIdx.y + j];", "= tile[threadIdx.y + j][threadIdx.x];"),
     ["correct on", "the shared cp.async writes on line", "32.0 wavefronts per request"]),
    # 11: beat the library on counts
    ("beat_library", "the barrier inside the load's bounds test",
     ("        row[0] = v.x; row[1] = v.y; row[2] = v.z; row[3] = v.w;\n    }\n    __syncthreads();",
      "        row[0] = v.x; row[1] = v.y; row[2] = v.z; row[3] = v.w;\n        __syncthreads();\n    }"),
     ["Barrier skipped"]),
    ("beat_library", "float4 loads, but four scalar stores: each a 4-byte store 16 bytes from the next lane's",
     ("        *reinterpret_cast<float4*>(out + (size_t)orow * rows + oc) =\n"
      "            make_float4(tile[k][threadIdx.y], tile[k + 1][threadIdx.y], tile[k + 2][threadIdx.y], tile[k + 3][threadIdx.y]);",
      "        for (int e = 0; e < 4; ++e) out[(size_t)orow * rows + oc + e] = tile[k + e][threadIdx.y];"),
     ["correct on 5 shapes", "over the budget: sectors 640 per 1024 elements (budget 256)", "fast"]),
    # 12: the pipeline (more of its wrong kernels, one stage at a time dressed up, in test_pipeline.py)
    ("async_pipeline", "the barrier only for threads whose column of out is inside the matrix",
     ("        __syncthreads();                         // every thread's copies of tile s have landed",
      "        if (ty * blockDim.x + threadIdx.x < rows) __syncthreads();"),
     ["Deadlock", "wait at different __syncthreads() barriers", "1000x1030"]),
]


@pytest.mark.parametrize("key,what,pairs,words", WRONG, ids=[f"{w[0]}: {w[1]}" for w in WRONG])
def test_wrong_kernel_fails_with_a_helpful_message(key, what, pairs, words):
    ex = E.get(key)
    report = E.check(ex, _kernel(_mutate(key, pairs), ex.kernel))
    text = repr(report)
    assert not report.ok and text.startswith("✗") and "hint:" in text and "Traceback" not in text
    for w in words:
        assert w in text, f"{what}: expected {w!r} in\n{text}"


@pytest.mark.skipif(bool(nvrtc.machine_code_missing()), reason="the premise is about the machine code")
def test_aos_struct_stub_fails_for_conflicts_ptxas_cannot_remove():
    """Notebook 08's premise, on NVRTC 13.0's machine code for sm_90: ptxas turns the stub's 40 reads per
    lane into ten LDS.128, still 2-way (8 wavefronts each); Giles's mapping into 40 conflict-free LDS.
    (For I = 6, the exercise's old premise, three LDS.64 made the stub conflict-free.)"""
    ex = E.get("aos_struct")

    def per_warp(src):
        res = cl.Simulator().run(_kernel(src, ex.kernel), block=ex.block, tile=ex.tile, shape=(1024, 40))
        assert res.correct.ok, res.correct
        return aos.shared_code(res.sim, "ld"), aos.shared_code(res.sim, "st")
    assert per_warp(solutions.stub("aos_struct")) == (("10 × LDS.128", 80, 40), ("40 × STS", 40, 0))
    assert per_warp(SOL["aos_struct"]) == (("40 × LDS", 40, 0), ("40 × STS", 40, 0))


# Wrong kernels derived from each exercise's own solution and parameters (course_lib/teach/mutants.py): no
# tile size or type is written here, so an exercise edited in its folder is tested as it now is.
DERIVED = [(key, m) for key in sorted(SOL) for m in mutants.derive(E.get(key), lambda p, k=key: solutions.body(k, p))]


@pytest.mark.parametrize("key,m", DERIVED, ids=[f"{k}: {m.name}" for k, m in DERIVED])
def test_wrong_kernel_derived_from_the_exercise_fails(key, m):
    ex = E.EXERCISES[key]
    text = repr(E.check(ex, _kernel(m.source, ex.kernel)))
    assert text.startswith("✗") and "hint:" in text and not mutants.missing(m, text), f"{m.what}:\n{text}"


def test_every_exercise_gets_derived_wrong_kernels_and_every_mutation_fits_one():
    assert {k for k, _ in DERIVED} == set(SOL)
    assert {m.name for _, m in DERIVED} == {m.name for m in mutants.MUTATIONS}
    assert all(m.doc for m in mutants.MUTATIONS)


def test_a_64x64_padded_tile_needs_only_its_folder(tmp_path):
    """An instructor makes padded_tile a 64x64 tile (64x16 threads, a loop) by editing exercises/padded_tile/
    alone, in a copy: it loads, its solution passes, its stub fails, every derived wrong kernel fails."""
    copy = tmp_path / "padded_tile"
    shutil.copytree(folder("padded_tile"), copy)
    toml = (copy / "exercise.toml").read_text()
    toml = toml.replace("TILE = 32", "TILE = 64\nBY = 16").replace('block = ["TILE", "TILE"]', 'block = ["TILE", "BY"]')
    (copy / "exercise.toml").write_text(toml)
    sol = (copy / "solution.cu").read_text()
    for old, new in (("    if (x < cols && y < rows)\n        tile[threadIdx.y][threadIdx.x] = in[(size_t)y * cols + x];",
                      "    for (int j = 0; j < TILE; j += BY)\n        if (x < cols && y + j < rows)\n"
                      "            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];"),
                     ("    if (x < rows && y < cols)\n        out[(size_t)y * rows + x] = tile[threadIdx.x][threadIdx.y];",
                      "    for (int j = 0; j < TILE; j += BY)\n        if (x < rows && y + j < cols)\n"
                      "            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];")):
        assert old in sol
        sol = sol.replace(old, new)
    (copy / "solution.cu").write_text(sol)
    ex = spec.load(copy)
    assert (ex.tile, ex.block) == ((64, 64), (64, 16)) and "64x64 tile" in repr(ex)
    body_of = lambda p: spec.render(solutions._cell(sol), p)       # noqa: E731
    assert E.check(ex, _kernel(body_of(dict(ex.params)), ex.kernel)).ok
    assert not E.check(ex, _kernel(E.strip_solutions(body_of(dict(ex.params))), ex.kernel)).ok
    wrong = mutants.derive(ex, body_of)
    assert {"drop_barrier", "no_padding", "swap_store_bounds", "loop_step_one"} <= {m.name for m in wrong}
    for m in wrong:
        text = repr(E.check(ex, _kernel(m.source, ex.kernel)))
        assert text.startswith("✗") and not mutants.missing(m, text), f"{m.what}:\n{text}"


def test_at_least_three_wrong_kernels_per_exercise_and_the_barrier_in_if_where_a_block_barrier_is():
    for key in E.EXERCISES:
        mine = [w for w in WRONG if w[0] == key] + [(k, m.what, m.source, m.words) for k, m in DERIVED if k == key]
        assert len(mine) >= 3, key
        if "__syncthreads()" in SOL[key]:
            assert any("Barrier skipped" in w[3] or "Deadlock" in w[3] for w in mine), key


def test_a_kernel_right_on_the_first_shape_is_judged_on_every_shape():
    """Out of bounds only on 1xN: the old checker (properties on the first shape) saw nothing."""
    src = _mutate("shared_tile", ("if (x < cols && y < rows)\n        tile", "if (x < cols && (y < rows || rows == 1))\n        tile"))
    text = repr(E.check("shared_tile", _kernel(src, "transpose_tile")))
    assert "on a 1x4097 matrix the simulator stopped the kernel" in text and "Out of bounds" in text


def test_coalescing_allows_what_misaligned_rows_cost_and_no_more():
    on = Shape(1030, 1030, 4)
    assert not on.aligned("ld") and not on.aligned("st") and Shape(64, 64, 4).aligned("st")
    assert not Shape(1000, 1030, 4).aligned("ld") and Shape(1000, 1030, 4).aligned("st")   # 4000-byte rows of out
    assert Shape(1, 4097, 4).aligned("ld") and not Shape(1, 4097, 4).aligned("st")
    assert Shape(4097, 1, 4, copy=True).aligned("st") is False and Shape(64, 8, 4, copy=True).aligned("st")

    class Run:
        def __init__(self, sectors, width=4, requests=10):
            self.instructions = [dict(space="global", op="st", line=7, requests=requests, sectors=sectors,
                                      width=width, bytes=requests * 32 * width)]
    test = E.coalesced("st").test
    assert test(Run(40), Shape(64, 64, 4)) is None and "4 would be coalesced" in test(Run(50), Shape(64, 64, 4))
    assert test(Run(50), on) is None                          # one sector more per warp where rows straddle sectors
    assert "at most 6.0 here" in test(Run(80), on)            # stride 2: 8 per request is not coalesced anywhere
    assert test(Run(176, width=16), on) is None and "at most 24.0" in test(Run(320, width=16), on)


def test_report_names_the_other_shapes_where_a_property_fails():
    src = solutions.body("padded_tile", {**dict(E.EXERCISES["padded_tile"].params), "PAD": 0})   # not padded
    text = repr(E.check("padded_tile", _kernel(src, "transpose_padded")))
    assert re.search(r"on 64x64: .*\(also on 96x160, 1000x1030", text)


def test_checker_answers_instead_of_raising_for_wrong_objects():
    ex = E.get("shared_tile")
    assert "no kernel named transpose_tile" in repr(E.check(ex))
    assert "not a compiled kernel" in repr(E.check(ex, "transpose_tile"))
    wrong_params = _kernel("__global__ void transpose_tile(float* out, const float* in, int n) {}", "transpose_tile")
    assert "does not take" in repr(E.check(ex, wrong_params))
    doubles = _kernel(SOL["shared_tile"].replace("float", "double"), "transpose_tile")
    assert "moves double" in repr(E.check(ex, doubles))
    mixed = _kernel(SOL["shared_tile"].replace("const float* in", "const double* in"), "transpose_tile")
    assert "different types" in repr(E.check(ex, mixed))
    endless = _kernel(SOL["first_copy"].replace("if (x < cols && y < rows) {", "while (x >= 0) {"), "first_copy")
    text = repr(E.check("first_copy", endless))
    assert "stopped the kernel" in text and "also on" not in text       # one shape is enough to say so


def test_reveal_shows_the_course_kernel_only_after_a_pass_and_only_in_self_study(monkeypatch):
    E.PASSED.discard("column_read")
    for asked in (E.reveal("column_read"), E.reveal("column_read", give_up=True)):   # giving up shows nothing
        assert not asked.shown and "stays hidden until your kernel passes" in repr(asked)
        assert "blockIdx" not in repr(asked) and asked._repr_markdown_() is None
    assert not E.check("column_read", _kernel(solutions.stub("column_read"), "transpose_col")).ok
    assert not E.reveal("column_read").shown                              # a failed check reveals nothing
    assert E.check("column_read", _kernel(SOL["column_read"], "transpose_col")).ok
    course = cl.transposes.kernel(E.get("column_read").reveal).source     # naive_col, notebook 03's next listing
    for where in ("checkout", "installed"):                               # the same without solution files
        shown = E.reveal("column_read")
        assert shown.shown and course in repr(shown) and "naive_col" in repr(shown)
        assert "int r = blockIdx.y * 32 + threadIdx.x;" not in repr(shown)    # never the solution file
        assert "SOLUTION" not in repr(shown) and "```cuda" in shown._repr_markdown_()
        monkeypatch.setattr(solutions, "SOLUTIONS_DIR", solutions.SOLUTIONS_DIR / "nowhere")   # an installed wheel
    assert solutions.keys() == [] and solutions.directory() is None
    assert solutions.stub("column_read") == strip_solutions_of("column_read")   # stub.cu stands in
    with pytest.raises(KeyError, match="stay with instructors"):
        solutions.body("column_read")
    monkeypatch.setenv("COURSE_LIB_GRADED", "1")                          # a graded release: never
    graded = E.reveal("column_read")
    assert not graded.shown and "graded release" in repr(graded) and "blockIdx" not in repr(graded)
    with pytest.raises(KeyError, match="no exercise"):
        E.reveal("nope")


def test_reveal_points_at_the_line_that_differs_from_the_earlier_lessons_kernel():
    """04 and 05 reveal the same file (kernels/tile.cu); 05's reveal names and marks the one line PAD
    changes, and says what the student's element size needs."""
    assert E.check("padded_tile", _kernel(SOL["padded_tile"], "transpose_padded")).ok
    shown = E.reveal("padded_tile")
    assert shown.shown and "notebook 04's `tile`" in shown.note and "PAD = 1" in shown.note
    assert "line 28: `__shared__ T t[TILE][TILE + PAD];`" in shown.note and shown.marked == {28}
    assert "`unsigned short`, which need PAD = 2" in shown.note
    marked = [line for line in shown._repr_markdown_().splitlines() if "the line that differs" in line]
    assert marked == ["    __shared__ T t[TILE][TILE + PAD];    // <-- the line that differs"]
    assert E.check("shared_tile", _kernel(SOL["shared_tile"], "transpose_tile")).ok
    assert E.reveal("shared_tile").note == ""                 # the first of the file: nothing to compare


def strip_solutions_of(key):
    return E.strip_solutions(SOL[key])


def test_strip_solutions_convention():
    cell = ("int a;\n    // BEGIN SOLUTION (the instructor's version)\n    //> int x = 0;  // TODO\n"
            "    int x = 42;\n    // END SOLUTION\n  # BEGIN SOLUTION\n  y = 1\n  # END SOLUTION\nint b;\n")
    assert E.strip_solutions(cell) == "int a;\n    int x = 0;  // TODO\n  # TODO: your code here\nint b;\n"
    assert solutions.solved(cell) == "int a;\n    int x = 42;\n  y = 1\nint b;\n"
    for bad in ("// BEGIN SOLUTION\nx\n", "x\n// END SOLUTION\n", "// BEGIN SOLUTION\n// BEGIN SOLUTION\n"):
        with pytest.raises(ValueError):
            E.strip_solutions(bad)
    assert E.strip_solutions("no markers\n") == "no markers\n"


def test_solution_files_are_documented_and_their_bodies_are_cells():
    for key in SOL:
        text = solutions.path(key).read_text()
        assert text.startswith("//! Exercise") and f"'{key}'" in text.splitlines()[0]
        assert not SOL[key].startswith("//!") and not SOL[key].endswith("\n")


def test_exercise_description_says_what_to_write():
    text = repr(E.get("vectorized"))
    assert "transpose_vec4(float* out, const float* in, int rows, int cols)" in text
    assert "blocks of 8x32 threads" in text and "multiples of 4" in text
    assert "checked on every shape" in text and "barriers all threads reach" in text
    assert "grid = (ceil(cols / 32), ceil(rows / 32), batch)" in repr(E.get("batched"))
    assert "out: rows x cols" in repr(E.get("first_copy"))


def test_random_inputs_are_never_zero_and_differ_from_the_poison():
    for dtype in (np.float32, np.float64, np.float16, np.uint8, np.uint16):
        a, _ = E.input_for(E.get("first_copy"), (64, 64), dtype, 0)
        assert (a != 0).all() and not np.isin(a, E.output_for(E.get("first_copy"), a)).any()


# ---------------------------------------------------------------------------- variants per student


VARIANTS = [(key, i) for key in sorted(E.EXERCISES) for i, _ in enumerate(variants.declared(key))]


def _variant(key, i):
    params = {**spec.defaults(spec.read(folder(key))), **variants.declared(key)[i]}
    return params, spec.load(folder(key), params)


def test_the_five_exercises_the_issue_names_have_variants():
    assert {"shared_tile", "padded_tile", "tile_32x8", "aos_struct", "async_tile"} <= {k for k, _ in VARIANTS}


@pytest.mark.parametrize("key,i", VARIANTS, ids=[f"{k}-{i}" for k, i in VARIANTS])
def test_a_variant_is_solved_by_its_own_solution_and_not_by_the_notebooks_or_a_neighbours(key, i):
    params, ex = _variant(key, i)
    assert ex.variant and f"YOUR VARIANT: {ex.variant}" in repr(ex)
    assert E.check(ex, _kernel(solutions.body(key, params), ex.kernel)).ok
    printed = E.check(ex, _kernel(SOL[key], ex.kernel))           # the default: the notebook's answer
    assert not printed.ok and "hint:" in repr(printed)
    other = variants.declared(key)[(i + 1) % len(variants.declared(key))]
    if other != variants.declared(key)[i]:
        theirs = solutions.body(key, {**spec.defaults(spec.read(folder(key))), **other})
        assert theirs != solutions.body(key, params) and not E.check(ex, _kernel(theirs, ex.kernel)).ok


def test_a_variants_check_stub_and_text_follow_its_parameters(monkeypatch):
    # the holder of a variant key (a student on the hub) gets that key's variant (tests/teach/test_variants.py)
    monkeypatch.setattr(variants, "_explicit", [None])
    for name in (variants.ENV_STUDENT, variants.ENV_HUB_USER):
        monkeypatch.delenv(name, raising=False)
    vkey = next(k for k in (variants.student_key("a class", f"s{n}") for n in range(100))
                if "T = unsigned char" in variants.of_key("padded_tile", k).variant)
    monkeypatch.setenv(variants.ENV_KEY, vkey)
    ex = E.get("padded_tile")
    assert "unsigned char* out" in repr(ex) and ex.dtypes == (np.uint8,)
    assert "unsigned char tile[32][32];" in E.stub("padded_tile")
    report = E.check("padded_tile", _kernel(E.stub("padded_tile"), ex.kernel))
    # the hint speaks of the variant's type and leads to its padding without handing it over (issue 35)
    assert not report.ok and "how many bytes is one unsigned char" in repr(report) and "[32][32 + ?]" in repr(report)
    assert "[32][32 + 4]" not in repr(report)
    assert E.check("padded_tile", _kernel(solutions.body("padded_tile", dict(ex.params)), ex.kernel)).ok
    assert not E.check("padded_tile", _kernel(SOL["padded_tile"], ex.kernel)).ok


@pytest.mark.parametrize("key", sorted(SOL))
def test_stub_file_is_the_solutions_stub(key):
    """exercises/<key>/stub.cu is what a student repository and the wheel have: it must be solution.cu's
    stub (instructor check --sync-stubs writes it), and render to the notebook's cell without solution.cu."""
    assert (folder(key) / spec.STUB).read_text() == solutions.stub_file_text(key)
    assert solutions.stub(key) == E.strip_solutions(SOL[key])
