# issue 13, third probe: transpose.py with inputs read from DRAM (rotated copies) on small, thin and misaligned shapes
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 COURSE_LIB_BACKEND=gpu
R=$OUT
K="padded_32x8,swizzle,packed,warp,vec64,fast,sector,sector[TR=32;TC=32;BY=8],sector[TR=32;BY=8],sector[TR=64;BY=8],sector[TR=64;BY=16],padded_32x8[TILE=64]"
timeout 200 python3 benchmarks/transpose.py --out $R/small --size 1000x1030 --dtype all --repeat 30 --kernel "$K" > $R/small.txt 2>&1; echo small $?
timeout 200 python3 benchmarks/transpose.py --out $R/thin --size 2048x8192,8192x2048 --dtype f32,f64 --repeat 30 \
  --kernel "fast,fast[TR=64;TC=128],fast[TR=128;TC=64],sector,padded_32x8,warp,swizzle" > $R/thin.txt 2>&1; echo thin $?
timeout 150 python3 benchmarks/transpose.py --out $R/mis --size 8191x8193 --dtype all --repeat 15 \
  --kernel "sector,fast,warp,padded_32x8" > $R/mis.txt 2>&1; echo mis $?
cd $R && tar czf probe3.tgz */*.json && rm -rf small thin mis
