# Builds docs/drafts/12_async_copies_and_tma.ipynb (issue 19 draft; phase 2 moves it to notebooks/ and refreshes its outputs)
import nbformat as nbf
md, code = nbf.v4.new_markdown_cell, nbf.v4.new_code_cell
C = []
C.append(md("""# 12 · Asynchronous copies and the Tensor Memory Accelerator

[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/transpose-course/transpose-course/blob/main/notebooks/12_async_copies_and_tma.ipynb)

**What you will learn**

- `cp.async`: copying global memory into shared memory without going through a register, in **groups**
  a thread commits and waits for; what Nsight Compute counts for it, and the race of reading too early
- **staging and double buffering** a transpose with `cp.async`, and when that helps (measured on an H100)
- the **Tensor Memory Accelerator** (TMA, Hopper): one thread asks for a whole tile, a *tensor map* built on
  the host describes the matrix, an **mbarrier** counts the bytes in
- why a TMA tile **cannot be padded**, and how its **32/64/128-byte swizzle** removes the bank conflicts
  instead — next to notebook 05's XOR swizzle
- `ldmatrix` / `stmatrix` `.trans` and `movmatrix`: how tensor-core code turns 16-bit tiles around
- a transpose with **no shared memory at all**: warp shuffles

The kernels are in `kernels/async_tile.cu`, `kernels/tma.cu`, `kernels/ldsm.cu` and `kernels/shuffle.cu`.
Everything runs in the simulator; the H100 figures are quoted with the command that measured them."""))
C.append(code("""# On Colab only: install the course (does nothing anywhere else, or once it is installed)
import importlib.util, sys
if "google.colab" in sys.modules and importlib.util.find_spec("course_lib") is None:
    !test -d /content/transpose-course || git clone -q --depth 1 https://github.com/transpose-course/transpose-course /content/transpose-course
    %pip install -q /content/transpose-course
    importlib.invalidate_caches()""", metadata={"tags": ["colab-install"]}))
C.append(code("""import numpy as np
import course_lib as cl
from course_lib.lessons import hopper
backend = cl.setup()
sim = cl.Simulator()"""))
C.append(md("""## Copies that do not wait: `cp.async`

Every tiled kernel so far moved an element into shared memory in two instructions: a load into a
register, then a store from it. The store has to wait for the load — several hundred cycles — and the
register is busy all that time. Since Ampere (sm_80) a thread can instead ask for a copy from global to
shared memory directly, `cp.async`, and go on: the copy happens in the background. In CUDA C++ the header
`cuda_pipeline.h` spells it

- `__pipeline_memcpy_async(dst, src, bytes)` — 4, 8 or 16 bytes, both addresses aligned to that size;
- `__pipeline_commit()` — closes a **group** of this thread's copies;
- `__pipeline_wait_prior(N)` — waits until at most N of this thread's groups are still on their way.

A thread waits only for *its own* copies. Other threads' copies become safe to read after a
`__syncthreads()` that comes after *their* waits — the same rule as for ordinary stores. A copy smaller
than its size fills the rest with zeros (`__pipeline_memcpy_async(dst, src, 16, 16 - n)`: n bytes read,
16 − n zeros), which handles the edge of a matrix without a branch."""))
C.append(code("""%%cuda
#include <cuda_pipeline.h>

// Copy through shared memory with cp.async: the simplest use, one float per thread.
extern "C" __global__ void staged_copy(float* out, const float* in, int n)
{
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        __pipeline_memcpy_async(&s[threadIdx.x], &in[i], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);            // this thread's copy has landed
    if (i < n)
        out[i] = s[threadIdx.x];         // its own element: no barrier needed
}"""))
C.append(code("""a = cl.transposes.random_matrix(1, 1000, np.float32)[0]
out = np.full_like(a, np.nan)
run = staged_copy.simulate((4,), (256,), (out, a, np.int32(a.size)))
print("every element copied:", np.array_equal(out, a))
cl.draw.table({"staged_copy": run})"""))
C.append(md("""The table shows what Nsight Compute shows for this kernel on an H100: the `cp.async` is counted as a
**global load** (requests and sectors, `l1tex__t_{requests,sectors}_pipe_lsu_mem_global_op_ld`) and its
writes into shared memory add **no shared-store wavefronts** — the copy bypasses the register file and the
store path (the H100 counts them separately, `..._op_ldgsts`). `smsp__inst_executed_op_global_ld` does not
count it either. The simulator follows these rules, measured on 110 access patterns
(`benchmarks/results/h100_2026-11-26_hopper/README.md`).

**Reading before the wait is a race.** The data lands at some time after the copy; only the wait says
when. Move the read above the wait and the simulator names both lines:"""))
C.append(code("""%%cuda
#include <cuda_pipeline.h>
extern "C" __global__ void too_early(float* out, const float* in, int n)
{
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __pipeline_memcpy_async(&s[threadIdx.x], &in[i], sizeof(float));
    __pipeline_commit();
    float v = s[threadIdx.x];            // the copy may not have landed yet
    __pipeline_wait_prior(0);
    out[i] = v;
}"""))
C.append(code("""run = too_early.simulate((4,), (256,), (np.zeros(1024, np.float32), cl.transposes.random_matrix(1, 1024, np.float32)[0], np.int32(1024)))
for race in run.races:
    print(race)"""))
