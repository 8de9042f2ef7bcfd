#!/usr/bin/env bash
# Everything this project checks on a GPU machine, as named steps, so one lease runs them in
# as few calls as possible:
#
#     OUT=DIR bash benchmarks/gpu_session.sh env tests bench guard ncu       # then, later:
#     OUT=DIR bash benchmarks/gpu_session.sh nbval transpose
#
# steps   env        the GPU, driver, CuPy, NVRTC, ncu
#         tests      tests/gpu/test_gpu.py and the GPU tests of test_guard/test_ui, checkers (pytest)
#         exercises  benchmarks/gpu_exercises_check.py: every exercise's solution, every variant, checked with
#                    the GPU run on (EXERCISES: comma-separated keys, e.g. inplace,aos_split: the in-place transpose
#                    and the three-array split, never yet run on a GPU)
#         bench      python -m course_lib bench --dtype all (8192 x 8192, every course kernel)
#         guard      benchmarks/gpu_guard_check.py (refused launches, the context stays usable)
#         diag       benchmarks/gpu_diagnoses_check.py (assert/trap/null messages as CUDA prints them)
#         ncu        benchmarks/ncu_compare.py (simulator vs Nsight Compute, every course kernel)
#         ldgsts     benchmarks/ldgsts_check.py: cp.async's shared-side bank conflicts and wavefronts, ncu against
#                    the simulator (the course's async kernels, ldgsts_probe.cu's conflicting ones), and what
#                    CuPy's a.T spends beside beat_library's stand-in -> ldgsts/ldgsts_check.{json,md}
#         leaderboard benchmarks/leaderboard_gpu_times.py --demo: beat_library's solution and stub timed as a class's
#                    leaderboard would be (7 rounds, same-run copies) and the report's sanity checks on them
#                    -> leaderboard/leaderboard_gpu_times.json
#         ncufull    benchmarks/ncu_dram.py --full: ncu's full set, copy vs copy_shared vs warp, f32,
#                    aligned vs misaligned (leads for the open question of notebook 10)
#         nbval      every notebook on the GPU backend, pytest --nbval-lax (errors only)
#         older      "older card" mode (COURSE_LIB_ARCH): every course kernel as sm_75/80/86/89 would run it
#                    (benchmarks/older_card_check.py), every notebook as sm_75, notebook 12 as sm_80/86/89
#         transpose  benchmarks/transpose.py (course kernels vs CuPy, cuBLAS, torch; all sizes)
#         sweep      benchmarks/transpose.py on the kernels/shapes named by SWEEP_KERNELS/SWEEP_SIZES
#         probe      benchmarks/misaligned_probe.py: tile/block/pitch knobs on 8191x8193 (issue 13)
#         probencu   ncu's speed-of-light, launch, occupancy, warp-state and memory sections on a few
#                    probe variants and cuBLAS geam (PROBE_NCU: '|'-separated label parts)
#         profiles   benchmarks/profile_lessons.py: the ncu / compute-sanitizer commands the notebooks show
#         latency    benchmarks/latency.py: pointer-chase latency idle and under copy/padded/padded_32x8/vec64,
#                    bytes in flight per SM (Little's law) -> latency.json
#         prose      benchmarks/rounds.py prose: every case a notebook compares, 5 rounds (median and
#                    spread) -> rounds_prose.json
#         blocks     benchmarks/rounds.py blocks: CUDA_Freshman's block shapes, notebook 06's BLOCK_ROWS,
#                    5 rounds -> rounds_blocks.json
#         inductor   benchmarks/inductor_kernel.py: torch.compile's Triton kernel for 1000 x 1030 u8/f16/f32,
#                    its grid, block and elements per thread -> inductor.json, inductor_*.py
#         small      benchmarks/rounds.py small: 1000 x 1030 bytes and halves over tiles, blocks and the
#                    register variant, SMALL_ROUNDS rounds (3), SMALL_KERNELS to choose -> rounds_small.json
#         mechanics  benchmarks/mechanics.py: the padded tile in row-major, column-major and diagonal block
#                    order (partition camping, notebook 05) and naive_col with and without the read-only
#                    path (notebook 03), 5 rounds -> mechanics.json (about a minute)
#         grading    benchmarks/grading_throughput.py on the machine's cores, no GPU: GRADING_SUBMISSIONS (300)
#                    graded in parallel on GRADING_WORKERS (16) local workers -> grading/ (issue 32; needs
#                    bubblewrap with user namespaces, nbgrader and distributed: the [instructor] extra)
#
#     OUT=DIR bash benchmarks/gpu_session.sh env latency prose blocks     # notebooks' measurements, < 9 min
#
# Each step but env writes DIR/<step>.txt (and its JSON) and has its own time limit, so a slow step
# cannot take the rest with it. Python packages the GPU machine lacks (Jupyter, nbval, plotly,
# ipywidgets) are installed from .whl/ when that folder is there (see docs/CONTRIBUTING.md).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_session}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 COURSE_LIB_BACKEND=gpu
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH="$PYTHONPATH:/tmp/site"
fi
PYTEST=(python3 -m pytest -p no:cacheprovider -o addopts= -q -rs)

