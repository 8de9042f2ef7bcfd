"""Honest students' kernels (issue 32): for each exercise, correct kernels written in other words than its
solution — other index arithmetic, another loop form, other names — that the origin check must not take for
a course kernel. The solution as a student writes it (no markers, no comments) is ``own(key)``; ``HONEST``
holds the others, as %%cuda cell bodies for the exercise's default variant. Test helper only."""
from __future__ import annotations

import re

from course_lib.teach import exercises as E
from course_lib.teach import solutions, spec


def own(key: str, params=None) -> str:
    """The solution of `key` (its variant `params`) as a student would write it: no markers, no comments."""
    solved = solutions.solved(solutions.body(key, params))
    return "\n".join(line.split("//")[0].rstrip() for line in solved.splitlines())


_TILE_WORDS = """__global__ void NAME(T* out, const T* in, int rows, int cols)
{
    __shared__ T tile[32][WIDTH];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int r0 = blockIdx.y * 32, c0 = blockIdx.x * 32;
    if (r0 + ty < rows && c0 + tx < cols)
        tile[ty][tx] = in[(size_t)(r0 + ty) * cols + (c0 + tx)];
    __syncthreads();
    if (c0 + ty < cols && r0 + tx < rows)
        out[(size_t)(c0 + ty) * rows + (r0 + tx)] = tile[tx][ty];
}"""
_TILE_SIZE_T = """__global__ void NAME(T* out, const T* in, int rows, int cols)
{
    __shared__ T buffer[32][WIDTH];
    size_t row = blockIdx.y * 32 + threadIdx.y, col = blockIdx.x * 32 + threadIdx.x;
    bool inside = row < rows && col < cols;
    if (inside)
        buffer[threadIdx.y][threadIdx.x] = in[row * cols + col];
    __syncthreads();
    size_t orow = blockIdx.x * 32 + threadIdx.y, ocol = blockIdx.y * 32 + threadIdx.x;
    if (orow < cols && ocol < rows)
        out[orow * rows + ocol] = buffer[threadIdx.x][threadIdx.y];
}"""
_TILE_LDG = """__global__ void NAME(T* out, const T* in, int rows, int cols)
{
    __shared__ T t[32][WIDTH];
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y < rows && x < cols)
        t[threadIdx.y][threadIdx.x] = __ldg(in + (size_t)y * cols + x);
    __syncthreads();
    x = blockIdx.y * blockDim.y + threadIdx.x;
    y = blockIdx.x * blockDim.x + threadIdx.y;
    if (y < cols && x < rows)
        out[x + (size_t)y * rows] = t[threadIdx.x][threadIdx.y];
}"""


def _params(key: str, text: str) -> str:
    """A kernel written with the exercise's parameter names (TILE, BY, T) and KERNEL, for its default variant: a
    tile_32x8 made 64x64 in its folder gets honest kernels of its own tile."""
    ex = E.get(key)
    return spec.render(text.replace("KERNEL", ex.kernel), dict(ex.params))


def _tile(name, width, t):
    return [re.sub(r"\bT\b", t, k.replace("NAME", name).replace("WIDTH", width))
            for k in (_TILE_WORDS, _TILE_SIZE_T, _TILE_LDG)]


