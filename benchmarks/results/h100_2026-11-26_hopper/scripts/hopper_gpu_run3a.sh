#!/usr/bin/env bash
# issue 19, GPU call 3 (end of phase 1): the kernels that came after run 2 (band, tma_out, tma_wide)
# checked and timed, the course's catalog run of benchmarks/transpose.py with every new kernel, the
# TMA boxes at negative coordinates split into load and store, ncu of the new launches. No notebook
# (nbval-lax on notebook 12 waits for phase 2: scripts/hopper_gpu_run3.sh has that step).
cd "$(dirname "$0")/../../../.."   # the repository root
R=$OUT/r; mkdir -p $R
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site ${WHEELS:-.whl}/*.whl
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
step() { local name=$1 limit=$2; shift 2; local t0=$SECONDS; echo "=== $name (limit $limit s)"; timeout $limit "$@" > $R/$name.txt 2>&1; echo "=== $name exit $? after $((SECONDS-t0)) s"; tail -n ${TAIL:-12} $R/$name.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.memory --format=csv,noheader
step check 90 python3 benchmarks/hopper_bench.py check
for tool in memcheck racecheck synccheck; do TAIL=3 step san_$tool 45 compute-sanitizer --tool $tool python3 benchmarks/hopper_bench.py sanitize; done
step negative 40 python3 benchmarks/hopper_probe.py negative $R/negative.json
TAIL=3 step ncu 120 python3 benchmarks/hopper_probe.py ncu $R
TAIL=50 step transpose 240 python3 benchmarks/transpose.py --out $R/transpose
TAIL=26 step tma_sweep 90 python3 benchmarks/hopper_bench.py time $R/time_tma.json --quick --tma
TAIL=10 step band_sweep 60 python3 benchmarks/hopper_bench.py time $R/time_band.json --quick --band
rm -f $R/transpose/transpose.html
cd $OUT && tar czf results.tar.gz r && ls -la $OUT
