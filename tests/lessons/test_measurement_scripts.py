"""The GPU measurement scripts behind the notebooks' numbers (benchmarks/latency.py, benchmarks/rounds.py),
as far as a machine without a GPU can check them: their arithmetic, the chains the pointer chase
follows, the cases each preset times, the JSON a run of rounds writes, the CUDA source compiling,
and that without a GPU they say so and exit 0."""
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import course_lib as cl
from course_lib import transposes

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def script(name):
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


latency = script("latency")
rounds = script("rounds")


# ---------------------------------------------------------------------------- latency.py

@pytest.mark.parametrize("block", [8, None])
def test_the_chase_visits_every_slot_once_in_the_order_asked(block):
    rng = np.random.default_rng(1)
    order = latency.visit_order(64, block, rng)
    assert sorted(order) == list(range(64))
    if block:       # random inside each block of 8 slots, the blocks in turn
        assert all(sorted(order[i:i + 8]) == list(range(i, i + 8)) for i in range(0, 64, 8))
    pos, val = latency.chain(order, 16)
    words = np.zeros(64 * 16, np.uint64)
    words[pos] = val
    i, seen = int(pos[0]), []
    for _ in range(64):
        seen.append(i // 16)
        i = int(words[i])
    assert seen == list(order) and i == int(pos[0])        # every slot once, then back to the start


def test_visit_order_refuses_partial_blocks():
    with pytest.raises(ValueError, match="whole blocks"):
        latency.visit_order(60, 8, np.random.default_rng(0))


def test_littles_law_in_bytes_per_sm():
    # 1.4 TB/s of loads over 132 SMs, 800 ns per load: about 8.5 KB requested per SM
    assert latency.little_bytes(1.4e12, 132, 800e-9) == pytest.approx(1.4e12 / 132 * 800e-9)
    assert 8000 < latency.little_bytes(1.4e12, 132, 800e-9) < 8600


def test_the_chase_source_compiles():
    mod = cl.RawModule(code=latency.SOURCE)
    for name in ("chase", "stamp", "spin"):
        assert mod.get_function(name).name == name


def test_latency_without_a_gpu_says_so(capsys):
    assert latency.main(["--out", "/tmp/never"]) == 0
    assert "no NVIDIA GPU" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        latency.main(["--background", "nope"])


# ---------------------------------------------------------------------------- rounds.py

def test_prose_preset_times_every_kernel_at_8192_and_the_compared_ones_elsewhere():
    cases = {(d, size): (labels, libs) for d, size, labels, libs in rounds.prose_cases(["f32", "u8"], rounds.tr.SIZES)}
    every = {k for k, s in transposes.SPECS.items() if s.bench}
    assert set(cases[("f32", (8192, 8192))][0]) == {k for k in every if 4 in transposes.SPECS[k].itemsizes}
    assert cases[("f32", (8192, 8192))][1]
    assert set(cases[("u8", (8192, 8192))][0]) == {k for k in every if 1 in transposes.SPECS[k].itemsizes}
    assert set(cases[("f32", (1000, 1030))][0]) == {k for k in rounds.CORE if 4 in transposes.SPECS[k].itemsizes}
    assert "warp_pipe" in cases[("f32", (8191, 8193))][0] and "warp_pipe" not in cases[("f32", (4096, 4096))][0]


def test_blocks_preset_labels_are_course_kernels_with_their_parameters():
    labels = rounds.block_labels()
    assert "rect[BX=32;BY=16;PAD=2]" in labels and "tile[TILE=32;BLOCK_ROWS=8;PAD=1]" in labels
    for label, key, params in rounds.tr.parse_kernels(",".join(labels)):
        t = transposes.kernel(key, np.float32, **params)
        assert t.block[0] * t.block[1] <= 1024, label
    assert all(not libs for *_, libs in rounds.block_cases(["f32"], [(8192, 8192)]))


def fake_case(r, name_ratio):
    results = [dict(name="memcpy", kind="copy", ms=1.0, gbps=100.0, ratio=1.0, correct=True, note="")]
    results += [dict(name=n, kind="course", ms=1 / q, gbps=100 * q, ratio=q, correct=True, note="")
                for n, q in name_ratio.items()]
    results.append(dict(name="torch", kind="peer", skipped="ImportError"))
    return dict(dtype="float32", rows=64, cols=64, copy_gbps=100.0 + r, results=results)


def test_rounds_keep_every_value_and_write_after_each_round(tmp_path, monkeypatch):
    calls = []

    def bench_size(rows, cols, dtype, keys, args):
        calls.append((rows, cols, [k[0] for k in keys], args.peers))
        n = len(calls)
        return fake_case(n, {"fast": 0.90 + 0.01 * n, "padded": 0.5})
    monkeypatch.setattr(rounds.tr, "bench_size", bench_size)
    out = tmp_path / "rounds_x.json"
    meta = dict(device="GPU X")
    rounds.run([("f32", (64, 64), ["fast", "padded"], False)], 3, 10, out, meta, log=open("/dev/null", "w"))
    assert calls == [(64, 64, ["fast", "padded"], False)] * 3
    data = json.loads(out.read_text())
    assert data["meta"]["rounds"] == 3
    (case,) = data["cases"]
    fast = next(r for r in case["results"] if r["name"] == "fast")
    assert fast["ratio"]["values"] == pytest.approx([0.91, 0.92, 0.93])
    assert (fast["ratio"]["median"], fast["ratio"]["min"], fast["ratio"]["max"]) == pytest.approx((0.92, 0.91, 0.93))
    assert case["copy_gbps"]["values"] == [101.0, 102.0, 103.0]
    assert next(r for r in case["results"] if r["name"] == "torch")["skipped"] == "ImportError"


def test_rounds_stop_before_the_budget_runs_out(tmp_path, monkeypatch):
    clock = iter(range(0, 1000, 40))       # every perf_counter() call: 40 s later
    monkeypatch.setattr(rounds.time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(rounds.tr, "bench_size", lambda *a: fake_case(0, {"fast": 0.9}))
    per_case = rounds.run([("f32", (64, 64), ["fast"], False)], 5, 10, tmp_path / "r.json", {}, budget=150,
                          log=open("/dev/null", "w"))
    assert 1 <= len(per_case[0]) < 5
    assert json.loads((tmp_path / "r.json").read_text())["meta"]["rounds"] == len(per_case[0])


def test_rounds_without_a_gpu_says_so_and_lists_its_cases(capsys):
    assert rounds.main(["prose", "--out", "/tmp/never"]) == 0
    assert "no NVIDIA GPU" in capsys.readouterr().out
    assert rounds.main(["blocks", "--list"]) == 0
    assert "rect[BX=8;BY=8;PAD=2]" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        rounds.main(["prose", "--dtype", "f128"])


# ---------------------------------------------------------------------------- mechanics.py (issue 35)

def test_mechanics_kernels_transpose_every_shape_in_every_order_and_path():
    """block order and the read-only path change which blocks run together and which load instruction
    reads in; never the result (simulated on awkward shapes, every element compared)."""
    mech = script("mechanics")
    assert mech.check() == []
    sass = {name: "".join(i["text"] for i in fn.simulate(*mech.launch(name, 40, 70), (
        np.zeros((70, 40), np.float32), np.ones((40, 70), np.float32), np.int32(40), np.int32(70)),
        progress=False).instructions if i["space"] == "global" and i["op"] == "ld")
        for name, fn in mech.functions().items() if name.startswith("col_")}
    assert [k for k, v in sass.items() if "nc" in v] == ["col_restrict", "col_ldg"]      # ld.global.nc: LDG.E.CONSTANT


def test_mechanics_lists_its_cases_and_without_a_gpu_says_so(capsys, monkeypatch):
    mech = script("mechanics")
    assert mech.main(["--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert "order float32 2048x2048: row-major, column-major, diagonal" in listed and len(listed) == 9
    monkeypatch.setenv("COURSE_LIB_BACKEND", "sim")
    assert mech.main(["order", "--size", "2048"]) == 0 and "no NVIDIA GPU" in capsys.readouterr().out


# ---------------------------------------------------------------------------- ldgsts_check.py

def test_ldgsts_check_launches_what_it_says_and_judges_repetitions(tmp_path):
    """benchmarks/ldgsts_check.py (issue 35; a GPU step of gpu_session.sh): every launch resolves to a kernel of
    its source with a grid that covers the shape; the verdict reads ncu's repetitions against the model."""
    mod = script("ldgsts_check")
    items = mod.launches(tmp_path)
    names = {i[2] for i in items if i[2]}
    assert {"column_in<float, 0>", "column_in<double, 0>", "chunk_column<128>", "zero_fill"} <= names
    assert {i[1] for i in items} == {"async_tile.cu", "ldgsts_probe.cu", "async_tile", "async_pipeline", "staged_copy"}
    for item in items:
        path, name, grid, block = mod._resolve(tmp_path, item)
        assert path.exists() and (name in path.read_text() or name.split("<")[0] in path.read_text())
        assert np.prod(grid) * np.prod(block) >= (item[3] * item[4] if item[1] == "staged_copy" else 32)
    assert mod.verdict(28, [28, 28, 28]) == "exact"
    assert mod.verdict(0, [24, 65, 30]) == "above, varies"
    assert mod.verdict(0, [24, 24, 24]) == "WRONG" and mod.verdict(31, [0, 0, 0]) == "WRONG"
