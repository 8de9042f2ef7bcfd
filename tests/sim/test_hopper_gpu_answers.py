"""The Hopper data-movement semantics and counting rules against what an H100 returned and counted
(benchmarks/hopper_probe.py, 2026-11-26; benchmarks/results/h100_2026-11-26_hopper/README.md).

- values: every ldmatrix/stmatrix (.x1/.x2/.x4, .trans or not, three row-address patterns),
  movmatrix, cp.async zero-fill (each src-size) and ignore-src, and 18 TMA boxes (uint8 and float32,
  swizzle 0/32/64/128, inside and across the far edges, zero and NaN fill) with the clipped TMA store
  of each;
- counts: the global load requests/sectors of 76 cp.async patterns (.ca 4/8/16 bytes, .cg 16),
  shared wavefronts and conflicts of 60 ldmatrix/stmatrix patterns, and the TMA counters.
"""
import gzip
import json
import re
from pathlib import Path

import numpy as np
import pytest

from course_lib.sim.movement import async_copy, matrix_moves as mm, tma
from course_lib.sim.results.metrics import shared_wavefronts

RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "h100_2026-11-26_hopper"
SEM = json.loads(gzip.decompress((RUN / "run2_semantics.json.gz").read_bytes()))
NCU = [r for run in ("run1_ncu.json", "run2_ncu.json")
       for r in json.loads((RUN / run).read_text())["all"]["records"]]
G = (np.arange(65536, dtype=np.uint32) % 251 + 1).astype(np.uint8)     # the probes' global bytes
LD, ST = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"


def _rows(key):
    mul, add = (int(t) for t in re.search(r"rows=\(l\*(\d+)\+(\d+)\)", key).groups())
    return ((np.arange(32) * mul + add) % 64) * int(key.rsplit("pitch=", 1)[1])


def test_ldmatrix_fragments_are_the_gpus():
    keys = [k for k in SEM if k.startswith("ldsm")]
    shared = np.arange(8192, dtype=np.uint16).view(np.uint8)
    for k in keys:
        count, trans = int(k.split()[1][1]), "trans=true" in k
        rows = mm.row_lanes(_rows(k)[None], count)[0]
        raw = np.stack([np.stack([shared[a:a + 16] for a in rows[m]]) for m in range(count)])[None]
        got = mm.fragments(mm.rows_to_matrices(raw), trans)[0]
        assert np.array_equal(got, np.array(SEM[k], np.uint32)), k
    assert len(keys) == 18


def test_stmatrix_rows_are_the_gpus():
    keys = [k for k in SEM if k.startswith("stsm")]
    for k in keys:
        count, trans = int(k.split()[1][1]), "trans=true" in k
        regs = np.array([[(8 * l + 2 * j) | ((8 * l + 2 * j + 1) << 16) for j in range(count)] for l in range(32)],
                        np.uint32)
        rows = mm.matrices_to_rows(mm.matrices_of(regs[None], trans))[0]
        shared = np.full(4096, 0xFF, np.uint8)
        for m, addrs in enumerate(mm.row_lanes(_rows(k)[None], count)[0]):
            for r, a in enumerate(addrs):
                shared[a:a + 16] = rows[m, r]
        assert np.array_equal(shared, np.array(SEM[k], np.uint16).view(np.uint8)), k
    assert len(keys) == 18


def test_movmatrix_is_the_gpus():
    regs = np.array([(2 * l) | ((2 * l + 1) << 16) for l in range(32)], np.uint32)
    assert np.array_equal(mm.movmatrix(regs[None])[0], np.array(SEM["movmatrix"], np.uint32))


MOVMATRIX = r'''
__global__ void move(unsigned* out) {
    unsigned l = threadIdx.x, r = (2 * l) | ((2 * l + 1) << 16), d;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(d) : "r"(r));
    out[l] = d;
}
'''


def test_movmatrix_in_a_kernel_is_the_gpus():
    """The same values through the simulator's dispatch (a kernel with the instruction, Function.simulate)."""
    import course_lib as cl
    out = np.zeros(32, np.uint32)
    cl.RawModule(code=MOVMATRIX, filename="move.cu").get_function("move").simulate((1,), (32,), (out,), echo=False)
    assert np.array_equal(out, np.array(SEM["movmatrix"], np.uint32))


def test_cp_async_zero_fill_is_the_gpus():
    keys = [k for k in SEM if k.startswith("cpasync ") and "src_size" in k]
    for k in keys:
        size, src_size = int(k.split()[1]), int(k.rsplit("=", 1)[1])
        n = async_copy.source_bytes(size, src_size, False)
        want = async_copy.zero_filled(np.stack([G[l * size:l * size + n] for l in range(32)]), size)
        assert np.array_equal(want.reshape(-1), np.array(SEM[k], np.uint8)), k
    got = np.array(SEM["cpasync ignore-src lane%3==0"], np.uint8).reshape(32, 16)
    for lane in range(32):
        n = async_copy.source_bytes(16, None, lane % 3 == 0)
        assert np.array_equal(got[lane], async_copy.zero_filled(G[None, lane * 16:lane * 16 + n], 16)[0])
    assert len(keys) == 20 and SEM["bulk 4096"] is True


