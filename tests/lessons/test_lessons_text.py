"""The lesson helpers behind the teaching text of notebooks 05, 07, 10 and 11: dynamic shared
memory (banks.dynamic_tile), the ceiling in GB/s (measured.ratio_table unit="gbps"), misaligned
rows (shapes.row_pieces) and the line-by-line walk through the winners (walkthrough). Kernels are
read from the notebooks where a notebook defines them, so a notebook and its test cannot drift.
Simulator only; no timings."""
import json
from pathlib import Path

import numpy as np
import pytest

import course_lib as cl
from course_lib.notebook import magic
from course_lib.lessons import banks, measured, shapes, walkthrough
from course_lib.sim.results import metrics

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SIM = cl.Simulator()


def cell_kernel(notebook: str, kernel: str):
    nb = json.loads((NOTEBOOKS / notebook).read_text())
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and src.startswith("%%cuda") and f"void {kernel}(" in src:
            line, _, body = src.partition("\n")
            return magic.compile_cell(line[len("%%cuda"):].strip(), body)[1][kernel]
    raise AssertionError(f"{notebook} has no %%cuda cell defining {kernel}")


# ---------------------------------------------------------------- 05: extern __shared__, padded

@pytest.fixture(scope="module")
def tile_dynamic():
    return cell_kernel("05_bank_conflicts.ipynb", "tile_dynamic")


@pytest.mark.parametrize("tile,pad,wavefronts", [(32, 0, 32), (32, 1, 1), (64, 1, 1), (16, 1, 2), (32, 2, 2)])
@pytest.mark.parametrize("shape", [(192, 256), (100, 130), (1, 300), (300, 1)])
def test_dynamic_tile_is_right_on_every_shape_and_counts_like_the_static_one(tile_dynamic, tile, pad, wavefronts, shape):
    run, correct = banks.dynamic_tile(tile_dynamic, tile=tile, pad=pad, shape=shape)
    assert correct.ok, correct
    if shape == (192, 256):       # whole tiles: the column read costs exactly the static tile's wavefronts
        assert run.ratio("shared", "ld") == wavefronts


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dynamic_tile_other_dtypes(dtype):
    src = (NOTEBOOKS / "05_bank_conflicts.ipynb").read_text()
    assert "extern __shared__ float tile[]" in src
    code = '''template <typename T> __global__ void tdyn(T* out, const T* in, int rows, int cols, int pad)
    { extern __shared__ unsigned char raw[]; T* tile = reinterpret_cast<T*>(raw);
      const int T_ = blockDim.x, pitch = T_ + pad;
      int x = blockIdx.x * T_ + threadIdx.x, y = blockIdx.y * T_ + threadIdx.y;
      for (int j = 0; j < T_; j += blockDim.y) if (x < cols && y + j < rows) tile[(threadIdx.y + j) * pitch + threadIdx.x] = in[(size_t)(y + j) * cols + x];
      __syncthreads();
      x = blockIdx.y * T_ + threadIdx.x; y = blockIdx.x * T_ + threadIdx.y;
      for (int j = 0; j < T_; j += blockDim.y) if (x < rows && y + j < cols) out[(size_t)(y + j) * rows + x] = tile[threadIdx.x * pitch + threadIdx.y + j]; }'''
    name = f"tdyn<{'float' if dtype == np.float32 else 'double'}>"
    k = cl.RawModule(code=code, name_expressions=[name]).get_function(name)
    run, correct = banks.dynamic_tile(k, tile=32, pad=1, shape=(100, 130), dtype=dtype)
    assert correct.ok


def test_dynamic_tile_with_the_unpadded_size_is_an_out_of_bounds_error(tile_dynamic):
    with pytest.raises(cl.MemoryAccessError) as err:
        banks.dynamic_tile(tile_dynamic, tile=32, pad=1, shared_bytes=32 * 32 * 4)
    assert "shared memory" in str(err.value) and "element 1024" in str(err.value)


# ---------------------------------------------------------------- 07/11: the ceiling in GB/s

def test_ratio_table_in_gbps_shows_the_memcpy_row():
    run = measured.load("h100_2026-11-23/transpose.json")
    text = repr(measured.ratio_table(run, ["memcpy", "copy_shared", "vec64"], dtypes=["float32"],
                                     sizes=[(8192, 2048)], unit="gbps"))
    rows = {line.split()[0]: line.split()[1] for line in text.splitlines()[2:]}
    case = next(c for c in run["cases"] if c["dtype"] == "float32" and (c["rows"], c["cols"]) == (8192, 2048))
    by = {r["name"]: r for r in case["results"]}
    assert rows["memcpy"] == f"{by['memcpy']['gbps']:.0f}" and rows["vec64"] == f"{by['vec64']['gbps']:.0f}"
    assert by["copy_shared"]["gbps"] > by["memcpy"]["gbps"]      # why ratios above 1 appear
    with pytest.raises(ValueError):
        measured.ratio_table(run, ["copy"], unit="percent")


def test_best_vs_peers_keeps_only_the_sizes_asked_for():
    run = measured.load("h100_2026-11-23/transpose.json")
    text = repr(measured.best_vs_peers(run, sizes=[(8191, 8193)]))
    assert "8191x8193" in text and "8192x8192" not in text


# ---------------------------------------------------------------- 10: misaligned rows

