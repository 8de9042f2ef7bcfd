#!/usr/bin/env bash
# issue 19, GPU call 3 (phase 2, after the simulator's dispatch runs the new instructions and
# notebook 12 is in notebooks/): everything final in one call. Wheels: the nvidia-cuda-cccl 13.0 wheel
# (headers) in ${WHEELS:-.whl}; Jupyter, nbval, plotly, ipywidgets, nvdisasm in ${NB_WHEELS:-.whl_nb}
# (docs/CONTRIBUTING.md, "On a GPU machine"). Results under $OUT/r, packed into $OUT/results.tar.gz.
cd "$(dirname "$0")/../../../.."   # the repository root
R=$OUT/r; mkdir -p $R
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site ${WHEELS:-.whl}/*.whl ${NB_WHEELS:-.whl_nb}/*.whl
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
step() { local name=$1 limit=$2; shift 2; local t0=$SECONDS; echo "=== $name (limit $limit s)"; timeout $limit "$@" > $R/$name.txt 2>&1; echo "=== $name exit $? after $((SECONDS-t0)) s"; tail -n ${TAIL:-12} $R/$name.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.memory --format=csv,noheader
step check 90 python3 benchmarks/hopper_bench.py check
for tool in memcheck racecheck synccheck; do step san_$tool 45 compute-sanitizer --tool $tool python3 benchmarks/hopper_bench.py sanitize; done
step negative 40 python3 benchmarks/hopper_probe.py negative $R/negative.json
TAIL=3 step ncu 150 python3 benchmarks/hopper_probe.py ncu $R
TAIL=70 step transpose 300 python3 benchmarks/transpose.py --out $R/transpose
TAIL=30 step tma_sweep 120 python3 benchmarks/hopper_bench.py time $R/time_tma.json --quick --tma
TAIL=20 step nbval 240 python3 -m pytest -p no:cacheprovider -o addopts= -q --nbval-lax --nbval-current-env notebooks/12_async_copies_and_tma.ipynb
rm -f $R/transpose/transpose.html
cd $OUT && tar czf results.tar.gz r && ls -la $OUT