HONEST = {
    "shared_tile": _tile("transpose_tile", "32", "float"),
    "padded_tile": _tile("transpose_padded", "32 + 2", "unsigned short"),      # its default: 2-byte elements
    "tile_32x8": [_params("tile_32x8", k) for k in ["""__global__ void KERNEL(T* out, const T* in, int rows, int cols)
{
    __shared__ T tile[TILE][{TILE + 1}];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    int j = 0;
    while (j < TILE) {
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
        j += BY;
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (j = 0; j < TILE; j += BY)
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}""", """__global__ void KERNEL(T* out, const T* in, int rows, int cols)
{
    __shared__ T tile[TILE][TILE + 1];
    const int col = blockIdx.x * TILE + threadIdx.x, top = blockIdx.y * TILE;
    if (col < cols)
        for (int k = 0; k < TILE / BY; ++k) {
            int r = top + threadIdx.y + BY * k;
            if (r < rows)
                tile[threadIdx.y + BY * k][threadIdx.x] = in[(size_t)r * cols + col];
        }
    __syncthreads();
    const int ocol = top + threadIdx.x, otop = blockIdx.x * TILE;
    if (ocol < rows)
        for (int k = 0; k < TILE / BY; ++k) {
            int orow = otop + threadIdx.y + BY * k;
            if (orow < cols)
                out[(size_t)orow * rows + ocol] = tile[threadIdx.x][threadIdx.y + BY * k];
        }
}""", """__global__ void KERNEL(T* out, const T* in, int rows, int cols)
{
    __shared__ T tile[TILE][{TILE + 1}];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    const T* src = in + (size_t)y * cols + x;
    for (int j = 0; j < TILE; j += BY, src += (size_t)BY * cols)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = *src;
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    T* dst = out + (size_t)y * rows + x;
    for (int j = 0; j < TILE; j += BY, dst += (size_t)BY * rows)
        if (x < rows && y + j < cols)
            *dst = tile[threadIdx.x][threadIdx.y + j];
}"""]],
    "column_read": ["""__global__ void transpose_col(float* out, const float* in, int rows, int cols)
{
    int row = blockIdx.y * blockDim.x + threadIdx.x;
    int col = blockIdx.x * blockDim.y + threadIdx.y;
    if (col < cols && row < rows)
        out[row + (size_t)col * rows] = in[col + (size_t)row * cols];
}"""],
    "first_copy": ["""__global__ void first_copy(float* out, const float* in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) {
        size_t i = (size_t)y * cols + x;
        out[i] = in[i];
    }
}"""],
    "grid_copy": ["""__global__ void grid_copy(float* out, const float* in, int rows, int cols)
{
    size_t n = (size_t)rows * cols;
    size_t per_block = blockDim.x * blockDim.y;
    size_t i = blockIdx.x * per_block + threadIdx.y * blockDim.x + threadIdx.x;
    while (i < n) {
        out[i] = in[i];
        i += per_block * gridDim.x;
    }
}"""],
    "per_element": ["""__global__ void per_element(float* out, const float* in, int rows, int cols)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    size_t n = (size_t)rows * cols;
    if (i >= n)
        return;
    size_t r = i / cols;
    size_t c = i - r * cols;
    out[c * rows + r] = in[i];
}"""],
    "batched": ["""__global__ void transpose_batched(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][33];
    size_t base = (size_t)blockIdx.z * rows * cols;
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[base + (size_t)(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (x < rows && y + j < cols)
            out[base + (size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}"""],
}

_VEC4 = """__global__ void NAME(float* out, const float* in, int rows, int cols)
{
    __shared__ float tile[32][33];
    int r = blockIdx.y * 32 + threadIdx.y, c = blockIdx.x * 32 + 4 * threadIdx.x;
    if (r < rows && c < cols) {
        float4 v = reinterpret_cast<const float4*>(in)[((size_t)r * cols + c) / 4];
        tile[threadIdx.y][4 * threadIdx.x] = v.x;
        tile[threadIdx.y][4 * threadIdx.x + 1] = v.y;
        tile[threadIdx.y][4 * threadIdx.x + 2] = v.z;
        tile[threadIdx.y][4 * threadIdx.x + 3] = v.w;
    }
    __syncthreads();
    int orow = blockIdx.x * 32 + threadIdx.y, ocol = blockIdx.y * 32 + 4 * threadIdx.x;
    if (orow < cols && ocol < rows) {
        float4 v;
        v.x = tile[4 * threadIdx.x][threadIdx.y];
        v.y = tile[4 * threadIdx.x + 1][threadIdx.y];
        v.z = tile[4 * threadIdx.x + 2][threadIdx.y];
        v.w = tile[4 * threadIdx.x + 3][threadIdx.y];
        reinterpret_cast<float4*>(out)[((size_t)orow * rows + ocol) / 4] = v;
    }
}"""
HONEST["vectorized"] = [_VEC4.replace("NAME", "transpose_vec4")]
HONEST["beat_library"] = [_VEC4.replace("NAME", "counted_transpose")]

# the longer exercises: the solution with its one graded part written another way
EDITS = {
    "aos_struct": [("return n + n / 160;", "int pad = (n >> 5) / 5;\n    return n + pad;")],
    "packed_b16": [("lo = __byte_perm(a, b, 0x5410);", "lo = (a & 0xFFFFu) | (b << 16);"),
                   ("hi = __byte_perm(a, b, 0x7632);", "hi = (a >> 16) | (b & 0xFFFF0000u);")],
    "async_tile": [("    for (int j = 0; j < 32; j += 8)\n        if (x < cols && y + j < rows)",
                    "    for (int j = threadIdx.y; j < 32; j += 8)\n"
                    "        if (x < cols && y + j - threadIdx.y < rows)"),
                   ("&tile[threadIdx.y + j][threadIdx.x], &in[(size_t)(y + j) * cols + x]",
                    "&tile[j][threadIdx.x], &in[(size_t)(y + j - threadIdx.y) * cols + x]")],
    "async_pipeline": [("buf[(s + 1) % 2]", "buf[(s + 1) & 1]"),
                       ("buf[s % 2][threadIdx.x]", "buf[s & 1][threadIdx.x]")],
}


def honest(key: str) -> list[str]:
    """The hand-written kernels of `key`, and its solution with its graded part written another way."""
    out = list(HONEST.get(key, []))
    if key in EDITS:
        text = own(key)
        for old, new in EDITS[key]:
            assert old in text, (key, old)
            text = text.replace(old, new)
        out.append(text)
    return out