def test_row_pieces_counts_five_sectors_in_two_lines_when_rows_start_anywhere():
    text = repr(shapes.row_pieces(SIM, ["copy", "padded_32x8"], [(256, 256), (255, 257)]))
    lines = [line.split() for line in text.splitlines()[2:]]
    aligned = [r for r in lines if r[1] == "256x256"]
    odd = [r for r in lines if r[1] == "255x257"]
    assert all(r[3:] == ["4.00", "1.00", "4.00", "1.00"] for r in aligned)
    # rows start 4r bytes past a sector: 28 of a block's 32 rows straddle 5 sectors, 31 of 32 two lines
    assert all(r[3] == r[5] == "4.88" and r[4] == r[6] == "1.97" for r in odd)


# ---------------------------------------------------------------- 07/11: walking through the winners

def test_excerpt_is_found_by_text_and_annotated():
    run = SIM.run("vec64")
    text = repr(walkthrough.excerpt(run, "Phase 1: all loads first", "__syncthreads();"))
    assert text.splitlines()[0].split()[1:4] == ["//", "Phase", "1:"]
    assert "__syncthreads();" in text.splitlines()[-1]
    assert "shared st: 4.0 wavefronts/req (no conflicts)" in text


def test_excerpt_rejects_missing_and_ambiguous_markers():
    run = SIM.run("vec64")
    with pytest.raises(ValueError, match="no line containing"):
        walkthrough.excerpt(run, "this text is in no kernel")
    with pytest.raises(ValueError, match="lines"):
        walkthrough.excerpt(run, "#pragma unroll")


@pytest.mark.parametrize("key,dtype,width", [("vec64", np.float32, 16), ("fast", np.uint8, 16),
                                             ("warp", np.float64, 8), ("warp", np.uint8, 1)])
def test_memory_lines_add_up_to_the_launch_metrics(key, dtype, width):
    run = SIM.run(key, dtype=dtype)
    assert run.correct.ok
    rows = walkthrough.memory_rows(run)
    m = run.sim.metrics
    for space, op, what in [("global", "ld", "sectors"), ("global", "st", "sectors"),
                            ("shared", "ld", "wavefronts"), ("shared", "st", "wavefronts")]:
        name = metrics.METRIC_NAMES[(space, op, what)]
        assert sum(r[what] for r in rows if r["space"] == space and r["op"] == op) == m[name]
    assert {r["width"] for r in rows if r["space"] == "global"} == {width}
    text = repr(walkthrough.memory_lines(run))
    assert all(str(r["line"]) in text for r in rows)


# ---------------------------------------------------------------- 03-11: the profiler commands

from course_lib.lessons import profiles  # noqa: E402


def test_every_notebook_from_03_on_has_an_h100_profile_and_its_ratios():
    secs = profiles.sections()
    assert {s.notebook for s in secs} == {f"{n:02d}" for n in range(3, 12)}
    assert all(s.command.startswith(("ncu ", "compute-sanitizer ")) and "python -m course_lib run" in s.command
               for s in secs)
    text = repr(profiles.show("03"))
    assert text.count("$ ncu --metrics") == 3
    assert "global stores: 32.00 sectors per request" in text and "==PROF==" not in text


def test_derived_numbers_come_from_the_counters():
    s = next(s for s in profiles.sections("10") if "8191" in s.command)
    m = profiles._metrics(s.output)
    ld = m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"][0] / m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"][0]
    assert f"global loads: {ld:.2f} sectors per request" in profiles.derived(s)
    t = m["gpu__time_duration.sum"]
    gbps = 2 * 8191 * 8193 * 4 / (t[0] * 1e-6) / 1e9
    assert t[1] == "us" and any(line.endswith(f"= {gbps:.0f} GB/s") for line in profiles.derived(s))


def test_racecheck_section_keeps_the_findings():
    text = repr(profiles.show("04", "racecheck"))
    assert "compute-sanitizer --tool racecheck" in text and "Race reported between Write access" in text
    assert "elements are wrong" in text and "RACECHECK SUMMARY" in text


def test_missing_profiles_say_not_recorded_yet(tmp_path):
    assert "not recorded yet" in repr(profiles.show("03", path=tmp_path / "none.txt"))
    assert "not recorded yet" in repr(profiles.show("12"))
    f = tmp_path / "p.txt"
    f.write_text("# header\n\n### 05 | x\n$ ncu --metrics a python -m course_lib run tile\nout\n(exit 0)\n")
    (s,) = profiles.sections(path=f)
    assert (s.notebook, s.what, s.command, s.output, s.exit) == ("05", "x", "ncu --metrics a python -m course_lib run tile", "out", 0)


def test_excerpt_after_finds_repeated_text():
    run = SIM.run("vec64")
    text = repr(walkthrough.excerpt(run, "for (int it = 0; it < N1; ++it) {", "__syncthreads();",
                                    after="v[it] = bytes_from(lo, hi, o);"))
    assert "shared st: 4.0 wavefronts/req" in text and "load<CACHE>" not in text


def test_file_excerpt_shows_a_header_by_text():
    text = repr(walkthrough.file_excerpt("pack.cuh", "void transpose4x4_b8", "}"))
    assert text.startswith("kernels/pack.cuh") and text.count("__byte_perm") == 4 and text.count("transpose2x2_b16(") == 2
    with pytest.raises(ValueError):
        walkthrough.file_excerpt("pack.cuh", "__byte_perm")          # on many lines