C.append(md("""## A transpose with `cp.async`: staging and double buffering

`kernels/async_tile.cu` is notebook 05's padded tile filled by `cp.async`. Each block moves `TILES`
tiles, one below the other, through a ring of `STAGES` shared tiles: while it turns tile *t* around, the
copies of tiles *t + 1 … t + STAGES − 1* are already on their way.

- `STAGES = 1` is **staging**: copy, wait, transpose — what `tile.cu` does, minus the register.
- `STAGES = 2` is **double buffering**; 3, triple.

One- and two-byte elements travel as 4-byte words (a copy is at least 4 bytes), so their rows must be whole
words; rows of 1030 bytes are copied element by element, without `cp.async`."""))
C.append(code("""runs = {f"async, STAGES={s}": sim.run("async", STAGES=s) for s in (1, 2, 3)}
runs["padded_32x8"] = sim.run("padded_32x8")
cl.draw.table(runs)"""))
C.append(code("""cl.draw.listing(runs["async, STAGES=2"].sim, lines=(40, 70))"""))
C.append(md("""The memory traffic is the same for every depth: the same bytes, the same requests, no bank conflicts.
What changes is *when* the bytes move, and the simulator does not model time. On an H100 (fractions of a
same-run `cudaMemcpy`, `python benchmarks/hopper_bench.py time OUT.json --quick`, 2026-11-26):

| | STAGES 1 | 2 | 3 | the same tile with ordinary loads |
| --- | --- | --- | --- | --- |
| float32 8192 × 8192 | 0.801 | 0.907 | 0.909 | 0.933 (`padded_32x8`) |
| float32 1000 × 1030 | 0.925 | 1.143 | 1.169 | 1.545 (`padded_32x8`) |
| float64 8192 × 8192 | 0.969 | 0.969 | 0.972 | 0.982 (`padded_32x16`) |

**Staging alone is slower** than ordinary loads: a block that copies, waits and transposes has nothing to
do while its copies travel. Double buffering recovers most of it — but a transpose launches thousands of
small blocks, and an SM already overlaps one block's loads with another's stores. That is why the plain
padded tile stays ahead: pipelining inside a block pays when a block must work through many tiles in
sequence (a matrix product), not when the GPU can simply run more blocks. The model below shows one
block's timeline; move `STAGES` and the copy time:"""))
C.append(code("""hopper.pipeline_explorer()"""))
C.append(md("""## The Tensor Memory Accelerator

Hopper (sm_90) goes further: one thread asks the **Tensor Memory Accelerator** for a whole rectangular
*box* of a matrix — `cp.async.bulk.tensor` — and the copy engine moves it into shared memory by itself, no
thread loading anything. It needs a description of the matrix, a **tensor map**: address, sizes, the byte
pitch of its rows, the box size and a swizzle mode. The host builds it (the driver's
`cuTensorMapEncodeTiled`) and passes it by value as `const __grid_constant__ CUtensorMap`. The copy reports
its bytes to an **mbarrier** in shared memory: one thread announces how many bytes to expect, every thread
arrives and waits, and the wait ends once all threads arrived *and* all bytes landed. Parts of the box
outside the matrix arrive as zeros.

In Python, `cl.TensorMap` builds one — the same object for the simulator and for a GPU. Sizes are in
numpy's order (rows, then columns); the kernel's coordinates are CUDA's, innermost first (column, row):"""))
C.append(code("""a = cl.transposes.random_matrix(96, 160, np.float32)
tm = cl.TensorMap(a, box=(32, 32), swizzle=128)
tm"""))
C.append(md("""The TMA reads rows that start on 16-byte boundaries, and the driver refuses anything else. A
1000 × 1030 float matrix has rows of 4120 bytes:"""))
C.append(code("""try:
    cl.TensorMap(cl.transposes.random_matrix(1000, 1030, np.float32), box=(32, 32))
except cl.ArgumentError as err:
    print(err)"""))
