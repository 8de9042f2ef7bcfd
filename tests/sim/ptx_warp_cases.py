"""Semantics cases that are not elementwise: shfl.sync, vote/activemask, atomics and red,
vector loads/stores, mov pack/unpack, lane special registers.

Each :class:`Special` is one kernel with ``make_args(rng)`` (numpy arrays and scalars),
``check(args)`` -> list of failures against a Python reference (run after a launch), and
``deterministic(args)`` -> arrays the GPU and the simulator must agree on bit for bit (atomic
orderings are not part of that: only final values and order-free results are).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

U32 = np.uint32


@dataclass
class Special:
    name: str
    ptx: str
    source: str
    grid: tuple
    block: tuple
    make_args: object
    check: object
    deterministic: object = None
    note: str = ""
    outputs: list = field(default_factory=list)


SPECIALS: list[Special] = []


# ----------------------------------------------------------------------------- shfl.sync

def _shfl_source(mode):
    return f'''
extern "C" __global__ void shfl_{mode}(unsigned* out, const unsigned* val, const unsigned* lane_b,
                                      const unsigned* cword, int n)
{{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned r, p;
    asm volatile("{{ .reg .pred q; shfl.sync.{mode}.b32 %0|q, %2, %3, %4, 0xffffffff; selp.u32 %1, 1, 0, q; }}"
                 : "=r"(r), "=r"(p) : "r"(val[i]), "r"(lane_b[i]), "r"(cword[i / 32]));
    out[2 * i] = r;
    out[2 * i + 1] = p;
}}
'''


def _shfl_ref(mode, val, lane_b, cword):
    out = np.zeros(2 * len(val), np.uint32)
    for i in range(len(val)):
        w, lane = divmod(i, 32)
        c = int(cword[w])
        bval, cval, seg = int(lane_b[i]) & 31, c & 31, (c >> 8) & 31
        max_lane = (lane & seg) | (cval & ~seg)
        min_lane = lane & seg
        if mode == "up":
            j, ok = lane - bval, lane - bval >= max_lane
        elif mode == "down":
            j, ok = lane + bval, lane + bval <= max_lane
        elif mode == "bfly":
            j, ok = lane ^ bval, (lane ^ bval) <= max_lane
        else:
            j = min_lane | (bval & ~seg)
            ok = j <= max_lane
        j = j if ok else lane
        out[2 * i], out[2 * i + 1] = val[w * 32 + j], int(ok)
    return out


def _shfl_case(mode):
    warps = 40

    def make(rng):
        val = rng.integers(0, 1 << 32, warps * 32, dtype=np.uint64).astype(U32)
        lane_b = rng.integers(0, 40, warps * 32).astype(U32)      # >31: only b[4:0] counts
        widths = [32, 16, 8, 4, 2, 1]
        clamp = 0 if mode == "up" else 31
        cw = [((32 - w) << 8) | clamp for w in widths]
        cw += [int(x) for x in rng.integers(0, 1 << 13, warps - len(cw))]   # any segment mask / clamp
        out = np.full(2 * warps * 32, 0xDEADBEEF, U32)
        return [out, val, lane_b, np.array(cw, U32), np.int32(warps * 32)]

    def check(args):
        out, val, lane_b, cw, _ = args
        exp = _shfl_ref(mode, val, lane_b, cw)
        bad = np.flatnonzero(out != exp)
        return [f"thread {i // 2}: got {out[i]:#x} expected {exp[i]:#x}" for i in bad[:5]]
    SPECIALS.append(Special(f"shfl_{mode}", f"shfl.sync.{mode}.b32", _shfl_source(mode), (warps // 4, 1, 1),
                            (128, 1, 1), make, check, lambda a: [a[0]]))


for _m in ("up", "down", "bfly", "idx"):
    _shfl_case(_m)


# ----------------------------------------------------------------------------- vote / activemask

VOTE_SRC = r'''
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
'''


def _vote_make(rng, n=130):
    a = rng.integers(0, 4, n).astype(U32)
    a[:32] = 3                      # a full warp that all votes true
    a[32:48] = 2                    # a partial group that all votes false
    return [np.full(5 * n, 0xDEADBEEF, U32), a, np.int32(n)]


def _vote_check(args, block=48):
    out, a, n = args
    n = int(n)
    bad = []
    for i in range(n):
        if not a[i] & 2:
            if (out[5 * i:5 * i + 5] != 0xDEADBEEF).any():
                bad.append(f"thread {i} was inactive but wrote")
            continue
        b, t = divmod(i, block)
        w0 = b * block + (t // 32) * 32                      # first thread of i's warp
        lanes = [j for j in range(w0, min(w0 + 32, (b + 1) * block, n)) if a[j] & 2]
        m = sum(1 << (j - w0) for j in lanes)
        ballot = sum(1 << (j - w0) for j in lanes if a[j] & 1)
        votes = [a[j] & 1 for j in lanes]
        exp = [m, ballot, int(all(votes)), int(any(votes)), int(len(set(votes)) == 1)]
        got = [int(v) for v in out[5 * i:5 * i + 5]]
        if got != exp:
            bad.append(f"thread {i}: got {got} expected {exp}")
    return bad[:5]


SPECIALS.append(Special("vote_all", "vote.sync.{ballot,all,any,uni} + activemask (partial warps)", VOTE_SRC,
                        (3, 1, 1), (48, 1, 1), _vote_make, _vote_check, lambda a: [a[0]]))


# ----------------------------------------------------------------------------- atomics and red

ATOM_SRC = r'''
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
'''
N_ATOM = 300


def _atom_u32_make(rng):
    n = N_ATOM
    acc = rng.integers(0, 1 << 32, 8 * 8, dtype=np.uint64).astype(U32)
    acc[6::8] = rng.integers(0, 101, 8)                    # inc/dec counters start within bounds
    acc[7::8] = rng.integers(0, 101, 8)
    return [acc, np.zeros(8 * n, U32), rng.integers(0, 8, n).astype(U32),
            rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(U32), np.int32(n)]


def _atom_u32_final(acc0, idx, val):
    acc = [int(x) for x in acc0]
    for k, v in zip(idx, val):
        b, v = 8 * int(k), int(v)
        acc[b] = (acc[b] + v) & 0xFFFFFFFF
        sv = v - (1 << 32) if v >> 31 else v
        sa = acc[b + 1] - (1 << 32) if acc[b + 1] >> 31 else acc[b + 1]
        acc[b + 1] = min(sa, sv) & 0xFFFFFFFF
        acc[b + 2] = max(acc[b + 2], v)
        acc[b + 3] &= v | 0x10000
        acc[b + 4] |= v & 0xF0F0F0F0
        acc[b + 5] ^= v
        acc[b + 6] = 0 if acc[b + 6] >= 100 else acc[b + 6] + 1
        acc[b + 7] = 100 if (acc[b + 7] == 0 or acc[b + 7] > 100) else acc[b + 7] - 1
    return np.array(acc, U32)


def _atom_u32_check(args, before):
    acc, old, idx, val, n = args
    exp = _atom_u32_final(before[0], idx, val)
    bad = [f"acc[{i}]: got {acc[i]:#x} expected {exp[i]:#x}" for i in np.flatnonzero(acc != exp)[:5]]
    for k in range(8):            # add: the old values are the partial sums in some order
        mine = np.flatnonzero(idx == k)
        chain = sorted([int(before[0][8 * k])] + [(int(old[8 * i]) + int(val[i])) & 0xFFFFFFFF for i in mine])
        got = sorted([int(old[8 * i]) for i in mine] + [int(acc[8 * k])])
        if chain != got:
            bad.append(f"atomicAdd slot {k}: returned old values are not a serialization")
    return bad


_before = {}


def _remember(name, make):
    def wrapped(rng):
        args = make(rng)
        _before[name] = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        return args
    return wrapped


def _with_before(name, check):
    return lambda args: check(args, _before[name])


SPECIALS.append(Special("atom_u32", "atom.global.{add,min.s32,max,and,or,xor,inc,dec}.u32", ATOM_SRC,
                        (3, 1, 1), (128, 1, 1), _remember("atom_u32", _atom_u32_make),
                        _with_before("atom_u32", _atom_u32_check), lambda a: [a[0]],
                        note="returned old values depend on the hardware's order; finals do not"))


def _atom_wide_make(rng):
    n = N_ATOM
    return [rng.integers(0, 1 << 62, 3 * 4, dtype=np.uint64), np.zeros(3 * n, np.uint64),
            np.zeros(4, np.float64), np.zeros(4, np.float32), rng.integers(0, 4, n).astype(U32),
            rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64),
            np.int32(n)]


def _atom_wide_check(args, before):
    acc, old, dacc, facc, idx, val, n = args
    exp = [int(x) for x in before[0]]
    dexp, fexp = [0.0] * 4, [0.0] * 4
    for k, v in zip(idx, val):
        k, v = int(k), int(v)
        exp[3 * k] = (exp[3 * k] + v) & (2 ** 64 - 1)
        s = lambda x: x - (1 << 64) if x >> 63 else x
        exp[3 * k + 1] = min(s(exp[3 * k + 1]), s(v)) & (2 ** 64 - 1)
        exp[3 * k + 2] = max(exp[3 * k + 2], v)
        dexp[k] += (v & 1023) * 0.25
        fexp[k] += (v & 255) * 0.5
    bad = [f"acc[{i}]: got {int(acc[i]):#x} expected {exp[i]:#x}" for i in range(len(exp)) if int(acc[i]) != exp[i]]
    bad += [f"double sum {k}: {dacc[k]} != {dexp[k]}" for k in range(4) if dacc[k] != dexp[k]]
    bad += [f"float sum {k}: {facc[k]} != {fexp[k]}" for k in range(4) if facc[k] != fexp[k]]
    return bad[:5]


SPECIALS.append(Special("atom_wide", "atom.global.{add.u64,min.s64,max.u64,add.f64,add.f32}", ATOM_SRC,
                        (3, 1, 1), (128, 1, 1), _remember("atom_wide", _atom_wide_make),
                        _with_before("atom_wide", _atom_wide_check), lambda a: [a[0], a[2], a[3]]))


def _cas_make(rng):
    n = 200
    acc = rng.integers(4, 9, 2 * n).astype(U32)
    return [acc, np.zeros(2 * n, U32), rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(U32), np.int32(n)]


def _cas_check(args, before):
    acc, old, val, n = args
    acc0 = before[0]
    bad = []
    for i in range(int(n)):
        want = 7 if i & 1 else 5
        exp_acc = [int(val[i]), int(val[i]) if acc0[2 * i + 1] == want else int(acc0[2 * i + 1])]
        if [int(acc[2 * i]), int(acc[2 * i + 1])] != exp_acc or [int(old[2 * i]), int(old[2 * i + 1])] != [int(acc0[2 * i]), int(acc0[2 * i + 1])]:
            bad.append(f"thread {i}: acc {acc[2 * i:2 * i + 2]} old {old[2 * i:2 * i + 2]}")
    return bad[:5]


SPECIALS.append(Special("atom_exch_cas", "atom.global.{exch,cas}.b32", ATOM_SRC, (2, 1, 1), (128, 1, 1),
                        _remember("atom_exch_cas", _cas_make), _with_before("atom_exch_cas", _cas_check),
                        lambda a: [a[0], a[1]]))


def _red_make(rng):
    n = 250
    return [np.zeros(8, U32), np.zeros(16 * 2, U32), rng.integers(0, 8, n).astype(U32),
            rng.integers(0, 1 << 20, n).astype(U32), np.int32(n)]


def _red_check(args, block=128):
    acc, blocksum, idx, val, n = args
    exp = np.zeros(8, np.uint64)
    np.add.at(exp, idx.astype(np.int64), val.astype(np.uint64))
    bad = [f"red acc: {acc} expected {exp}"] if (acc != exp.astype(U32)).any() else []
    for b in range(2):
        sel = slice(b * block, min((b + 1) * block, int(n)))
        s = np.zeros(16, np.uint64)
        np.add.at(s, idx[sel].astype(np.int64), val[sel].astype(np.uint64))
        for k in range(8):
            s[8 + k] = max([0] + [int(v) >> 8 for j, v in zip(idx[sel], val[sel]) if j ^ 7 == k])
        if (blocksum[16 * b:16 * b + 16] != s.astype(U32)).any():
            bad.append(f"shared block {b}: {blocksum[16 * b:16 * b + 16]} expected {s}")
    return bad


SPECIALS.append(Special("red_and_shared", "red.global.add.u32, atom.shared.{add,max}.u32", ATOM_SRC,
                        (2, 1, 1), (128, 1, 1), _red_make, _red_check, lambda a: [a[0], a[1]]))


# ----------------------------------------------------------------------------- vector ld/st, loads that extend

VEC_SRC = r'''
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
'''


def _vec_make(rng, n=200):
    i4 = rng.integers(0, 1 << 32, 4 * n, dtype=np.uint64).astype(U32).view(np.float32)
    i2 = rng.integers(-(1 << 31), 1 << 31, 2 * n).astype(np.int32)
    id_ = (rng.integers(0, 1 << 63, 2 * n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)).view(np.float64)
    ic = rng.integers(0, 256, 4 * n).astype(np.uint8)
    return [np.zeros(4 * n, np.float32), i4, np.zeros(2 * n, np.int32), i2, np.zeros(2 * n, np.float64), id_,
            np.zeros(4 * n, np.uint8), ic, np.int32(n)]


def _vec_check(args):
    o4, i4, o2, i2, od, id_, oc, ic, n = args
    bad = []
    for name, o, i in (("float4", o4, i4), ("int2", o2, i2), ("double2", od, id_), ("uchar4", oc, ic)):
        if o.tobytes() != i.tobytes():
            bad.append(f"{name} copy differs at {np.flatnonzero(o.view(np.uint8) != i.view(np.uint8))[:4]}")
    return bad


SPECIALS.append(Special("vec_copy", "ld/st.{global,shared}.v4.f32/.v2.s32/.v2.f64/.v4.u8", VEC_SRC,
                        (2, 1, 1), (128, 1, 1), _vec_make, _vec_check, lambda a: [a[0], a[2], a[4], a[6]]))


def _widen_make(rng, n=300):
    return [np.zeros(5 * n, np.int32), rng.integers(-128, 128, n).astype(np.int8),
            rng.integers(0, 256, n).astype(np.uint8), rng.integers(-32768, 32768, n).astype(np.int16),
            rng.integers(0, 65536, n).astype(np.uint16),
            rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(U32).view(np.float32), np.int32(n)]


def _widen_check(args):
    out, c, uc, s, us, f, n = args
    exp = np.stack([c.astype(np.int32), uc.astype(np.int32), s.astype(np.int32), us.astype(np.int32),
                    f.view(np.int32)], axis=1).reshape(-1)
    return [f"element {i}: {out[i]} != {exp[i]}" for i in np.flatnonzero(out != exp)[:5]]


SPECIALS.append(Special("widen_loads", "ld.global.{s8,u8,s16,u16}, ld.global.nc", VEC_SRC, (3, 1, 1), (128, 1, 1),
                        _widen_make, _widen_check, lambda a: [a[0]]))


# ----------------------------------------------------------------------------- mov pack/unpack, lane registers

MOV_SRC = r'''
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
'''


def _mov_make(rng, n=200):
    r = lambda k: rng.integers(0, 1 << 32, k, dtype=np.uint64).astype(U32)
    return [np.zeros(n, np.uint64), np.zeros(2 * n, U32), np.zeros(n, U32), np.zeros(2 * n, np.uint16),
            r(n), r(n), rng.integers(0, 1 << 16, 2 * n).astype(np.uint16), np.int32(n)]


def _mov_check(args):
    o64, words, o32, halves, a, b, h, n = args
    bad = []
    for i in range(int(n)):
        d = int(a[i]) | (int(b[i]) << 32)
        e = d ^ 0x0123456789ABCDEF
        exp = [d, e & 0xFFFFFFFF, e >> 32, int(h[2 * i]) | (int(h[2 * i + 1]) << 16), int(a[i]) & 0xFFFF, int(a[i]) >> 16]
        got = [int(o64[i]), int(words[2 * i]), int(words[2 * i + 1]), int(o32[i]), int(halves[2 * i]), int(halves[2 * i + 1])]
        if got != exp:
            bad.append(f"thread {i}: got {[hex(g) for g in got]} expected {[hex(e) for e in exp]}")
    return bad[:5]


SPECIALS.append(Special("mov_pack", "mov.b64/.b32 {lo, hi} pack and unpack", MOV_SRC, (2, 1, 1), (128, 1, 1),
                        _mov_make, _mov_check, lambda a: [a[0], a[1], a[2], a[3]]))

LANE_BLOCK = (5, 3, 4)   # 60 threads: warp 0 full, warp 1 has 28 lanes; x-fastest numbering


def _lane_make(rng):
    return [np.zeros(6 * 2 * 60, U32), np.int32(120)]


def _lane_check(args):
    out, n = args
    bad = []
    for i in range(120):
        lane = (i % 60) % 32
        exp = [lane, 1 << lane, (1 << lane) - 1, (1 << (lane + 1)) - 1,
               (~((1 << (lane + 1)) - 1)) & 0xFFFFFFFF, (~((1 << lane) - 1)) & 0xFFFFFFFF]
        got = [int(v) for v in out[6 * i:6 * i + 6]]
        if got != exp:
            bad.append(f"thread {i}: got {got} expected {exp}")
    return bad[:5]


SPECIALS.append(Special("lane_regs", "%laneid, %lanemask_{eq,lt,le,gt,ge} (3-D block)", MOV_SRC, (2, 1, 1),
                        LANE_BLOCK, _lane_make, _lane_check, lambda a: [a[0]]))


def _space_make(rng, n=100):
    return [np.zeros(2 * n, U32), np.zeros(n, np.float32), np.int32(n)]


def _space_check(args):
    out, g, n = args
    exp = np.array([[i & 1, 1 - (i & 1)] for i in range(int(n))], U32).reshape(-1)
    return [f"thread {i // 2}: {out[i]} != {exp[i]}" for i in np.flatnonzero(out != exp)[:5]]


SPECIALS.append(Special("space_tests", "isspacep.{shared,global} on generic pointers", MOV_SRC, (2, 1, 1),
                        (64, 1, 1), _space_make, _space_check, lambda a: [a[0]]))


def _subnormal_make(rng, n=64):
    val = np.full(n, np.float32(1e-40))          # subnormal addends: exact sum 4e-39 per slot (still subnormal)
    val[::7] = np.float32(-3e-41)
    return [np.zeros(4, np.float32), val, np.int32(n)]


def _subnormal_check(args):
    acc = args[0]
    ok = not acc.any() and not np.signbit(acc).any()
    return [] if ok else [f"acc {acc}: the addends are subnormal, flushed to zero, so every sum is +0"]


SPECIALS.append(Special("atom_f32_subnormal", "atom.global.add.f32 with subnormal operands", MOV_SRC, (1, 1, 1),
                        (64, 1, 1), _subnormal_make, _subnormal_check, lambda a: [a[0]],
                        note="flushes subnormal operands and results (ISA; an H100 agrees)"))
