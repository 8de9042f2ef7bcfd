# issue 13, second probe: small shapes under ncu with transpose.py's L2 state; the timing methods again
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 COURSE_LIB_BACKEND=gpu
R=$OUT
timeout 240 python3 benchmarks/ncu_small_probe.py --out $R > $R/ncu_small.txt 2>&1; echo ncu $?
timeout 200 python3 benchmarks/timing_probe.py --out $R --size 1000x1030 --dtype f32,u8 \
  --kernel "padded_32x8,packed,warp,sector" > $R/small2.txt 2>&1; echo small $?
cd $R && tar czf probe2.tgz *.json && rm -f *.json
