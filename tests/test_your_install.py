"""Does the course work on this machine? What the student repository's README test command runs first
(`python -m pytest -m student`, with notebooks 00 and 04 through nbval): CUDA C++ compiles here, the
simulator runs a transpose and counts its memory traffic as the notebooks do, it names a race and an
out-of-bounds store by their lines, and an exercise's checker says what is wrong with a kernel and hints
how to fix it. No GPU needed (the simulator runs the kernels); about half a minute."""
import numpy as np
import pytest

import course_lib as cl
from course_lib.notebook import magic
from course_lib.teach import exercises

pytestmark = pytest.mark.student

TILE = r'''
template <int PAD>
__global__ void tiled(float* out, const float* in, int rows, int cols) {
    __shared__ float t[32][32 + PAD];
    int c = blockIdx.x * 32 + threadIdx.x, r = blockIdx.y * 32 + threadIdx.y;
    if (c < cols && r < rows) t[threadIdx.y][threadIdx.x] = in[(size_t)r * cols + c];
    BARRIER
    c = blockIdx.y * 32 + threadIdx.x; r = blockIdx.x * 32 + threadIdx.y;
    if (c < rows && r < cols) out[(size_t)r * rows + c] = t[threadIdx.x][threadIdx.y];
}'''
CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"


def _transpose(pad: int, barrier: str = "__syncthreads();", rows=70, cols=45):
    mod = cl.RawModule(code=TILE.replace("BARRIER", barrier), options=("-std=c++17",),
                       name_expressions=[f"tiled<{pad}>"])
    a = np.random.default_rng(7).random((rows, cols), dtype=np.float32)
    out = np.full((cols, rows), np.nan, np.float32)          # poisoned: an element never written shows
    run = mod.get_function(f"tiled<{pad}>").simulate(((cols + 31) // 32, (rows + 31) // 32), (32, 32),
                                                       (out, a, np.int32(rows), np.int32(cols)))
    return a, out, run


def test_cuda_cpp_compiles_here_and_a_mistake_is_named_by_its_line():
    assert cl.RawModule(code=TILE.replace("BARRIER", ""), name_expressions=["tiled<1>"]).get_function("tiled<1>")
    with pytest.raises(cl.CompileError) as err:
        cl.RawModule(code="__global__ void k(float* x) {\n    x[0] = 1.0f\n}").get_function("k")
    assert "kernel.cu:2" in str(err.value) and "';'" in str(err.value), str(err.value)


def test_the_simulator_transposes_and_counts_the_bank_conflicts_padding_removes():
    a, out, padded = _transpose(pad=1)
    assert np.array_equal(out, a.T), "every element of a 70 x 45 matrix, in its transposed place"
    _, _, unpadded = _transpose(pad=0)
    assert padded.metrics[CONFLICTS] == 0 < unpadded.metrics[CONFLICTS], "a column of t[32][32] is one bank"


def test_the_simulator_names_a_missing_barrier_s_race_and_an_out_of_bounds_store():
    _, _, run = _transpose(pad=1, barrier="")
    assert run.races, "without __syncthreads() a thread reads what another has not written yet"
    bad = cl.RawModule(code="__global__ void k(float* x, int n) {\n    x[threadIdx.x + n] = 1.0f;\n}")
    with pytest.raises(cl.MemoryAccessError) as err:
        bad.get_function("k").simulate((1,), (32,), (np.zeros(32, np.float32), np.int32(1)))
    assert "kernel.cu:2" in str(err.value) and "element 32" in str(err.value), str(err.value)


def test_an_exercise_s_checker_says_what_is_wrong_and_hints_at_the_fix():
    """notebook 04's exercise, answered with a kernel that copies through the tile instead of transposing."""
    mine = r'''
__global__ void transpose_tile(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][32];
    int col = blockIdx.x * 32 + threadIdx.x, row = blockIdx.y * 32 + threadIdx.y;
    if (row < rows && col < cols) tile[threadIdx.y][threadIdx.x] = in[(size_t)row * cols + col];
    __syncthreads();
    if (row < cols && col < rows) out[(size_t)row * rows + col] = tile[threadIdx.y][threadIdx.x];
}'''
    key = "shared_tile"
    report = exercises.check(key, magic.compile_cell("", mine)[1][exercises.get(key).kernel])
    assert not report.ok and report.problems
    assert all(hint for _, hint in report.problems), repr(report)
    stub = exercises.check(key, magic.compile_cell("", exercises.stub(key))[1][exercises.get(key).kernel])
    assert not stub.ok, "the exercise as handed out is not done yet"
