#!/usr/bin/env bash
# issue 19, GPU call 2: semantics (TMA boxes one process each), checks, ncu (more cp.async/TMA patterns, tma_pipe), TMA timings, sanitizers
cd "$(dirname "$0")/../../../.."   # the repository root
R=$OUT/r; mkdir -p $R
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site ${WHEELS:-.whl}/*.whl
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
step() { local name=$1 limit=$2; shift 2; local t0=$SECONDS; echo "=== $name (limit $limit s)"; timeout $limit "$@" > $R/$name.txt 2>&1; echo "=== $name exit $? after $((SECONDS-t0)) s"; tail -n ${TAIL:-12} $R/$name.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.memory --format=csv,noheader
step check 80 python3 benchmarks/hopper_bench.py check
for tool in memcheck racecheck synccheck; do step san_$tool 40 compute-sanitizer --tool $tool python3 benchmarks/hopper_bench.py sanitize; done
TAIL=30 step semantics 120 python3 benchmarks/hopper_probe.py semantics $R/semantics.json
TAIL=3 step ncu 150 python3 benchmarks/hopper_probe.py ncu $R
TAIL=40 step time 200 python3 benchmarks/hopper_bench.py time $R/time_tma.json --quick --tma
cd $OUT && tar czf results.tar.gz r && ls -la $OUT
