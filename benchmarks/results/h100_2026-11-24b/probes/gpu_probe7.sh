# issue 13, seventh probe: vec_out with loads as wide as the input rows allow (and with the shape fixed)
set -u
patch -s -o /tmp/vec_out_old.cu kernels/vec_out.cu benchmarks/variants/vec_out_old.patch   # the first vec_out
for p in benchmarks/variants/vec_out_[1iv]*.patch; do n=$(basename "$p" .patch); patch -s -o "/tmp/$n.cu" /tmp/vec_out_old.cu "$p"; done
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 COURSE_LIB_BACKEND=gpu
R=$OUT
V="--variant vload=vec_out@/tmp/vec_out_vload.cu --variant vloadfix=vec_out@/tmp/vec_out_vload_1000x1030.cu --variant fix32=vec_out@/tmp/vec_out_1000x1030_i32.cu"
timeout 250 python3 benchmarks/transpose.py --out $R/small --size 1000x1030 --dtype all --repeat 60 $V \
   --kernel "padded_32x8,vec_out,vload,vloadfix,fix32" > $R/small.txt 2>&1; echo small $?
timeout 250 python3 benchmarks/transpose.py --out $R/small2 --size 1000x1000,1024x1030,2000x3000 --dtype f16,u8 --repeat 40 $V \
   --kernel "padded_32x8,vec_out,vload" > $R/small2.txt 2>&1; echo small2 $?
cd $R && tar czf probe7.tgz */*.json && rm -rf small small2
