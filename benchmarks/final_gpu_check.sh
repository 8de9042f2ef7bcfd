#!/usr/bin/env bash
# The GPU checks after a day's merges, in one call (about 6 minutes on an H100):
#     OUT=DIR bash benchmarks/final_gpu_check.sh
# GPU tests and the guard as gpu_session.sh runs them; every course kernel as an sm_75 card would run it;
# the notebooks whose cells changed most today (01, 11, 12) under nbval-lax on the GPU as itself, and 12 as sm_75.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/final_gpu}
mkdir -p "$OUT"
bash benchmarks/gpu_session.sh env tests guard
export PYTHONPATH="$PWD:/tmp/site" PYTHONUNBUFFERED=1 COURSE_LIB_BACKEND=gpu
timeout 120 python3 benchmarks/older_card_check.py --arch 75 --out "$OUT" > "$OUT/older75.txt" 2>&1; tail -3 "$OUT/older75.txt"
PYTEST=(python3 -m pytest -p no:cacheprovider -o addopts= -q --nbval-lax --nbval-current-env)
timeout 200 "${PYTEST[@]}" notebooks/01_cpu_transpose.ipynb notebooks/11_capstone.ipynb notebooks/12_async_copies_and_tma.ipynb \
    > "$OUT/nbval_01_11_12.txt" 2>&1; tail -2 "$OUT/nbval_01_11_12.txt"
COURSE_LIB_ARCH=75 timeout 120 "${PYTEST[@]}" notebooks/12_async_copies_and_tma.ipynb > "$OUT/nbval12_sm75.txt" 2>&1
tail -2 "$OUT/nbval12_sm75.txt"