C.append(md("""`kernels/tma.cu`'s `tma_copy` loads a box and stores it back with a TMA store: the copy engine's
ceiling. Its listing, and what the H100 counts:"""))
C.append(code("""tcopy = sim.run("tma_copy")
cl.draw.listing(tcopy.sim, lines=(30, 60))"""))
C.append(code("""cl.draw.table({"tma_copy": tcopy})
print(tcopy.sim.warnings)"""))
C.append(md("""Every one of the course's memory counters is **zero**: the TMA does not go through the load/store unit
those counters watch. Nsight Compute counts its traffic elsewhere — `l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld`
for loads (the whole box, also the parts outside the matrix) and `l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st`
for stores (only the bytes inside) — and the simulator's run says so instead of showing a zero. On an H100
`tma_copy` copies at **0.98 – 1.02** of `cudaMemcpy`."""))
C.append(md("""## Why a TMA tile cannot be padded — and what the swizzle does instead

Notebook 05 padded a tile by one element per row so that a column spreads over all 32 banks. The TMA writes
a box's rows **one right after another**: a 32-float box row is 128 bytes, the next row starts 128 bytes
later, always. There is no room for a padding element. Without help, reading down a column hits one bank
32 times — and even the 16-byte reads of notebook 07 collide, because every row starts in the same bank.

Instead the TMA can **swizzle**: with mode 32, 64 or 128 (bytes), the 16-byte chunk *c* of a box row lands
at chunk *c* XOR (bits of the row number). On the shared address *b*: `b ^ ((b >> 3) & MASK)` with MASK
0x10, 0x30 or 0x70 — bits 4–6 take bits 7–9. For 128-byte rows and mode 128, chunk *c* of row *r* goes to
chunk *c ^ (r % 8)*: every row is a permutation, and so is every column:"""))
C.append(code("""hopper.layout_picture(128)"""))
C.append(md("""That is notebook 05's XOR swizzle, done by the hardware — with one difference: it moves whole **16-byte
chunks**, not single words. So it removes the conflicts of **16-byte** accesses: eight rows of one chunk
column — what a quarter-warp reads in `ldmatrix` or in `tma_tile` below — land in eight different chunk
slots. A column of 4-byte words is still 4-way: the 32 words sit in only 8 chunk slots. Notebook 05's
per-word XOR handles that column, but breaks up every 16-byte chunk, so nothing can read it 16 bytes at a
time. The cost of each access under each layout, by the simulator's rules:"""))
C.append(code("""hopper.cost_table()"""))
C.append(md("""Pick a mode and an access; the picture shows the banks one warp touches (each row of squares is a
wavefront, red ones wait):"""))
C.append(code("""hopper.swizzle_explorer()"""))
C.append(md("""## A TMA transpose

`tma_tile` loads a box of 64 rows × 128 bytes with the 128-byte swizzle, then every lane reads 16-byte
chunks of RG = 16 / sizeof(T) consecutive rows of one chunk column (4 rows of floats), turns the RG × RG
block around in registers (notebook 09's `__byte_perm` for small elements) and stores 16 bytes into each
of 16 / sizeof(T) rows of `out`. A quarter-warp's eight reads land in eight different chunk slots.

**Predict first.** With `SW = 0` (no swizzle; the same 128-byte box rows), how many wavefronts per
request do those 16-byte shared loads cost? Replace `None` and run:"""))
C.append(code("""plain = sim.run("tma", SW=0)
print(cl.predict(plain, wavefronts_ld=None))"""))
C.append(code("""swizzled = sim.run("tma")
cl.draw.table({"tma_tile, no swizzle": plain, "tma_tile, swizzle 128": swizzled})"""))
C.append(code("""cl.draw.banks(swizzled.sim, op="ld")"""))
C.append(md("""Without the swizzle each quarter-warp's eight rows start in the same bank group: 8 wavefronts where
the eight chunks need 1 — the same 8-way you would get from notebook 07's `float4` reads of an unpadded
tile. With it, 4 wavefronts for a warp's 512 bytes: none wasted."""))
C.append(md("""## `ldmatrix`, `stmatrix` and `movmatrix`: 16-bit tiles the tensor-core way

Matrix-multiply code moves 16-bit tiles in **8 × 8 matrices** spread over a warp: lane *l* holds row *l / 4*,
columns *2(l % 4)* and *2(l % 4) + 1* in one 32-bit register. `ldmatrix.sync.aligned.m8n8.x4.shared.b16`
loads four such matrices from shared memory — lanes 8m … 8m + 7 give the addresses of matrix m's eight
16-byte rows — and with `.trans` each matrix arrives **transposed**. `stmatrix` stores fragments back as
rows; `movmatrix.trans` transposes a fragment already in registers. Who gets what, for matrix values 0 … 63:"""))
C.append(code("""from course_lib.sim import matrix_moves
m = np.arange(64, dtype=np.uint16).reshape(1, 1, 8, 8)
for trans in (False, True):
    regs = matrix_moves.fragments(m, trans)[0, :, 0]
    print(f"{'.trans' if trans else 'plain '}: " + "  ".join(f"lane {l}: ({r & 0xFFFF}, {r >> 16})" for l, r in enumerate(regs[:6])), "...")"""))
