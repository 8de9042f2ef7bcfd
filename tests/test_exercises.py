"""Every exercise: its solution passes, its stub (the student build of the solution cell) fails
cleanly, and plausible wrong kernels fail with a message that names the problem and a hint."""
import numpy as np
import pytest

from course_lib import exercises as E
from course_lib import magic

# Solutions are written the way an instructor writes the %%cuda cell: markers included.
SOLUTIONS = {
    "shared_tile": r"""
__global__ void transpose_tile(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][32];
    // BEGIN SOLUTION
    //> // 1. copy this block's 32x32 tile of `in` into `tile` (one element per thread)
    //> // 2. wait until the whole tile is there
    //> // 3. write the tile, transposed, to the mirrored place in `out`
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    if (x < cols && y < rows)
        tile[threadIdx.y][threadIdx.x] = in[(size_t)y * cols + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    if (x < rows && y < cols)
        out[(size_t)y * rows + x] = tile[threadIdx.x][threadIdx.y];
    // END SOLUTION
}
""",
    "padded_tile": r"""
__global__ void transpose_padded(float* out, const float* in, int rows, int cols)
{
    // BEGIN SOLUTION
    //> __shared__ float tile[32][32];
    __shared__ float tile[32][32 + 1];
    // END SOLUTION
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    if (x < cols && y < rows)
        tile[threadIdx.y][threadIdx.x] = in[(size_t)y * cols + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    if (x < rows && y < cols)
        out[(size_t)y * rows + x] = tile[threadIdx.x][threadIdx.y];
}
""",
    "tile_32x8": r"""
__global__ void transpose_32x8(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    // BEGIN SOLUTION
    for (int j = 0; j < 32; j += 8)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    // END SOLUTION
}
""",
    "vectorized": r"""
__global__ void transpose_vec4(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][32 + 1];
    int c = blockIdx.x * 32 + threadIdx.x * 4;      // first of this thread's 4 columns of in
    int r = blockIdx.y * 32 + threadIdx.y;          // its row of in
    // BEGIN SOLUTION
    if (r < rows && c < cols) {                     // cols % 4 == 0: c + 3 < cols too
        float4 v = reinterpret_cast<const float4*>(in + (size_t)r * cols + c)[0];
        tile[threadIdx.y][threadIdx.x * 4 + 0] = v.x;
        tile[threadIdx.y][threadIdx.x * 4 + 1] = v.y;
        tile[threadIdx.y][threadIdx.x * 4 + 2] = v.z;
        tile[threadIdx.y][threadIdx.x * 4 + 3] = v.w;
    }
    __syncthreads();
    int oc = blockIdx.y * 32 + threadIdx.x * 4;     // first of 4 columns of out (rows of in)
    int orow = blockIdx.x * 32 + threadIdx.y;       // row of out (a column of in)
    if (orow < cols && oc < rows) {
        float4 v;
        v.x = tile[threadIdx.x * 4 + 0][threadIdx.y];
        v.y = tile[threadIdx.x * 4 + 1][threadIdx.y];
        v.z = tile[threadIdx.x * 4 + 2][threadIdx.y];
        v.w = tile[threadIdx.x * 4 + 3][threadIdx.y];
        reinterpret_cast<float4*>(out + (size_t)orow * rows + oc)[0] = v;
    }
    // END SOLUTION
}
""",
}

NAIVE = r"""
__global__ void {name}(float* out, const float* in, int rows, int cols)
{{
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    if (x < cols && y < rows)
        out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}}
"""

S = SOLUTIONS
# (exercise, description, source, words the report must contain)
WRONG = [
    ("shared_tile", "naive, no shared memory", NAIVE.format(name="transpose_tile"),
     ["never touches shared memory", "32.0 sectors per request", "hint:"]),
    ("shared_tile", "no barrier", S["shared_tile"].replace("__syncthreads();", ""),
     ["no races", "hazard", "__syncthreads()"]),
    ("shared_tile", "tile read back untransposed",
     S["shared_tile"].replace("= tile[threadIdx.x][threadIdx.y]", "= tile[threadIdx.y][threadIdx.x]"),
     ["elements are wrong", "out[c * rows + r]"]),
    ("shared_tile", "bounds test compares y with cols",
     S["shared_tile"].replace("if (x < cols && y < rows)", "if (x < cols && y < cols)"),
     ["1000x1030", "Out of bounds", "line"]),
    ("padded_tile", "not padded: 32-way conflicts", S["padded_tile"].replace("[32 + 1]", "[32]"),
     ["bank conflicts", "32.0 wavefronts per request", "pad"]),
    ("padded_tile", "padded by 2: still 2-way", S["padded_tile"].replace("[32 + 1]", "[32 + 2]"),
     ["bank conflicts", "2.0 wavefronts per request"]),
    ("padded_tile", "no barrier", S["padded_tile"].replace("__syncthreads();", ""), ["no races"]),
    ("padded_tile", "rows and cols swapped in the store's bounds test",
     S["padded_tile"].replace("if (x < rows && y < cols)", "if (x < cols && y < rows)"),
     ["96x160", "wrong"]),
    ("tile_32x8", "stores only the first quarter",
     S["tile_32x8"].replace("for (int j = 0; j < 32; j += 8)\n        if (x < rows", "for (int j = 0; j < 8; j += 8)\n        if (x < rows"),
     ["never written"]),
    ("tile_32x8", "forgets + j when reading the tile",
     S["tile_32x8"].replace("tile[threadIdx.x][threadIdx.y + j]", "tile[threadIdx.x][threadIdx.y]"),
     ["elements are wrong"]),
    ("tile_32x8", "unpadded tile", S["tile_32x8"].replace("[32][33]", "[32][32]"), ["bank conflicts"]),
    ("vectorized", "scalar global accesses",
     S["vectorized"].replace("float4 v = reinterpret_cast<const float4*>(in + (size_t)r * cols + c)[0];",
                             "float4 v; const float* p = in + (size_t)r * cols + c; v.x = p[0]; v.y = p[1]; v.z = p[2]; v.w = p[3];"),
     ["16-byte", "4 bytes per thread", "float4"]),
    ("vectorized", "unpadded float tile: 8-way column reads", S["vectorized"].replace("[32][32 + 1]", "[32][32]"),
     ["bank conflicts", "8.0 wavefronts per request"]),
    ("vectorized", "no barrier", S["vectorized"].replace("__syncthreads();", ""), ["no races"]),
    ("vectorized", "no column bounds test", S["vectorized"].replace("if (r < rows && c < cols)", "if (r < rows)"),
     ["Out of bounds"]),
]


