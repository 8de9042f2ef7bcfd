# issue 13, fifth probe: vec_out (vector stores where out's rows allow) on small shapes, and elsewhere
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 COURSE_LIB_BACKEND=gpu
R=$OUT
K="padded_32x8,vec_out,vec_out[BLOCK_ROWS=2],vec_out[BLOCK_ROWS=8],vec_out[TILE=64;BLOCK_ROWS=8],vec_out[TILE=64;BLOCK_ROWS=16]"
timeout 250 python3 benchmarks/transpose.py --out $R/small --size 1000x1030,1000x1000,1024x1030 --dtype all --repeat 40 --kernel "$K" > $R/small.txt 2>&1; echo small $?
timeout 250 python3 benchmarks/transpose.py --out $R/big --size 8192x2048,4096 --dtype all --repeat 20 --kernel "vec_out,vec_out[TILE=64;BLOCK_ROWS=8],fast,padded_32x8[BLOCK_ROWS=16]" > $R/big.txt 2>&1; echo big $?
cd $R && tar czf probe5.tgz */*.json && rm -rf small big