def _tma_case(key):
    m = re.match(r"tma (\w+) (\d+)x(\d+) box=\((\d+), (\d+)\) sw=(\d+) at=\((-?\d+),(-?\d+)\) nan=(\w+)", key)
    dt, rows, cols, bc, br, sw, c0, r0, nan = m.groups()
    a = (np.arange(int(rows) * int(cols), dtype=np.uint32) % 251 + 1).astype(dt).reshape(int(rows), int(cols))
    return a, tma.TensorMap(a, box=(int(br), int(bc)), swizzle=int(sw), fill="nan" if nan == "True" else "zero"), \
        (int(c0), int(r0))


@pytest.mark.parametrize("key", [k for k in SEM if k.startswith("tma") and "error" not in SEM[k]])
def test_tma_box_lands_and_stores_as_on_the_gpu(key):
    a, m, coords = _tma_case(key)
    d = m.desc(0)
    off, inside, shared = tma.box_layout(d, coords, dst=1024)        # the probe's box: alignas(1024)
    raw, s = a.view(np.uint8).reshape(-1), d.itemsize
    smem = np.full(1024 + 2048, 0xEE, np.uint8)
    fill = np.frombuffer(tma.fill_value(d), np.uint8)
    for o, ins, sh in zip(off, inside, shared):
        smem[sh:sh + s] = raw[o:o + s] if ins else fill
    assert np.array_equal(smem[1024:], np.array(SEM[key]["smem"], np.uint8))
    stored = np.zeros(raw.size, np.uint8)
    for o, ins, sh in zip(off, inside, shared):
        if ins:
            stored[o:o + s] = smem[sh:sh + s]
    assert np.array_equal(stored, np.array(SEM[key]["stored"], np.uint8).reshape(-1))


def test_tma_boxes_at_negative_coordinates_stopped_the_h100():
    """Recorded, not yet modelled: a box loaded and stored back at (-w/2, -3) ended every such
    probe with CUDA_ERROR_ILLEGAL_INSTRUCTION (which of the two operations is not known yet)."""
    bad = [k for k in SEM if k.startswith("tma") and "error" in SEM[k]]
    assert len(bad) == 9 and all(re.search(r"at=\(-\d+,-3\)", k) for k in bad)
    assert all("ILLEGAL_INSTRUCTION" in SEM[k]["error"] for k in bad)


def _cp_async_pattern(label):
    m = re.match(r"cpasync(\d+)(ca|cg) src_stride=(\d+) dst_stride=(\d+) active=(\d+) src_size=(\d+) warps=(\d+)", label)
    size, level, ss, ds, active, src_size, warps = m.groups()
    lane, warp = np.arange(32), np.arange(int(warps))[:, None]
    src = warp * 4096 + lane * int(ss)
    dst = warp * 2048 + lane * int(ds)
    reads = np.broadcast_to((lane < int(active)) & (int(src_size) > 0), src.shape)
    return src.astype(np.int64), dst.astype(np.int64), reads, level


def test_cp_async_is_counted_as_ncu_counts_it():
    seen = 0
    for r in NCU:
        if not r["label"].startswith("cpasync"):
            continue
        src, dst, reads, level = _cp_async_pattern(r["label"])
        want = (int(r["ncu"].get(LD, 0)), int(r["ncu"].get(ST, 0)))
        assert async_copy.global_load_counts(src, dst, reads, level) == want, r["label"]
        seen += 1
    assert seen >= 100


@pytest.mark.parametrize("kind", ["ldsm", "stsm"])
def test_ldmatrix_and_stmatrix_cost_wavefronts_like_16_byte_accesses(kind):
    op = "ld" if kind == "ldsm" else "st"
    wf_name = f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"
    cf_name = f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"
    seen = 0
    for r in NCU:
        if not re.match(kind + r" x\d", r["label"]):
            continue
        count = int(r["label"].split()[1][1])
        addr = np.tile(_rows(r["label"])[None], (2, 1)).astype(np.int64)   # two warps, same rows
        a, act, width = mm.access_pattern(addr, np.ones((2, 32), np.bool_), count)
        wf, cf, _ = shared_wavefronts(a, act, width, op == "ld")
        assert (wf, cf) == (int(r["ncu"].get(wf_name, 0)), int(r["ncu"].get(cf_name, 0))), r["label"]
        seen += 1
    assert seen == 60


def test_tma_counters_are_ncus():
    few = {r["label"]: r["ncu"] for r in json.loads((RUN / "run2_ncu.json").read_text())["few"]["records"]}
    box = 32 * 32 * 4
    for label in ("tma load 32x32 f32 sw=128", "tma load 32x32 f32 sw=128 half outside", "tma load 32x32 f32 sw=128 outside"):
        for name, value in tma.load_counts(box).items():
            assert few[label].get(name, 0) == value, (label, name)
    a = np.zeros((64, 80), np.float32)
    d = tma.TensorMap(a, box=(32, 32), swizzle=128).desc(0)
    for label, c0 in (("tma load+store 32x32 f32 sw=128", 0), ("tma load+store 32x32 f32 sw=128 half outside", 64)):
        off, inside, _ = tma.box_layout(d, (c0, 0), dst=1024)
        for name, value in tma.store_counts(off, inside, 4, address=0).items():
            assert few[label].get(name, 0) == value, (label, name)
    for name in tma.load_counts(box):                        # the course's eight stay at zero for TMA
        assert name not in (LD, ST)
    assert all(few["tma load 32x32 f32 sw=128"].get(m, 0) == 0 for m in (LD, ST))
