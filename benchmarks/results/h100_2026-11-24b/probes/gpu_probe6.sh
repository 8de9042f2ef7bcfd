# issue 13, sixth probe: is Triton's small-shape lead its shape-specialized code? vec_out with the shape as constants
set -u
patch -s -o /tmp/vec_out_old.cu kernels/vec_out.cu benchmarks/variants/vec_out_old.patch   # the first vec_out
for p in benchmarks/variants/vec_out_[1iv]*.patch; do n=$(basename "$p" .patch); patch -s -o "/tmp/$n.cu" /tmp/vec_out_old.cu "$p"; done
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 COURSE_LIB_BACKEND=gpu
R=$OUT
V="--variant fix=vec_out@/tmp/vec_out_1000x1030.cu --variant fix32=vec_out@/tmp/vec_out_1000x1030_i32.cu --variant i32=vec_out@/tmp/vec_out_i32.cu"
timeout 250 python3 benchmarks/transpose.py --out $R/small --size 1000x1030 --dtype all --repeat 60 $V \
   --kernel "padded_32x8,vec_out,i32,fix,fix32,fix32[BLOCK_ROWS=2]" > $R/small.txt 2>&1; echo small $?
cd $R && tar czf probe6.tgz */*.json && rm -rf small
