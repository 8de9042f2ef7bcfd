set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 COURSE_LIB_BACKEND=gpu
R=$OUT
timeout 150 python3 benchmarks/triton_source.py --out $R/triton --size 1000x1030,2048x8192,8192x2048 --dtype f32,f64,f16,u8 > $R/triton.txt 2>&1; echo triton $?
timeout 200 python3 benchmarks/timing_probe.py --out $R/small --size 1000x1030 --dtype f32,f64,f16,u8 \
  --kernel "padded_32x8,padded_32x8[BLOCK_ROWS=4],swizzle,packed,packed[BLOCK_ROWS=4],warp,fast,vec64,sector" > $R/small.txt 2>&1; echo small $?
timeout 200 python3 benchmarks/timing_probe.py --out $R/thin --size 2048x8192,8192x2048 --dtype f32,f64 --repeat 20 \
  --kernel "fast,fast[TR=64;TC=128],fast[TR=128;TC=64],sector,padded_32x8,warp" > $R/thin.txt 2>&1; echo thin $?
