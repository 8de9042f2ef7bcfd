// pack.cuh — transposing tiny blocks of 8- and 16-bit elements inside 32-bit registers.
//
// A 32-bit word holds E = 4 / sizeof(T) elements of one row (element 0 in the low bits, as in
// memory). Given RG words from RG consecutive rows, `transpose_words` produces E "column pieces":
// piece e holds element e of every row, i.e. RG consecutive elements of one row of the output,
// packed RG * sizeof(T) / 4 per word. One `__byte_perm` (PTX `prmt`) picks any 4 of the 8 bytes
// of two registers, so a 2x2 block of 16-bit values costs 2 of them and a 4x4 block of bytes 8.

#pragma once

// The selector of __byte_perm(x, y, s) that puts byte r0 of the pair (x's bytes are 0-3, y's 4-7)
// in byte 0 of the result, r1 in byte 1, ...: one hex digit per result byte, byte 0 lowest.
__device__ __forceinline__ constexpr unsigned pick(unsigned r0, unsigned r1, unsigned r2, unsigned r3)
{
    return r0 | r1 << 4 | r2 << 8 | r3 << 12;
}

// 2x2 of 16-bit: rows a = (a0, a1), b = (b0, b1)  ->  lo = (a0, b0), hi = (a1, b1)
__device__ __forceinline__ void transpose2x2_b16(unsigned a, unsigned b, unsigned& lo, unsigned& hi)
{
    lo = __byte_perm(a, b, pick(0, 1, 4, 5));        // the low half of a, then the low half of b
    hi = __byte_perm(a, b, pick(2, 3, 6, 7));        // the high halves
}

// 4x4 of bytes: rows a, b, c, d  ->  o0 = (a0 b0 c0 d0), o1 = (a1 b1 c1 d1), ...
__device__ __forceinline__ void transpose4x4_b8(unsigned a, unsigned b, unsigned c, unsigned d,
                                                unsigned& o0, unsigned& o1, unsigned& o2, unsigned& o3)
{
    unsigned ab01 = __byte_perm(a, b, pick(0, 4, 1, 5));   // a0 b0 a1 b1
    unsigned ab23 = __byte_perm(a, b, pick(2, 6, 3, 7));   // a2 b2 a3 b3
    unsigned cd01 = __byte_perm(c, d, pick(0, 4, 1, 5));   // c0 d0 c1 d1
    unsigned cd23 = __byte_perm(c, d, pick(2, 6, 3, 7));   // c2 d2 c3 d3
    transpose2x2_b16(ab01, cd01, o0, o1);                   // a0 b0 c0 d0 and a1 b1 c1 d1: 16-bit pairs
    transpose2x2_b16(ab23, cd23, o2, o3);
}

// RG words (one per row) -> E pieces of RG * S / 4 words each. S = sizeof(element) in 1, 2, 4.
template <int S, int RG>
__device__ __forceinline__ void transpose_words(const unsigned (&in)[RG], unsigned (&out)[4 / S][(RG * S + 3) / 4])
{
    if constexpr (S == 4) {
#pragma unroll
        for (int r = 0; r < RG; ++r)
            out[0][r] = in[r];
    } else if constexpr (S == 2) {
        static_assert(RG % 2 == 0, "16-bit elements are transposed two rows at a time");
#pragma unroll
        for (int m = 0; m < RG / 2; ++m)
            transpose2x2_b16(in[2 * m], in[2 * m + 1], out[0][m], out[1][m]);
    } else {
        static_assert(S == 1 && RG % 4 == 0, "bytes are transposed four rows at a time");
#pragma unroll
        for (int m = 0; m < RG / 4; ++m)
            transpose4x4_b8(in[4 * m], in[4 * m + 1], in[4 * m + 2], in[4 * m + 3],
                            out[0][m], out[1][m], out[2][m], out[3][m]);
    }
}

// The raw bits of an element as an unsigned number, and back (a transpose only moves bits).
template <typename T> __device__ __forceinline__ unsigned bits_of(T v)
{
    if constexpr (sizeof(T) == 1) return *reinterpret_cast<unsigned char*>(&v);
    else if constexpr (sizeof(T) == 2) return *reinterpret_cast<unsigned short*>(&v);
    else return *reinterpret_cast<unsigned*>(&v);
}
template <typename T> __device__ __forceinline__ T from_bits(unsigned b)
{
    if constexpr (sizeof(T) == 1) { unsigned char x = (unsigned char)b; return *reinterpret_cast<T*>(&x); }
    else if constexpr (sizeof(T) == 2) { unsigned short x = (unsigned short)b; return *reinterpret_cast<T*>(&x); }
    else return *reinterpret_cast<T*>(&b);
}
