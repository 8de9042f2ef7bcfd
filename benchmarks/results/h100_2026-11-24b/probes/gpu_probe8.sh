# issue 13, eighth probe: vec_out with paired loads (2-byte / 4-byte for 1- / 2-byte elements) and paired
# shared stores, against the vec_out of probe 5 (saved as /tmp/vec_out_old.cu) and torch.compile
set -u
patch -s -o /tmp/vec_out_old.cu kernels/vec_out.cu benchmarks/variants/vec_out_old.patch   # the first vec_out
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 COURSE_LIB_BACKEND=gpu
R=$OUT
V="--variant old=vec_out@/tmp/vec_out_old.cu"
timeout 250 python3 benchmarks/transpose.py --out $R/small --size 1000x1030,1000x1000,2000x3000 --dtype all --repeat 60 $V \
   --kernel "padded_32x8,old,vec_out" > $R/small.txt 2>&1; echo small $?
timeout 120 python3 benchmarks/ncu_small_probe.py --out $R/u8 --detail uint8:vec_out > $R/detail_u8.txt 2>&1; echo ncu $?
timeout 120 python3 benchmarks/ncu_small_probe.py --out $R/f16 --detail float16:vec_out > $R/detail_f16.txt 2>&1; echo ncu $?
cd $R && tar czf probe8.tgz */*.json */*.csv && rm -rf small u8 f16