def _kernel(source, name):
    _, names = magic.compile_cell("", source)
    return names[name]


# Exercises that notebook authors add later are tested in their own files (tests/test_lessons_*.py)
OWN = {"shared_tile", "padded_tile", "tile_32x8", "vectorized"}


def test_every_defined_exercise_has_a_solution_here():
    assert OWN <= set(E.EXERCISES) and OWN <= set(SOLUTIONS)
    assert {"04", "05", "07"} <= {ex.lesson for ex in E.EXERCISES.values()}


@pytest.mark.parametrize("key", list(SOLUTIONS))
def test_solution_passes(key):
    ex = E.get(key)
    report = E.check(ex, _kernel(SOLUTIONS[key], ex.kernel))
    assert report.ok, repr(report)
    assert repr(report).startswith("✓") and "Well done" in repr(report)


@pytest.mark.parametrize("key", list(SOLUTIONS))
def test_stub_compiles_and_fails_cleanly(key):
    ex = E.get(key)
    stub = E.strip_solutions(SOLUTIONS[key])
    assert "BEGIN SOLUTION" not in stub and not E.has_solution(stub) and E.has_solution(SOLUTIONS[key])
    report = E.check(ex, _kernel(stub, ex.kernel))
    assert not report.ok and "hint:" in repr(report)


@pytest.mark.parametrize("key,what,source,words", WRONG, ids=[f"{w[0]}: {w[1]}" for w in WRONG])
def test_wrong_kernel_fails_with_a_helpful_message(key, what, source, words):
    assert source != SOLUTIONS[key], "the mutation did not apply"
    ex = E.get(key)
    report = E.check(ex, _kernel(source, ex.kernel))
    text = repr(report)
    assert not report.ok and text.startswith("✗") and "hint:" in text
    for w in words:
        assert w in text, f"{what}: expected {w!r} in\n{text}"


def test_at_least_three_wrong_kernels_per_exercise():
    for key in OWN:
        assert sum(w[0] == key for w in WRONG) >= 3, key


def test_checker_answers_instead_of_raising_for_wrong_objects():
    ex = E.get("shared_tile")
    assert "no kernel named transpose_tile" in repr(E.check(ex))
    assert "not a compiled kernel" in repr(E.check(ex, "transpose_tile"))
    wrong_params = _kernel("__global__ void transpose_tile(float* out, const float* in, int n) {}", "transpose_tile")
    assert "does not take" in repr(E.check(ex, wrong_params))
    doubles = _kernel(SOLUTIONS["shared_tile"].replace("float", "double"), "transpose_tile")
    assert "moves double" in repr(E.check(ex, doubles))


def test_strip_solutions_convention():
    cell = ("int a;\n    // BEGIN SOLUTION (the instructor's version)\n    //> int x = 0;  // TODO\n"
            "    int x = 42;\n    // END SOLUTION\n  # BEGIN SOLUTION\n  y = 1\n  # END SOLUTION\nint b;\n")
    assert E.strip_solutions(cell) == "int a;\n    int x = 0;  // TODO\n  # TODO: your code here\nint b;\n"
    for bad in ("// BEGIN SOLUTION\nx\n", "x\n// END SOLUTION\n", "// BEGIN SOLUTION\n// BEGIN SOLUTION\n"):
        with pytest.raises(ValueError):
            E.strip_solutions(bad)
    assert E.strip_solutions("no markers\n") == "no markers\n"


def test_exercise_description_says_what_to_write():
    text = repr(E.get("vectorized"))
    assert "transpose_vec4(float* out, const float* in, int rows, int cols)" in text
    assert "blocks of 8x32 threads" in text and "multiples of 4" in text
