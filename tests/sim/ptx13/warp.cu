
extern "C" __global__ void shfl_up(unsigned* out, const unsigned* val, const unsigned* lane_b,
                                      const unsigned* cword, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned r, p;
    asm volatile("{ .reg .pred q; shfl.sync.up.b32 %0|q, %2, %3, %4, 0xffffffff; selp.u32 %1, 1, 0, q; }"
                 : "=r"(r), "=r"(p) : "r"(val[i]), "r"(lane_b[i]), "r"(cword[i / 32]));
    out[2 * i] = r;
    out[2 * i + 1] = p;
}


extern "C" __global__ void shfl_down(unsigned* out, const unsigned* val, const unsigned* lane_b,
                                      const unsigned* cword, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned r, p;
    asm volatile("{ .reg .pred q; shfl.sync.down.b32 %0|q, %2, %3, %4, 0xffffffff; selp.u32 %1, 1, 0, q; }"
                 : "=r"(r), "=r"(p) : "r"(val[i]), "r"(lane_b[i]), "r"(cword[i / 32]));
    out[2 * i] = r;
    out[2 * i + 1] = p;
}


extern "C" __global__ void shfl_bfly(unsigned* out, const unsigned* val, const unsigned* lane_b,
                                      const unsigned* cword, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned r, p;
    asm volatile("{ .reg .pred q; shfl.sync.bfly.b32 %0|q, %2, %3, %4, 0xffffffff; selp.u32 %1, 1, 0, q; }"
                 : "=r"(r), "=r"(p) : "r"(val[i]), "r"(lane_b[i]), "r"(cword[i / 32]));
    out[2 * i] = r;
    out[2 * i + 1] = p;
}


extern "C" __global__ void shfl_idx(unsigned* out, const unsigned* val, const unsigned* lane_b,
                                      const unsigned* cword, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned r, p;
    asm volatile("{ .reg .pred q; shfl.sync.idx.b32 %0|q, %2, %3, %4, 0xffffffff; selp.u32 %1, 1, 0, q; }"
                 : "=r"(r), "=r"(p) : "r"(val[i]), "r"(lane_b[i]), "r"(cword[i / 32]));
    out[2 * i] = r;
    out[2 * i + 1] = p;
}


extern "C" __global__ void vote_all(unsigned* out, const unsigned* a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = a[i];
    if (x & 2) {                                   // a data-dependent subset of the warp
        unsigned m = __activemask(), ballot, all, any, uni;
        asm volatile("{ .reg .pred p, q; setp.ne.u32 p, %4, 0; vote.sync.ballot.b32 %0, p, %5;"
                     " vote.sync.all.pred q, p, %5; selp.u32 %1, 1, 0, q;"
                     " vote.sync.any.pred q, p, %5; selp.u32 %2, 1, 0, q;"
                     " vote.sync.uni.pred q, p, %5; selp.u32 %3, 1, 0, q; }"
                     : "=r"(ballot), "=r"(all), "=r"(any), "=r"(uni) : "r"(x & 1), "r"(m));
        out[5 * i] = m; out[5 * i + 1] = ballot; out[5 * i + 2] = all;
        out[5 * i + 3] = any; out[5 * i + 4] = uni;
    }
}


extern "C" __global__ void atom_u32(unsigned* acc, unsigned* old, const unsigned* idx, const unsigned* val, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned k = idx[i] * 8, v = val[i];
    old[8 * i + 0] = atomicAdd(&acc[k + 0], v);
    old[8 * i + 1] = atomicMin((int*)&acc[k + 1], (int)v);
    old[8 * i + 2] = atomicMax(&acc[k + 2], v);
    old[8 * i + 3] = atomicAnd(&acc[k + 3], v | 0x10000u);
    old[8 * i + 4] = atomicOr(&acc[k + 4], v & 0xF0F0F0F0u);
    old[8 * i + 5] = atomicXor(&acc[k + 5], v);
    old[8 * i + 6] = atomicInc(&acc[k + 6], 100u);
    old[8 * i + 7] = atomicDec(&acc[k + 7], 100u);
}

extern "C" __global__ void atom_wide(unsigned long long* acc, unsigned long long* old, double* dacc, float* facc,
                                     const unsigned* idx, const unsigned long long* val, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned k = idx[i];
    unsigned long long v = val[i];
    old[3 * i + 0] = atomicAdd(&acc[3 * k + 0], v);
    old[3 * i + 1] = (unsigned long long)atomicMin((long long*)&acc[3 * k + 1], (long long)v);
    old[3 * i + 2] = atomicMax(&acc[3 * k + 2], v);
    atomicAdd(&dacc[k], (double)(v & 1023) * 0.25);          // exact sums: order-free results
    atomicAdd(&facc[k], (float)(v & 255) * 0.5f);
}