C.append(md("""`kernels/ldsm.cu` transposes 16-bit matrices with them: 16-byte coalesced loads into a tile swizzled
like the TMA's 128-byte mode, then each warp moves 8 × 8 blocks with `ldmatrix.trans` and writes them with
`stmatrix` to their transposed place in a second swizzled tile, then 16-byte coalesced stores. Each
matrix is a quarter-warp of 16-byte accesses for Nsight Compute, so the swizzle keeps both sides
conflict-free:"""))
C.append(code("""ldsm = sim.run("ldsm", dtype=np.float16, shape=(96, 160))
cl.draw.table({"ldsm (float16)": ldsm})"""))
C.append(md("""## No shared memory at all: warp shuffles

A warp can turn a 32 × 32 tile around in its registers. Each lane loads one column (`v[i] = in[r0 + i][c0 +
lane]`: 32 coalesced loads), then five butterfly rounds of `__shfl_xor_sync` — in round *m* every lane
swaps half of its registers with lane *lane ^ m* — leave lane *l* with row *l*, and 32 coalesced stores
write it out. The register indices are constants (no local memory); `kernels/shuffle.cu`:"""))
C.append(code("""shfl = sim.run("shuffle")
cl.draw.table({"shuffle": shfl, "padded_32x8": runs["padded_32x8"]})"""))
C.append(md("""No shared memory, coalesced both ways — and 80 shuffles for 32 elements per lane. On an H100 that
instruction count is what it costs: 0.93 of a copy for floats (8192 × 8192, against 0.96 for the best
tiled kernel), 0.42 for bytes, where the shuffles move a quarter as many bytes each."""))
C.append(md("""## Exercise: fill the tile with `cp.async`

Write `transpose_async`: notebook 06's padded 32 × 32 tile with 32 × 8 threads, but every element reaches
shared memory through `__pipeline_memcpy_async`. The checker runs it on square, non-square, partial,
1 × N and N × 1 matrices and requires: every element right; every global load a `cp.async`;
coalesced loads and stores; no bank conflicts; no races (a read before the wait is one, and so is reading
another thread's copy without a barrier after the wait)."""))
C.append(code("""cl.exercises.get("async_tile")"""))
C.append(code("""%%cuda
#include <cuda_pipeline.h>
#define TILE 32
#define BLOCK_ROWS 8
extern "C" __global__ void transpose_async(float* out, const float* in, int rows, int cols)
{
    // your kernel here
}"""))
C.append(code("""cl.exercises.check("async_tile", transpose_async)"""))
C.append(md("""## On an H100

Every kernel of this notebook beside the course's best, four element sizes, as a fraction of a same-run
`cudaMemcpy` (`python benchmarks/transpose.py --out DIR`; the TMA kernels only where rows are multiples of
16 bytes). *(Filled in from the final run of issue 19.)*"""))
C.append(md("""## Recap

* `cp.async` copies global to shared memory without a register and without waiting; a thread commits
  groups and waits for its own; other threads need a barrier after that wait. Nsight Compute counts it as a
  global load with no shared-store wavefronts. Reading its destination before the wait is a race.
* Staging a transpose through `cp.async` is slower than ordinary loads; double buffering wins most of it
  back, but a transpose already has plenty of blocks to overlap — pipelining pays when one block has to
  walk many tiles.
* The TMA moves whole boxes described by a tensor map, completing on an mbarrier; it writes box rows back
  to back, so it cannot pad: its 32/64/128-byte swizzle permutes 16-byte chunks instead, which frees
  16-byte accesses (not 4-byte columns) from bank conflicts.
* `ldmatrix`/`stmatrix` move 8 × 8 16-bit matrices between shared memory and a warp's registers, `.trans`
  transposing them; `movmatrix` transposes in registers. Each matrix is a quarter-warp of 16-byte accesses.
* Warp shuffles transpose without shared memory, at the price of many instructions."""))
nb = nbf.v4.new_notebook(cells=C, metadata={"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}})
nbf.write(nb, __file__.replace("build_12.py", "12_async_copies_and_tma.ipynb"))
print(len(C), "cells")
