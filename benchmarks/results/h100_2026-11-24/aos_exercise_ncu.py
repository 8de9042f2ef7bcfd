#!/usr/bin/env python
"""Notebook 08's exercise premise on the GPU: the stub (k = i + j*I, I = 40) and the solution
(Giles's k = n + n / 160), launched once each on 1024 structs, for

    ncu --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum python benchmarks/aos_exercise_ncu.py

The simulator (machine code) expects: stub 2560 shared-load wavefronts / 1280 conflicts, solution
1280 / 0. Prints whether each output is right. Asserts nothing about speed."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from course_lib import magic, solutions  # noqa: E402


def main():
    import cupy as cp
    a = cp.random.rand(1024, 40, dtype=cp.float32) + 0.5
    for name, src in (("stub", solutions.stub("aos_struct")), ("solution", solutions.body("aos_struct"))):
        k = magic.compile_cell("", src)[1]["aos_to_soa"]
        out = cp.full((40, 1024), np.nan, cp.float32)
        k((1, 8), (32, 4), (out, a, np.int32(1024), np.int32(40)))
        print(name, "correct" if bool((out == a.T).all()) else "WRONG")


if __name__ == "__main__":
    main()