extern "C" __global__ void atom_exch_cas(unsigned* acc, unsigned* old, const unsigned* val, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    old[2 * i] = atomicExch(&acc[2 * i], val[i]);                  // one thread per address
    old[2 * i + 1] = atomicCAS(&acc[2 * i + 1], (i & 1) ? 7u : 5u, val[i]);
}

extern "C" __global__ void red_and_shared(unsigned* acc, unsigned* blocksum, const unsigned* idx,
                                          const unsigned* val, int n)
{
    __shared__ unsigned s[8], m[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < 8) s[threadIdx.x] = m[threadIdx.x] = 0;
    __syncthreads();
    if (i < n) {
        asm volatile("red.global.add.u32 [%0], %1;" :: "l"(acc + idx[i]), "r"(val[i]) : "memory");
        atomicAdd(&s[idx[i]], val[i]);                     // red/atom.shared.add
        atomicMax(&m[idx[i] ^ 7], val[i] >> 8);
    }
    __syncthreads();
    if (threadIdx.x < 8) {
        blocksum[16 * blockIdx.x + threadIdx.x] = s[threadIdx.x];
        blocksum[16 * blockIdx.x + 8 + threadIdx.x] = m[threadIdx.x];
    }
}


extern "C" __global__ void vec_copy(float4* o4, const float4* i4, int2* o2, const int2* i2, double2* od,
                                    const double2* id, uchar4* oc, const uchar4* ic, int n)
{
    __shared__ float4 s4[128];
    __shared__ double2 sd[128];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    if (i < n) { s4[t] = i4[i]; sd[t] = id[i]; o2[i] = i2[i]; oc[i] = ic[i]; }
    __syncthreads();
    int j = blockDim.x - 1 - t, k = blockIdx.x * blockDim.x + j;   // read back another thread's slot
    if (k < n) { o4[k] = s4[j]; od[k] = sd[j]; }
}

extern "C" __global__ void widen_loads(int* out, const signed char* c, const unsigned char* uc,
                                       const short* s, const unsigned short* us, const float* f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[5 * i] = c[i];                    // ld.s8: sign-extends
    out[5 * i + 1] = uc[i];               // ld.u8: zero-extends
    out[5 * i + 2] = s[i];
    out[5 * i + 3] = us[i];
    out[5 * i + 4] = __float_as_int(__ldg(&f[i]));    // ld.global.nc
}


extern "C" __global__ void mov_pack(unsigned long long* o64, unsigned* words, unsigned* o32,
                                    unsigned short* halves, const unsigned* a, const unsigned* b,
                                    const unsigned short* h, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long d;
    unsigned x, y, p;
    unsigned short u, v;
    asm volatile("mov.b64 %0, {%1, %2};" : "=l"(d) : "r"(a[i]), "r"(b[i]));
    asm volatile("mov.b64 {%0, %1}, %2;" : "=r"(x), "=r"(y) : "l"(d ^ 0x0123456789ABCDEFull));
    asm volatile("mov.b32 %0, {%1, %2};" : "=r"(p) : "h"(h[2 * i]), "h"(h[2 * i + 1]));
    asm volatile("mov.b32 {%0, %1}, %2;" : "=h"(u), "=h"(v) : "r"(a[i]));
    o64[i] = d; words[2 * i] = x; words[2 * i + 1] = y; o32[i] = p;
    halves[2 * i] = u; halves[2 * i + 1] = v;
}

extern "C" __global__ void lane_regs(unsigned* out, int n)
{
    int t = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
    int i = blockIdx.x * blockDim.x * blockDim.y * blockDim.z + t;
    unsigned r[6];
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(r[0]));
    asm volatile("mov.u32 %0, %%lanemask_eq;" : "=r"(r[1]));
    asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(r[2]));
    asm volatile("mov.u32 %0, %%lanemask_le;" : "=r"(r[3]));
    asm volatile("mov.u32 %0, %%lanemask_gt;" : "=r"(r[4]));
    asm volatile("mov.u32 %0, %%lanemask_ge;" : "=r"(r[5]));
    __syncwarp();                                         // bar.warp.sync
    for (int k = 0; k < 6; ++k) out[6 * i + k] = r[k];
}

extern "C" __global__ void space_tests(unsigned* out, float* g, int n)
{
    __shared__ float s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float* p = (i & 1) ? &s[threadIdx.x] : &g[i];        // a generic pointer to either space
    out[2 * i] = __isShared(p);                           // isspacep.shared
    out[2 * i + 1] = __isGlobal(p);                       // isspacep.global
}

extern "C" __global__ void atom_f32_subnormal(float* acc, const float* val, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&acc[i & 3], val[i]);
}
