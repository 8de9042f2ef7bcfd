# issue 13, fourth probe: fast's tile for small 1- and 2-byte shapes; f64 thin-rectangle variants
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 COURSE_LIB_BACKEND=gpu
R=$OUT
K="padded_32x8,fast[TR=32;TC=32;THREADS=64],fast[TR=32;TC=32;THREADS=128],fast[TR=32;TC=64;THREADS=128],fast[TR=64;TC=32;THREADS=128],fast[TR=64;TC=64;THREADS=128],fast[TR=64;TC=64;THREADS=256],fast[TR=32;TC=128;THREADS=128],fast[TR=32;TC=128;THREADS=256],fast[TR=64;TC=128;THREADS=256],fast[TR=16;TC=64;THREADS=64],fast[TR=16;TC=128;THREADS=128]"
timeout 250 python3 benchmarks/transpose.py --out $R/small --size 1000x1030 --dtype f16,u8 --repeat 40 --kernel "$K" > $R/small.txt 2>&1; echo small $?
K2="swizzle,padded_32x8,padded_32x8[BLOCK_ROWS=16],padded_32x8[BLOCK_ROWS=4],swizzle[BLOCK_ROWS=16],swizzle[BLOCK_ROWS=4],warp[WX=2;WY=2],sector[TR=32;TC=64],sector[TR=64;TC=32],sector[TR=32;TC=32;BY=8],fast[TR=32;TC=64],fast[TR=64;TC=32]"
timeout 250 python3 benchmarks/transpose.py --out $R/thin --size 8192x2048,2048x8192 --dtype f64 --repeat 40 --kernel "$K2" > $R/thin.txt 2>&1; echo thin $?
cd $R && tar czf probe4.tgz */*.json && rm -rf small thin