step() {   # step NAME SECONDS COMMAND...
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    echo "=== $name (limit ${limit}s): $*"
    timeout "$limit" "$@" > "$OUT/$name.txt" 2>&1
    local rc=$?
    echo "=== $name: exit $rc after $((SECONDS - t0)) s"
    tail -n "${TAIL:-25}" "$OUT/$name.txt"
}

for s in "$@"; do
    case $s in
    env)   nvidia-smi --query-gpu=name,driver_version,clocks.max.memory,memory.total --format=csv
           python3 -c "import cupy, numpy; from course_lib import gpu; from course_lib.compile import nvrtc; \
print('cupy', cupy.__version__, 'numpy', numpy.__version__, 'driver CUDA', gpu.driver_major(), \
'GPU code from', nvrtc.compiler(gpu.driver_major(), prefer=(13, 12))); m = nvrtc.machine_code_missing(); \
print('simulator counts', 'the PTX: ' + m if m else 'the machine code (NVRTC 13 + nvdisasm)')"; ncu --version | tail -1 ;;
    tests) step tests 300 "${PYTEST[@]}" -m "not slow" tests/gpu/test_gpu.py \
               tests/kernel/test_guard.py::test_on_gpu_refused_launch_leaves_the_context_usable \
               tests/notebook/test_ui.py::test_gpu_backend_measures_and_checks \
               tests/teach/test_exercises.py tests/teach/test_predict_debug.py ;;
    exercises) step exercises 300 python3 benchmarks/gpu_exercises_check.py ${EXERCISES:+--keys "$EXERCISES"} ;;
    diag)  step diag 120 python3 benchmarks/gpu_diagnoses_check.py ;;
    bench) step bench 240 python3 -m course_lib bench --dtype all ;;
    guard) step guard 120 python3 benchmarks/gpu_guard_check.py ;;
    ncu)   step ncu 560 python3 benchmarks/ncu_compare.py --out "$OUT/ncu" ;;
    ldgsts) step ldgsts 400 python3 benchmarks/ldgsts_check.py --out "$OUT/ldgsts" --tmp "$OUT/ldgsts/src" ;;
    leaderboard) mkdir -p "$OUT/leaderboard" && step leaderboard 200 python3 benchmarks/leaderboard_gpu_times.py --demo \
                     --out "$OUT/leaderboard/leaderboard_gpu_times.json" ;;
    ncufull) step ncufull 300 python3 benchmarks/ncu_dram.py --full "$OUT/ncufull" --kernels copy,copy_shared,warp,padded_32x8 ;;
    nbval) step nbval 400 "${PYTEST[@]}" --nbval-lax --nbval-current-env notebooks ;;
    older) step older 300 bash -c 'for a in 75 80 86 89; do python3 benchmarks/older_card_check.py --arch $a --out "$0"; done' "$OUT"
           COURSE_LIB_ARCH=75 step nbval_sm75 400 "${PYTEST[@]}" --nbval-lax --nbval-current-env notebooks
           for a in 80 86 89; do COURSE_LIB_ARCH=$a step "nbval12_sm$a" 200 "${PYTEST[@]}" --nbval-lax --nbval-current-env \
               notebooks/12_async_copies_and_tma.ipynb; done ;;
    transpose) step transpose 560 python3 benchmarks/transpose.py --out "$OUT/transpose" ;;
    sweep) step sweep 400 python3 benchmarks/transpose.py --no-compile --dtype "${SWEEP_DTYPES:-f32,f64}" \
               --size "${SWEEP_SIZES:-8192,8191x8193}" --kernel "${SWEEP_KERNELS:-fast,warp}" --out "$OUT/sweep"
           rm -f "$OUT/sweep/transpose.html" ;;          # the device returns at most 8 files
    probe) step probe 420 python3 benchmarks/misaligned_probe.py --out "$OUT" ${PROBE_ONLY:+--only "$PROBE_ONLY"} ;;
    probencu) step probencu 300 ncu --clock-control none --csv --page details --section SpeedOfLight \
               --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
               --metrics lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,dram__bytes_read.sum,dram__bytes_write.sum \
               python3 benchmarks/misaligned_probe.py --worker "${PROBE_NCU:-f32 tr 32x32/32x8 MM|cublas}" ;;
    profiles) step profiles 420 python3 benchmarks/profile_lessons.py --out "$OUT" ;;
    latency) step latency 60 python3 benchmarks/latency.py --out "$OUT" ;;
    prose) step prose 350 python3 benchmarks/rounds.py prose --out "$OUT" --budget 320 ;;
    blocks) step blocks 90 python3 benchmarks/rounds.py blocks --out "$OUT" --budget 70 ;;
    inductor) TRITON_PRINT_AUTOTUNING=1 step inductor 180 python3 benchmarks/inductor_kernel.py --dtype u8,f16,f32 --out "$OUT" ;;
    small) step small 420 python3 benchmarks/rounds.py small --out "$OUT" --rounds "${SMALL_ROUNDS:-3}" --budget 380 \
               ${SMALL_KERNELS:+--kernel "$SMALL_KERNELS"} ;;
    mechanics) step mechanics 240 python3 benchmarks/mechanics.py --out "$OUT" ;;
    grading) step grading 560 python3 benchmarks/grading_throughput.py --no-plain --out "$OUT/grading" \
                 --submissions "${GRADING_SUBMISSIONS:-300}" --workers ${GRADING_WORKERS:-16} ;;
    *) echo "unknown step $s"; exit 2 ;;
    esac
done
