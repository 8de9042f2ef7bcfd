"""The course's exercises (data only): kernel, launch, shapes and the properties each lesson is about.

Every exercise has its solution in kernels/solutions/<key>.cu and, in tests/teach/test_exercises.py or
tests/lessons/test_lessons_*.py, at least three plausible wrong kernels its checker must reject. Shapes:
square, non-square, not a multiple of the tile, 1xN and Nx1, unless the exercise promises more
(float4 needs rows and cols that are multiples of 4; 16-bit pairs need even ones), and a tiny one
(``tiny``) that any loop ending at all ends on quickly. Where the exercise asks for 64-bit offsets
(column_read, batched), ``wide`` is a shape over 2^32 elements whose sampled blocks are simulated.
async_tile (notebook 12) requires every global load to be a cp.async that brings all of ``in``.
"""
from dataclasses import replace

import numpy as np

from .exercise import Exercise
from .properties import (
    async_copies,
    coalesced,
    hinted,
    no_bank_conflicts,
    no_races,
    no_uninitialized_reads,
    uses_shared,
    vector_width,
)

EXERCISES: dict[str, Exercise] = {}


def define(ex: Exercise) -> Exercise:
    """Add a course exercise: once a kernel is correct, its blocks must each move their own tile and
    every element must be moved once (``Exercise.own_tiles``)."""
    ex = replace(ex, own_tiles=True)
    EXERCISES[ex.key] = ex
    return ex


def _tiled(*extra):
    """The properties of every shared-memory tile exercise, then the lesson's own."""
    return (uses_shared(), coalesced("ld"), coalesced("st"), *extra, no_races(), no_uninitialized_reads())


define(Exercise("first_copy", "a copy kernel: thread (x, y) copies element (y, x)", "first_copy",
                (32, 8), (32, 8), (coalesced("ld"), coalesced("st")), lesson="00", copy=True,
                note="a copy, not a transpose: out has the shape of in"))
define(Exercise("column_read", "the naive transpose that reads columns and writes rows", "transpose_col",
                (32, 8), (8, 32), (coalesced("st"),), lesson="03", wide=(70000, 70000),
                note="one block covers 8 columns x 32 rows of in: threadIdx.x (32 values) must walk down a "
                     "column of in, i.e. along a row of out; no shared memory needed"))
define(Exercise("shared_tile", "transpose through a 32x32 shared-memory tile", "transpose_tile",
                (32, 32), (32, 32), _tiled(), lesson="04"))
define(Exercise("padded_tile", "a shared tile without bank conflicts", "transpose_padded",
                (32, 32), (32, 32), _tiled(no_bank_conflicts()), lesson="05"))
define(Exercise("tile_32x8", "32x8 threads move a 32x32 tile, four elements each", "transpose_32x8",
                (32, 8), (32, 32), _tiled(no_bank_conflicts()), lesson="06"))
define(Exercise("vectorized", "float4 loads and stores through a conflict-free tile", "transpose_vec4",
                (8, 32), (32, 32), (vector_width(16), *_tiled(no_bank_conflicts())[1:]),
                shapes=((64, 64), (96, 160), (100, 132), (4, 1028), (1028, 4)), lesson="07", tiny=(4, 8),
                note="rows and cols are multiples of 4, so every row starts on a 16-byte boundary"))

define(Exercise("aos_struct", "structs of 40 floats to 40 arrays, coalesced and conflict-free (Giles)", "aos_to_soa",
                (32, 4), (40, 128),
                (hinted(uses_shared(), "stage the warp's 32 structs in shared memory: store each element where it "
                                       "arrives (n = lane + 32m), read them back struct by struct"),
                 hinted(coalesced("ld"), "let lane l read element n = l + 32m of the warp's 32 * I consecutive floats, "
                                         "not its own struct"),
                 coalesced("st"),
                 hinted(no_bank_conflicts(), "write I = P * F (P a power of two, F odd) and put one word of padding "
                                             "after every 32F elements, k = n + n / (32F): the column reads and the "
                                             "row-wise writes are then both conflict-free. (With k = i + j*I ptxas "
                                             "reads each lane's struct 16 bytes at a time, LDS.128 in the SASS listing, "
                                             "and a 16-byte load is served 8 lanes at a time: lanes 4 apart, "
                                             "4 * 40 = 160 words = 5 * 32, still share a bank.)"),
                 hinted(no_races(), "lanes read fields other lanes wrote: __syncwarp() between the writes and the "
                                    "reads"),
                 no_uninitialized_reads()),
                shapes=((256, 40), (1000, 40), (100, 40), (1, 40), (37, 40)), lesson="08", tiny=(1, 40),
                note="in is rows structs x 40 floats (cols is always 40), out is 40 arrays of rows floats; each warp "
                     "of a 32x4 block moves 32 structs; the shared array is declared for you"))
define(Exercise("packed_b16", "16-bit elements moved as 32-bit words, turned with __byte_perm", "transpose_b16",
                (32, 8), (64, 32),
                (uses_shared(),
                 hinted(vector_width(4), "move two 16-bit elements at once as one 32-bit word: "
                                         "*reinterpret_cast<const unsigned*>(in + i) (i even)"),
                 coalesced("ld"), coalesced("st"),
                 hinted(no_bank_conflicts(), "the word tile is read by column: pad it by one word, unsigned w[32][32 + 1]"),
                 no_races(), no_uninitialized_reads()),
                shapes=((64, 64), (96, 160), (1000, 1030), (2, 4098), (4098, 2)), dtypes=(np.uint16,), lesson="09",
                tiny=(2, 4),
                note="rows and cols are even, so every row starts on a 4-byte word; __byte_perm(a, b, s) builds a word "
                     "from the 8 bytes of a (bytes 0-3) and b (bytes 4-7): hex digit k of s, counted from the right, "
                     "picks result byte k"))
define(Exercise("batched", "a batch of matrices in one launch: blockIdx.z picks the matrix", "transpose_batched",
                (32, 8), (32, 32), _tiled(no_bank_conflicts())[1:],
                shapes=((3, 64, 64), (2, 96, 160), (3, 33, 70), (2, 1, 300), (2, 300, 1)), lesson="10",
                tiny=(2, 2, 3), wide=(5, 32768, 32768),
                note="in holds `batch` matrices of rows x cols back to back, out as many of cols x rows; "
                     "grid.z = batch"))
define(Exercise("async_tile", "the padded 32x32 tile filled by cp.async (__pipeline_memcpy_async)", "transpose_async",
                (32, 8), (32, 32),
                (uses_shared(), async_copies(), coalesced("ld"), coalesced("st"),
                 hinted(no_bank_conflicts(), "the tile is read by column: pad it by one, float tile[32][32 + 1] "
                                             "(a cp.async writes 4 bytes wherever you point it)"),
                 hinted(no_races(), "a thread may read the tile only after its own copies landed "
                                    "(__pipeline_commit(); __pipeline_wait_prior(0);) and, for other threads' copies, "
                                    "after a __syncthreads() that follows every thread's wait"),
                 no_uninitialized_reads()),
                lesson="12",
                note="32x8 threads move a 32x32 tile, four elements each (notebook 06's loop); #include <cuda_pipeline.h> "
                     "is in the cell"))
