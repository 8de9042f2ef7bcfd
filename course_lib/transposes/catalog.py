"""The course's kernels, by name: which file, which template instance, how to launch it.

Every kernel in kernels/ has the same contract::

    kernel(T* out, const T* in, int rows, int cols)     // in: rows x cols, row-major
                                                         // out: cols x rows (a copy: rows x cols)

so one launcher serves them all. A :class:`Spec` says how a block maps onto the matrix
(``tile(p)``: columns x rows of *in* that one block covers; ``block(p)``: threads) and which
parameters it takes; ``transposes.kernel(key, dtype, **params)`` (``kernel.py``) turns one into a
runnable :class:`~course_lib.transposes.kernel.Transpose`. This module is the table only: data,
and the constraint checks that refuse parameters a kernel's static_asserts would refuse.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Spec:
    key: str
    title: str
    file: str
    template: str                      # e.g. "tile<{T}, {TILE}, {BLOCK_ROWS}, {PAD}>"
    tile: Callable                     # params -> elements one block covers along grid x, grid y
    block: Callable                    # params -> (bx, by) threads
    defaults: dict = field(default_factory=dict)
    is_copy: bool = False              # out has in's shape (the copy ceiling)
    swap_grid: bool = False            # grid x runs over rows of `in` instead of its columns
    itemsizes: tuple = (1, 2, 4, 8)
    lesson: str = ""                   # which notebook introduces it
    check: Callable | None = None      # params, dtype -> error message or None (constraints)
    grid: Callable | None = None       # params, rows, cols -> grid, when not one block per tile
    dtype_defaults: Callable | None = None   # dtype -> defaults that depend on the element size
    bench: bool = True                 # worth timing at benchmark sizes
    maps: Callable | None = None       # params, dtype -> dict(inp=box, out=box or None, swizzle=...):
                                       # the kernel takes TMA tensor maps, (out or out_map, in_map, rows, cols)
    shapes: Callable | None = None     # params, rows, cols, dtype -> why it cannot move that matrix, or None
    shared: Callable | None = None     # params, dtype, rows, cols -> bytes of dynamic shared memory per block


SPECS: dict[str, Spec] = {}
DEMOS: dict[str, Spec] = {}            # correct, but too slow for big shapes (kernel() finds them)


def register(spec: Spec, table=None) -> Spec:
    (SPECS if table is None else table)[spec.key] = spec
    return spec


def _square(p):
    return p["TILE"], p["TILE"]


def _tile_block(p):
    return p["TILE"], p["BLOCK_ROWS"]


def _max_threads(n):
    return None if n <= 1024 else f"a block of {n} threads is more than the 1024 a GPU allows"


register(Spec("copy", "Copy (the upper bound)", "copy.cu", "copy<{T}, {TILE}, {BLOCK_ROWS}>",
              tile=_square, block=_tile_block, defaults=dict(TILE=32, BLOCK_ROWS=8), is_copy=True, lesson="03"))
register(Spec("copy_shared", "Copy through a shared tile, with a barrier", "copy.cu",
              "copy_shared<{T}, {TILE}, {BLOCK_ROWS}>", tile=_square, block=_tile_block,
              defaults=dict(TILE=32, BLOCK_ROWS=8), is_copy=True, lesson="06"))
register(Spec("per_row", "One thread per row of out", "simple.cu", "per_row<{T}>",
              tile=lambda p: (p["BLOCK"], 1), block=lambda p: (p["BLOCK"], 1), defaults=dict(BLOCK=256),
              grid=lambda p, rows, cols: (-(-cols // p["BLOCK"]), 1), lesson="01", bench=False))
register(Spec("serial", "One thread for the whole matrix", "simple.cu", "serial<{T}>",
              tile=lambda p: (1, 1), block=lambda p: (1, 1), grid=lambda p, rows, cols: (1, 1),
              lesson="01", bench=False), DEMOS)
register(Spec("naive_row", "Naive: read rows, write columns", "naive.cu", "naive_row<{T}>",
              tile=lambda p: (p["BX"], p["BY"]), block=lambda p: (p["BX"], p["BY"]),
              defaults=dict(BX=32, BY=8), lesson="03"))
register(Spec("naive_col", "Naive: read columns, write rows", "naive.cu", "naive_col<{T}>",
              tile=lambda p: (p["BX"], p["BY"]), block=lambda p: (p["BX"], p["BY"]),
              defaults=dict(BX=32, BY=8), swap_grid=True, lesson="03"))
register(Spec("tile", "Shared-memory tile", "tile.cu", "tile<{T}, {TILE}, {BLOCK_ROWS}, {PAD}>",
              tile=_square, block=_tile_block, defaults=dict(TILE=32, BLOCK_ROWS=32, PAD=0), lesson="04"))
register(Spec("padded", "Shared-memory tile, padded by one", "tile.cu", "tile<{T}, {TILE}, {BLOCK_ROWS}, {PAD}>",
              tile=_square, block=_tile_block, defaults=dict(TILE=32, BLOCK_ROWS=32, PAD=1), lesson="05"))
register(Spec("rect", "32x16 block, remapped read-out (CUDA_Freshman)", "rect.cu", "rect<{T}, {BX}, {BY}, {PAD}>",
              tile=lambda p: (p["BX"], p["BY"]), block=lambda p: (p["BX"], p["BY"]),
              defaults=dict(BX=32, BY=16, PAD=0), lesson="05", check=lambda p, d: _max_threads(p["BX"] * p["BY"])))
register(Spec("swizzle", "XOR-swizzled tile, no padding", "swizzle.cu", "swizzle<{T}, {TILE}, {BLOCK_ROWS}>",
              tile=_square, block=_tile_block, defaults=dict(TILE=32, BLOCK_ROWS=8), lesson="05",
              check=lambda p, d: None if p["TILE"] & (p["TILE"] - 1) == 0 else "TILE must be a power of two"))
register(Spec("padded_32x8", "Padded tile, 32x8 threads (4 elements each)", "tile.cu",
              "tile<{T}, {TILE}, {BLOCK_ROWS}, {PAD}>",
              tile=_square, block=_tile_block, defaults=dict(TILE=32, BLOCK_ROWS=8, PAD=1), lesson="06"))
register(Spec("padded_32x16", "Padded tile, 32x16 threads (2 elements each)", "tile.cu",
              "tile<{T}, {TILE}, {BLOCK_ROWS}, {PAD}>",
              tile=_square, block=_tile_block, defaults=dict(TILE=32, BLOCK_ROWS=16, PAD=1), lesson="06"))
register(Spec("unrolled", "Two tiles per 32x16 block (CUDA_Freshman's unrolling)", "unrolled.cu",
              "unrolled<{T}, {BX}, {BY}, {UNROLL}, {PAD}>",
              tile=lambda p: (p["BX"] * p["UNROLL"], p["BY"]), block=lambda p: (p["BX"], p["BY"]),
              defaults=dict(BX=32, BY=16, UNROLL=2, PAD=2), lesson="06",
              check=lambda p, d: _max_threads(p["BX"] * p["BY"])))


def _vec_check(p, dtype):
    v = 16 // dtype.itemsize
    if p["TILE"] % v:
        return f"TILE = {p['TILE']} is not a whole number of {v}-element (16-byte) vectors"
    return _max_threads(p["TILE"] // v * p["BLOCK_ROWS"])


register(Spec("vec", "16-byte (float4) loads and stores, 32x32 tile", "vec.cu", "vec<{T}, {TILE}, {BLOCK_ROWS}, {PAD}>",
              tile=_square, block=lambda p: (p["TILE"] // p["_V"], p["BLOCK_ROWS"]),
              defaults=dict(TILE=32, BLOCK_ROWS=32, PAD=0), lesson="07", check=_vec_check))
register(Spec("packed", "8/16-bit elements as 32-bit words, __byte_perm", "packed.cu", "packed<{T}, {BLOCK_ROWS}, {PAD}>",
              tile=lambda p: (32 * p.get("_E", 1), 32), block=lambda p: (32, p["BLOCK_ROWS"]),
              defaults=dict(BLOCK_ROWS=8, PAD=1), lesson="09",
              check=lambda p, d: None if 32 % p["BLOCK_ROWS"] == 0 else "BLOCK_ROWS must divide 32"))


def _fast_check(p, dtype):
    s, tr, tc = dtype.itemsize, p["TR"], p["TC"]
    if tc * s % 16:
        return f"TC * {s} bytes must be a multiple of 16 (whole 16-byte chunks per tile row)"
    need = (tr + 16 // s) * tc * s            # the tile and the halo rows for misaligned shapes
    if need > 48 * 1024:
        return f"a {tr}x{tc} tile of {s}-byte elements needs {need} bytes of shared memory; 48 KiB is the limit"
    unit = max(s, 4)
    rg, pu, nb = 16 // s, tc // (unit // s), 128 // unit        # fast.cu's RG, PU, NB
    g = min(8, tr // rg)
    if tr % rg or g < 1 or g & (g - 1) or (tr // rg) % g or pu % (32 // g) or rg * pu % nb:
        return (f"a {tr}x{tc} tile of {s}-byte elements does not split into fast.cu's row groups of {rg} rows "
                f"(TR a multiple of {rg}; TR and TC powers of two; a wider tile for this TR)")
    if p["THREADS"] % 32 or not 32 <= p["THREADS"] <= 1024:
        return "THREADS must be a multiple of 32, at most 1024"
    if p["MINB"] < 1 or p["MINB"] * p["THREADS"] > 2048:
        return f"MINB = {p['MINB']} blocks of {p['THREADS']} threads do not fit on an SM (2048 threads)"
    return None


_FAST = dict(TR=64, TC=64, THREADS=256, SWZ=1, GROUP=1, CACHE=0, MINB=4)
register(Spec("vec64", "64x64 tile, 16-byte accesses, swizzled (conflict-free)", "fast.cu",
              "fast<{T}, {TR}, {TC}, {THREADS}, {SWZ}, {GROUP}, {CACHE}, {MINB}>",
              tile=lambda p: (p["TC"], p["TR"]), block=lambda p: (p["THREADS"], 1),
              defaults=dict(_FAST), lesson="07", check=_fast_check))
register(Spec("fast", "Fastest: 16-byte accesses, swizzled tile, tuned per dtype", "fast.cu",
              "fast<{T}, {TR}, {TC}, {THREADS}, {SWZ}, {GROUP}, {CACHE}, {MINB}>",
              tile=lambda p: (p["TC"], p["TR"]), block=lambda p: (p["THREADS"], 1),
              defaults=dict(_FAST), lesson="11", check=_fast_check,
              dtype_defaults=lambda d: {1: dict(TR=128, TC=128), 2: dict(TR=128, TC=128)}.get(d.itemsize, {})))
register(Spec("aos", "Structs of I elements through shared memory (Giles)", "aos.cu", "aos<{T}, {I}, {WARPS}, {MAP}>",
              tile=lambda p: (p["I"], 32 * p["WARPS"]), block=lambda p: (32, p["WARPS"]),
              defaults=dict(I=6, WARPS=4, MAP=1), lesson="08",
              check=lambda p, d: None if p["MAP"] in (0, 1, 2) and p["I"] >= 1 else "I >= 1 and MAP in 0, 1, 2"))


def _warp_check(p, dtype):
    warps = p["WX"] * p["WY"]
    pitch = 32 + max(1, 4 // dtype.itemsize)          # warp_tile.cu's PITCH
    need = warps * 32 * pitch * dtype.itemsize
    if need > 48 * 1024:
        return (f"{warps} warp tiles of 32x{pitch} {dtype.itemsize}-byte elements need {need} bytes of shared memory; "
                f"48 KiB is the limit (fewer warps per block)")
    return _max_threads(32 * warps)


register(Spec("warp", "A 32x32 tile per warp, __syncwarp only (no block barrier)", "warp_tile.cu",
              "warp_tile<{T}, {WX}, {WY}>", tile=lambda p: (32 * p["WX"], 32 * p["WY"]),
              block=lambda p: (32, p["WX"] * p["WY"]), defaults=dict(WX=1, WY=4), lesson="10", check=_warp_check))


def _pipe_grid(p, rows, cols):
    """warp_pipe: BLOCKS blocks loop over all 32x32 tiles; fewer when there are fewer tiles than warps."""
    tiles = -(-rows // 32) * -(-cols // 32)
    return max(1, min(p["BLOCKS"], -(-tiles // p["WARPS"]))), 1


register(Spec("warp_pipe", "Warp tiles, loads of the next tile in flight during the stores", "warp_tile.cu",
              "warp_pipe<{T}, {WARPS}>", tile=lambda p: (32, 32), block=lambda p: (32, p["WARPS"]), grid=_pipe_grid,
              defaults=dict(WARPS=4, BLOCKS=1056), lesson="10",
              check=lambda p, d: _warp_check(dict(WX=p["WARPS"], WY=1), d)))

def _sector_check(p, dtype):
    s, se = dtype.itemsize, 32 // dtype.itemsize
    if p["TC"] % 32 or p["TR"] % se:
        return f"TC must be a multiple of 32 and TR of {se} (the {s}-byte elements of one sector)"
    nr = p["TR"] + se - 1                        # rows with the halo
    if s < 4 and p["TC"] * s != 128:
        return f"for {s}-byte elements TC must be {128 // s} (a 128-byte tile row: one word per lane)"
    need = p["TC"] * ((nr * s + 3) // 4 + 3) * 4 if s < 4 else nr * (p["TC"] + 1) * s
    if need > 48 * 1024:
        return f"a {p['TR']}x{p['TC']} tile with {se - 1} halo rows needs {need} bytes of shared memory; 48 KiB is the limit"
    return _max_threads(32 * p["BY"])


register(Spec("sector", "Stores moved to 32-byte sector boundaries (misaligned rows)", "sector_tile.cu",
              "sector_tile<{T}, {TR}, {TC}, {BY}>", tile=lambda p: (p["TC"], p["TR"]), block=lambda p: (32, p["BY"]),
              defaults=dict(TR=64, TC=64, BY=8), lesson="10", check=_sector_check,
              dtype_defaults=lambda d: {1: dict(TR=320, TC=128, BY=16), 2: dict(TR=224, TC=64)}.get(d.itemsize, {})))

register(Spec("vec_out", "Padded 32x32 tile, 32x4 threads, one vector store each where out's rows allow",
              "vec_out.cu", "vec_out<{T}, {TILE}, {BLOCK_ROWS}, {PAD}>", tile=_square, block=_tile_block,
              defaults=dict(TILE=32, BLOCK_ROWS=4, PAD=1), lesson="10",
              dtype_defaults=lambda d: {1: dict(PAD=4), 2: dict(PAD=2)}.get(d.itemsize, {}),
              check=lambda p, d: None if p["TILE"] % 8 == 0 and (p["TILE"] // min(8, 16 // d.itemsize)) % p["BLOCK_ROWS"] == 0
              else "TILE must be a multiple of 8 and BLOCK_ROWS divide its stores per row"))


def _pieces_check(p, dtype):
    t, g = p["TILE"], p["G"]
    if t % 8 or g < 1 or (t // 8) % g or 32 % g:
        return f"TILE must be a multiple of 8 and G (row groups of 8 per warp) divide both TILE / 8 = {t // 8} and 32"
    return _max_threads(t * t // 16)


register(Spec("pieces", "No tile in shared memory: 8x2 pieces transposed in registers (small matrices of bytes and halves)",
              "pieces.cu", "pieces<{T}, {TILE}, {G}>", tile=_square, block=lambda p: (32, p["TILE"] ** 2 // 512),
              defaults=dict(TILE=64, G=8), itemsizes=(1, 2), lesson="10", check=_pieces_check,
              dtype_defaults=lambda d: {2: dict(TILE=32, G=4)}.get(d.itemsize, {})))


# ------------------------------------------------------------------------------------ notebook 12
# cp.async, the TMA, ldmatrix and shuffles; the TMA kernels take tensor maps (maps=) and refuse
# shapes whose rows are not whole 16-byte pieces (shapes=)
def _tma_maps(inp, out=None, swizzle=128):
    return lambda p, d: dict(inp=inp(p, d), out=out(p, d) if out else None, swizzle=p.get("SW", swizzle))


def _row(p, d):
    """Elements in one 128-byte (or swizzle-span) box row."""
    return (p.get("SW") or 128) // d.itemsize


def _cdiv(a, b):
    return -(-a // b)


def _pitches(p, rows, cols, dtype):
    """The TMA reads rows of `in` and (through a map or 16-byte stores) writes rows of `out`: both
    pitches must be multiples of 16 bytes."""
    s = dtype.itemsize
    if cols * s % 16 or rows * s % 16:
        return (f"a {rows}x{cols} matrix of {s}-byte elements has rows of {cols * s} bytes and its transpose rows "
                f"of {rows * s}: the TMA kernels need both to be multiples of 16 bytes")
    return None


register(Spec("tma_copy", "TMA copy: a box in, the same box out (the TMA's ceiling)", "tma.cu", "tma_copy<{T}, {SW}>",
              tile=lambda p: (_row(p, p["_D"]), 32), block=lambda p: (128, 1), defaults=dict(SW=128), is_copy=True,
              lesson="12", shapes=_pitches, maps=_tma_maps(lambda p, d: (32, _row(p, d)), lambda p, d: (32, _row(p, d)))))
register(Spec("tma", "TMA box in (swizzled 128 B), 4x4..16x16 register transposes, 16-byte stores", "tma.cu",
              "tma_tile<{T}, {BOX_R}, {WARPS}, {SW}>", tile=lambda p: (_row(p, p["_D"]), p["BOX_R"]),
              block=lambda p: (32 * p["WARPS"], 1), defaults=dict(BOX_R=64, WARPS=4, SW=128), lesson="12",
              dtype_defaults=lambda d: {2: dict(BOX_R=128)}.get(d.itemsize, {}),
              check=lambda p, d: None if p["SW"] in (0, 128) else "tma_tile reads 128-byte box rows: SW = 0 or 128",
              shapes=_pitches, maps=_tma_maps(lambda p, d: (p["BOX_R"], _row(p, d)))))
register(Spec("tma_both", "TMA in and out, the tile turned around element by element", "tma.cu",
              "tma_both<{T}, {SW}>", tile=lambda p: (_row(p, p["_D"]), _row(p, p["_D"])), block=lambda p: (256, 1),
              defaults=dict(SW=128), lesson="12", bench=False,
              shapes=_pitches, maps=_tma_maps(lambda p, d: (_row(p, d), _row(p, d)), lambda p, d: (_row(p, d), _row(p, d)))))
register(Spec("tma_out", "TMA in and out through two swizzled boxes, conflict-free both ways", "tma_fast.cu",
              "tma_out<{T}, {WARPS}, {NB}>", tile=lambda p: (128 // p["_S"], p["NB"] * 128 // p["_S"]),
              block=lambda p: (32 * p["WARPS"], 1), defaults=dict(WARPS=4, NB=2), lesson="12",
              dtype_defaults=lambda d: {1: dict(NB=1)}.get(d.itemsize, {}),
              check=lambda p, d: None if 2 * p["NB"] * 128 * 128 <= 48 * 1024 * d.itemsize else
              f"NB = {p['NB']} boxes in and out need more than 48 KiB of shared memory",
              shapes=_pitches, maps=_tma_maps(lambda p, d: (128 // d.itemsize,) * 2, lambda p, d: (128 // d.itemsize,) * 2)))
register(Spec("tma_pipe", "TMA boxes through a ring of STAGES stages, persistent blocks", "tma_fast.cu",
              "tma_pipe<{T}, {BOX_R}, {WARPS}, {STAGES}, {ORDER}>", tile=lambda p: (128 // p["_S"], p["BOX_R"]),
              block=lambda p: (32 * p["WARPS"], 1), defaults=dict(BOX_R=64, WARPS=4, STAGES=3, ORDER=0, BPS=8),
              lesson="12", grid=lambda p, rows, cols: (min(_cdiv(cols, 128 // p["_S"]) * _cdiv(rows, p["BOX_R"]),
                                                              132 * p["BPS"]), 1),
              shapes=_pitches, maps=_tma_maps(lambda p, d: (p["BOX_R"], 128 // d.itemsize))))
register(Spec("async", "Padded tile filled by cp.async, STAGES tiles in flight per block", "async_tile.cu",
              "async_tile<{T}, 32, 8, {STAGES}, {TILES}>", tile=lambda p: (32, 32 * p["TILES"]),
              block=lambda p: (32, 8), defaults=dict(STAGES=2, TILES=4), lesson="12"))
register(Spec("shuffle", "A 32x32 tile per warp, turned around in registers by __shfl_xor_sync", "shuffle.cu",
              "shuffle<{T}, {WARPS}>", tile=lambda p: (32, 32 * p["WARPS"]), block=lambda p: (32, p["WARPS"]),
              defaults=dict(WARPS=4), lesson="12"))
register(Spec("ldsm", "16-bit 8x8 blocks moved by ldmatrix.trans + stmatrix", "ldsm.cu", "ldsm<{T}, {THREADS}>",
              tile=lambda p: (64, 64), block=lambda p: (p["THREADS"], 1), defaults=dict(THREADS=256), itemsizes=(2,),
              lesson="12", shapes=lambda p, r, c, d: None if r % 8 == 0 and c % 8 == 0 else
              f"ldsm moves whole 16-byte rows of 8 elements: {r}x{c} is not a multiple of 8 both ways"))


def _band_shapes(p, rows, cols, dtype):
    need = p["R"] * cols * dtype.itemsize
    return None if need <= 227 * 1024 else (f"band keeps {p['R']} whole rows in shared memory: {need} bytes for rows "
                                            f"of {cols} elements, more than the 227 KiB a block can have")


register(Spec("band", "R whole rows per block, one bulk copy (cp.async.bulk), pieces of R elements out", "band.cu",
             "band<{T}, {R}, {THREADS}>", tile=lambda p: (1, p["R"]), block=lambda p: (p["THREADS"], 1),
             defaults=dict(R=8, THREADS=256), lesson="12",
             dtype_defaults=lambda d: {4: dict(R=4), 8: dict(R=2)}.get(d.itemsize, {}),
             check=lambda p, d: None if p["R"] * d.itemsize in (4, 8, 16) else "R * sizeof(T) must be 4, 8 or 16 bytes",
             grid=lambda p, rows, cols: (_cdiv(rows, p["R"]), 1),
             shapes=_band_shapes, shared=lambda p, d, rows, cols: p["R"] * cols * d.itemsize))
