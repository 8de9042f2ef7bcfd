#!/usr/bin/env bash
# issue 19, phase 2's GPU call: ncu for the launches run 3 missed (tma_out, tma_wide, band), nbval-lax of
# notebook 12 on the GPU backend, and notebook 12's measurements (benchmarks/rounds.py hopper: its kernels,
# the cp.async pipeline depths and a few TMA variants beside the course's leaders and the libraries, every
# dtype and size, as many rounds as fit). Wheels: the nvidia-cuda-cccl 13.0 wheel in ${WHEELS:-.whl}; Jupyter,
# nbval, plotly, ipywidgets, nvdisasm in ${NB_WHEELS:-.whl_nb}. Results packed into $OUT/results.tar.gz.
cd "$(dirname "$0")/../../../.."   # the repository root
R=$OUT/r; mkdir -p $R
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site ${WHEELS:-.whl}/*.whl ${NB_WHEELS:-.whl_nb}/*.whl
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
step() { local name=$1 limit=$2; shift 2; local t0=$SECONDS; echo "=== $name (limit $limit s)"; timeout $limit "$@" > $R/$name.txt 2>&1; echo "=== $name exit $? after $((SECONDS-t0)) s"; tail -n ${TAIL:-12} $R/$name.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.memory --format=csv,noheader
HOPPER_ONLY="tma_out ,tma_wide ,band " TAIL=4 step ncu 90 python3 benchmarks/hopper_probe.py ncu $R
COURSE_LIB_BACKEND=gpu TAIL=15 step nbval 110 python3 -m pytest -p no:cacheprovider -o addopts= -q --nbval-lax --nbval-current-env notebooks/12_async_copies_and_tma.ipynb
TAIL=45 step rounds 235 python3 benchmarks/rounds.py hopper --rounds 6 --out $R     # the JSON keeps every finished round
cd $OUT && tar czf results.tar.gz r && ls -la $OUT
