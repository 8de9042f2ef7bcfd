extern "C" __global__ void k_div_s32(int* __restrict__ out, const int* __restrict__ in0, const int* __restrict__ in1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = in0[i]; int b = in1[i];
    int r;
    asm volatile("div.s32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    out[i] = r;
}

extern "C" __global__ void k_rem_s64(long long* __restrict__ out, const long long* __restrict__ in0, const long long* __restrict__ in1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long a = in0[i]; long long b = in1[i];
    long long r;
    asm volatile("rem.s64 %0, %1, %2;" : "=l"(r) : "l"(a), "l"(b));
    out[i] = r;
}

extern "C" __global__ void k_mul_hi_u64(unsigned long long* __restrict__ out, const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long a = in0[i]; unsigned long long b = in1[i];
    unsigned long long r;
    asm volatile("mul.hi.u64 %0, %1, %2;" : "=l"(r) : "l"(a), "l"(b));
    out[i] = r;
}

extern "C" __global__ void k_mad_wide_s32(long long* __restrict__ out, const int* __restrict__ in0, const int* __restrict__ in1, const long long* __restrict__ in2, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = in0[i]; int b = in1[i]; long long c = in2[i];
    long long r;
    asm volatile("mad.wide.s32 %0, %1, %2, %3;" : "=l"(r) : "r"(a), "r"(b), "l"(c));
    out[i] = r;
}

extern "C" __global__ void k_mul24_hi_s32(int* __restrict__ out, const int* __restrict__ in0, const int* __restrict__ in1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = in0[i]; int b = in1[i];
    int r;
    asm volatile("mul24.hi.s32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    out[i] = r;
}

extern "C" __global__ void k_shr_s32(int* __restrict__ out, const int* __restrict__ in0, const unsigned* __restrict__ in1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = in0[i]; unsigned b = in1[i];
    int r;
    asm volatile("shr.s32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    out[i] = r;
}

extern "C" __global__ void k_shl_b64(unsigned long long* __restrict__ out, const unsigned long long* __restrict__ in0, const unsigned* __restrict__ in1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long a = in0[i]; unsigned b = in1[i];
    unsigned long long r;
    asm volatile("shl.b64 %0, %1, %2;" : "=l"(r) : "l"(a), "r"(b));
    out[i] = r;
}

extern "C" __global__ void k_bfe_s32(int* __restrict__ out, const int* __restrict__ in0, const unsigned* __restrict__ in1, const unsigned* __restrict__ in2, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = in0[i]; unsigned b = in1[i]; unsigned c = in2[i];
    int r;
    asm volatile("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    out[i] = r;
}

extern "C" __global__ void k_bfi_b64(unsigned long long* __restrict__ out, const unsigned long long* __restrict__ in0, const unsigned long long* __restrict__ in1, const unsigned* __restrict__ in2, const unsigned* __restrict__ in3, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long a = in0[i]; unsigned long long b = in1[i]; unsigned c = in2[i]; unsigned d = in3[i];
    unsigned long long r;
    asm volatile("bfi.b64 %0, %1, %2, %3, %4;" : "=l"(r) : "l"(a), "l"(b), "r"(c), "r"(d));
    out[i] = r;
}

extern "C" __global__ void k_prmt_b32_ecl(unsigned* __restrict__ out, const unsigned* __restrict__ in0, const unsigned* __restrict__ in1, const unsigned* __restrict__ in2, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = in0[i]; unsigned b = in1[i]; unsigned c = in2[i];
    unsigned r;
    asm volatile("prmt.b32.ecl %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    out[i] = r;
}

extern "C" __global__ void k_shf_l_clamp_b32(unsigned* __restrict__ out, const unsigned* __restrict__ in0, const unsigned* __restrict__ in1, const unsigned* __restrict__ in2, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = in0[i]; unsigned b = in1[i]; unsigned c = in2[i];
    unsigned r;
    asm volatile("shf.l.clamp.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    out[i] = r;
}

extern "C" __global__ void k_lop3_96(unsigned* __restrict__ out, const unsigned* __restrict__ in0, const unsigned* __restrict__ in1, const unsigned* __restrict__ in2, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = in0[i]; unsigned b = in1[i]; unsigned c = in2[i];
    unsigned r;
    asm volatile("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    out[i] = r;
}

extern "C" __global__ void k_popc_b64(unsigned* __restrict__ out, const unsigned long long* __restrict__ in0, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long a = in0[i];
    unsigned r;
    asm volatile("popc.b64 %0, %1;" : "=r"(r) : "l"(a));
    out[i] = r;
}

extern "C" __global__ void k_clz_b32(unsigned* __restrict__ out, const unsigned* __restrict__ in0, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = in0[i];
    unsigned r;
    asm volatile("clz.b32 %0, %1;" : "=r"(r) : "r"(a));
    out[i] = r;
}

extern "C" __global__ void k_brev_b32(unsigned* __restrict__ out, const unsigned* __restrict__ in0, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = in0[i];
    unsigned r;
    asm volatile("brev.b32 %0, %1;" : "=r"(r) : "r"(a));
    out[i] = r;
}

extern "C" __global__ void k_setp_pq(unsigned* __restrict__ out, const int* __restrict__ in0, const int* __restrict__ in1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = in0[i]; int b = in1[i];
    unsigned r;
    asm volatile("{ .reg .pred p, q; setp.lt.s32 p|q, %1, %2; selp.u32 %0, 1, 0, p; @q add.u32 %0, %0, 2; }" : "=r"(r) : "r"(a), "r"(b));
    out[i] = r;
}

extern "C" __global__ void k_selp_f64(double* __restrict__ out, const double* __restrict__ in0, const double* __restrict__ in1, const unsigned* __restrict__ in2, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double a = in0[i]; double b = in1[i]; unsigned c = in2[i];
    double r;
    asm volatile("{ .reg .pred p; .reg .b32 t; and.b32 t, %3, 1; setp.ne.b32 p, t, 0; selp.f64 %0, %1, %2, p; }" : "=d"(r) : "d"(a), "d"(b), "r"(c));
    out[i] = r;
}

extern "C" __global__ void k_slct_f32_f32(float* __restrict__ out, const float* __restrict__ in0, const float* __restrict__ in1, const float* __restrict__ in2, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = in0[i]; float b = in1[i]; float c = in2[i];
    float r;
    asm volatile("slct.f32.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(a), "f"(b), "f"(c));
    out[i] = r;
}

extern "C" __global__ void k_add_rz_f32(float* __restrict__ out, const float* __restrict__ in0, const float* __restrict__ in1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = in0[i]; float b = in1[i];
    float r;
    asm volatile("add.rz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    out[i] = r;
}

extern "C" __global__ void k_fma_rm_f64(double* __restrict__ out, const double* __restrict__ in0, const double* __restrict__ in1, const double* __restrict__ in2, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double a = in0[i]; double b = in1[i]; double c = in2[i];
    double r;
    asm volatile("fma.rm.f64 %0, %1, %2, %3;" : "=d"(r) : "d"(a), "d"(b), "d"(c));
    out[i] = r;
}

extern "C" __global__ void k_div_rn_f64(double* __restrict__ out, const double* __restrict__ in0, const double* __restrict__ in1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double a = in0[i]; double b = in1[i];
    double r;
    asm volatile("div.rn.f64 %0, %1, %2;" : "=d"(r) : "d"(a), "d"(b));
    out[i] = r;
}

extern "C" __global__ void k_sqrt_rp_f32(float* __restrict__ out, const float* __restrict__ in0, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = in0[i];
    float r;
    asm volatile("sqrt.rp.f32 %0, %1;" : "=f"(r) : "f"(a));
    out[i] = r;
}

extern "C" __global__ void k_rcp_rn_f64(double* __restrict__ out, const double* __restrict__ in0, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double a = in0[i];
    double r;
    asm volatile("rcp.rn.f64 %0, %1;" : "=d"(r) : "d"(a));
    out[i] = r;
}

extern "C" __global__ void k_min_NaN_f32(float* __restrict__ out, const float* __restrict__ in0, const float* __restrict__ in1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = in0[i]; float b = in1[i];
    float r;
    asm volatile("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    out[i] = r;
}

extern "C" __global__ void k_max_f16(unsigned short* __restrict__ out, const unsigned short* __restrict__ in0, const unsigned short* __restrict__ in1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned short a = in0[i]; unsigned short b = in1[i];
    unsigned short r;
    asm volatile("max.f16 %0, %1, %2;" : "=h"(r) : "h"(a), "h"(b));
    out[i] = r;
}

extern "C" __global__ void k_add_f16x2(unsigned* __restrict__ out, const unsigned* __restrict__ in0, const unsigned* __restrict__ in1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = in0[i]; unsigned b = in1[i];
    unsigned r;
    asm volatile("add.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    out[i] = r;
}

extern "C" __global__ void k_fma_rn_bf16(unsigned short* __restrict__ out, const unsigned short* __restrict__ in0, const unsigned short* __restrict__ in1, const unsigned short* __restrict__ in2, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned short a = in0[i]; unsigned short b = in1[i]; unsigned short c = in2[i];
    unsigned short r;
    asm volatile("fma.rn.bf16 %0, %1, %2, %3;" : "=h"(r) : "h"(a), "h"(b), "h"(c));
    out[i] = r;
}

extern "C" __global__ void k_cvt_rni_s32_f32(int* __restrict__ out, const float* __restrict__ in0, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = in0[i];
    int r;
    asm volatile("cvt.rni.s32.f32 %0, %1;" : "=r"(r) : "f"(a));
    out[i] = r;
}

extern "C" __global__ void k_cvt_rzi_s64_f64(long long* __restrict__ out, const double* __restrict__ in0, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double a = in0[i];
    long long r;
    asm volatile("cvt.rzi.s64.f64 %0, %1;" : "=l"(r) : "d"(a));
    out[i] = r;
}

extern "C" __global__ void k_cvt_rn_f16_f32(unsigned short* __restrict__ out, const float* __restrict__ in0, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = in0[i];
    unsigned short r;
    asm volatile("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(a));
    out[i] = r;
}

extern "C" __global__ void k_cvt_rz_bf16_f32(unsigned short* __restrict__ out, const float* __restrict__ in0, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = in0[i];
    unsigned short r;
    asm volatile("cvt.rz.bf16.f32 %0, %1;" : "=h"(r) : "f"(a));
    out[i] = r;
}

extern "C" __global__ void k_cvt_sat_u8_s32(unsigned* __restrict__ out, const int* __restrict__ in0, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = in0[i];
    unsigned r;
    asm volatile("cvt.sat.u8.s32 %0, %1;" : "=r"(r) : "r"(a));
    out[i] = r;
}

extern "C" __global__ void k_cvt_s64_s8(long long* __restrict__ out, const int* __restrict__ in0, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = in0[i];
    long long r;
    asm volatile("cvt.s64.s8 %0, %1;" : "=l"(r) : "r"(a));
    out[i] = r;
}

extern "C" __global__ void k_cvt_rn_f32_u64(float* __restrict__ out, const unsigned long long* __restrict__ in0, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long a = in0[i];
    float r;
    asm volatile("cvt.rn.f32.u64 %0, %1;" : "=f"(r) : "l"(a));
    out[i] = r;
}

extern "C" __global__ void k_cvt_rn_f16x2_f32(unsigned* __restrict__ out, const float* __restrict__ in0, const float* __restrict__ in1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = in0[i]; float b = in1[i];
    unsigned r;
    asm volatile("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(a), "f"(b));
    out[i] = r;
}

extern "C" __global__ void k_testp_subnormal_f32(unsigned* __restrict__ out, const float* __restrict__ in0, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = in0[i];
    unsigned r;
    asm volatile("{ .reg .pred p; testp.subnormal.f32 p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(r) : "f"(a));
    out[i] = r;
}

extern "C" __global__ void k_copysign_f64(double* __restrict__ out, const double* __restrict__ in0, const double* __restrict__ in1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double a = in0[i]; double b = in1[i];
    double r;
    asm volatile("copysign.f64 %0, %1, %2;" : "=d"(r) : "d"(a), "d"(b));
    out[i] = r;
}

extern "C" __global__ void k_ex2_approx_f32(float* __restrict__ out, const float* __restrict__ in0, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = in0[i];
    float r;
    asm volatile("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(a));
    out[i] = r;
}
