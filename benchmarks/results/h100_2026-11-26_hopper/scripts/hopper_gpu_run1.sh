#!/usr/bin/env bash
# issue 19, GPU call 1: semantics, checks, ncu, quick timings, compute-sanitizer
cd "$(dirname "$0")/../../../.."   # the repository root
R=$OUT/r; mkdir -p $R
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site ${WHEELS:-.whl}/*.whl
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
step() { local name=$1 limit=$2; shift 2; local t0=$SECONDS; echo "=== $name (limit $limit s)"; timeout $limit "$@" > $R/$name.txt 2>&1; echo "=== $name exit $? after $((SECONDS-t0)) s"; tail -n ${TAIL:-15} $R/$name.txt; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1
python3 -c "from course_lib.compile import headers; print(headers.folders(13))"
step semantics 50 python3 benchmarks/hopper_probe.py semantics $R/semantics.json
step check 80 python3 benchmarks/hopper_bench.py check
TAIL=40 step ncu 150 python3 benchmarks/hopper_probe.py ncu $R
TAIL=40 step time 110 python3 benchmarks/hopper_bench.py time $R/time.json --quick
for tool in memcheck racecheck; do step san_$tool 30 compute-sanitizer --tool $tool python3 benchmarks/hopper_bench.py sanitize; done
cd $OUT && tar czf results.tar.gz r && cp r/ncu.txt r/time.txt . 2>/dev/null; ls -la $OUT
