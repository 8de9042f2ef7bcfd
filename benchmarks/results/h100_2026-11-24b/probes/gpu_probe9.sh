# issue 13, ninth probe: the paired vec_out with 32-bit offsets (an upper bound: valid below 2^31 elements)
set -u
# benchmarks/variants/vec_out_i32new.cu was the kernels/vec_out.cu of probe 8 with its two (size_t) casts
# removed (sed); not kept: it changed nothing for bytes (vec_out_paired_i32.txt)
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 COURSE_LIB_BACKEND=gpu
R=$OUT
V="--variant i32=vec_out@benchmarks/variants/vec_out_i32new.cu"
timeout 250 python3 benchmarks/transpose.py --out $R/small --size 1000x1030,1000x1000,2000x3000 --dtype f16,u8 --repeat 60 $V \
   --kernel "vec_out,i32,i32[BLOCK_ROWS=8]" > $R/small.txt 2>&1; echo small $?
cd $R && tar czf probe9.tgz */*.json && rm -rf small
