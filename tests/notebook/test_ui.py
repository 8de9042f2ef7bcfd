"""The notebook-facing API: %%cuda, figures, explorers, the bandwidth model, the banner, and what
a notebook stores (figure JSON only: no plotly.js, no base64)."""
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import course_lib as cl
from course_lib.transposes import backend, model
from course_lib.notebook import draw, magic, palette, widgets
from course_lib.teach import exercises
from course_lib.compile import nvrtc
from course_lib import transposes
from course_lib.sim.results.metrics import shared_wavefronts

SIM = cl.Simulator()


@pytest.fixture(scope="module")
def ip():
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()          # the one other test modules may have made already
    cl.load_ipython_extension(shell)
    return shell


@pytest.fixture(scope="module")
def runs():
    """One small simulated run per kernel the figures and the model talk about."""
    return {k: SIM.run(k, shape=(64, 64)) for k in ("copy", "naive_row", "naive_col", "tile", "padded", "padded_32x8")}


# ------------------------------------------------------------------------------------ %%cuda

SCALE = "__global__ void scale(float* a, int n)\n{\n    int i = threadIdx.x;\n    if (i < n) a[i] *= K;\n}\n"


def test_magic_compiles_and_binds_every_kernel(ip, capsys):
    res = ip.run_cell("%%cuda -DK=3 --name mod\n" + SCALE + 'extern "C" __global__ void other(int* p) { p[0] = 1; }\n',
                      store_history=True)
    assert res.success
    assert isinstance(ip.user_ns["scale"], cl.Function) and isinstance(ip.user_ns["other"], cl.Function)
    assert isinstance(ip.user_ns["mod"], cl.RawModule)
    assert "compiled: scale(float* a, int n); other(int* p)" in capsys.readouterr().out
    a = np.ones(8, np.float32)
    ip.user_ns["scale"].simulate(1, 8, (a, np.int32(5)))
    assert a.tolist() == [3] * 5 + [1] * 3


def test_magic_compile_error_is_short_with_line_column_and_caret(ip, capsys):
    res = ip.run_cell("%%cuda\n__global__ void bad(float* a)\n{\n    a[0] = b;\n}\n", store_history=True)
    assert isinstance(res.error_in_exec, cl.CompileError)
    out = capsys.readouterr().out
    assert "Traceback" not in out and "raised by" not in out and len(out.splitlines()) <= 5
    # line 4 of the cell as the student sees it (the %%cuda line is line 1)
    m = re.search(r"bad\.cu, line 4, column 12", out)
    assert m and '"b" is undefined' in out
    caret_line = next(l for l in out.splitlines() if l.strip() == "^")
    code_line = next(l for l in out.splitlines() if "a[0] = b;" in l)
    assert code_line[caret_line.index("^")] == "b"


def test_magic_templates_and_instantiations(ip, capsys):
    cell = "template <typename T, int K>\n__global__ void fill(T* a) { a[threadIdx.x] = K; }\n"
    assert ip.run_cell('%%cuda -i "f7=fill<float, 7>" -q\n' + cell, store_history=True).success
    assert capsys.readouterr().out == ""
    assert isinstance(ip.user_ns["f7"], cl.Function)
    tmpl = ip.user_ns["fill"]
    assert isinstance(tmpl, magic.Template)
    a = np.zeros(4, np.int32)
    tmpl[np.int32, 2].simulate(1, 4, (a,))
    assert a.tolist() == [2, 2, 2, 2]


def test_magic_rerun_is_cached_and_bad_options_explain_themselves():
    m1, _ = magic.compile_cell("-DK=2", SCALE)
    m2, _ = magic.compile_cell("-DK=2", SCALE)
    assert m1 is m2
    with pytest.raises(magic.MagicUsageError, match="does not understand 'bogus'"):
        magic.compile_cell("bogus", SCALE)
    with pytest.raises(magic.MagicUsageError, match="needs a value"):
        magic.compile_cell("--name", SCALE)


# ------------------------------------------------------------------------------------ figures

def test_sector_picture_coalesced_vs_strided(runs):
    coalesced = draw.sectors(runs["tile"].sim, op="st")
    strided = draw.sectors(runs["naive_row"].sim, op="st")
    for fig, n in ((coalesced, 4), (strided, 32)):
        lanes, sectors = fig.data[0].x, fig.data[0].y
        assert sorted(lanes) == list(range(32)) and len(set(sectors)) == n
        assert f"{n} sector(s)" in fig.layout.title.text
    assert "(100%)" in coalesced.layout.title.text and "(12%)" in strided.layout.title.text
    assert list(coalesced.layout.yaxis.categoryarray) == ["+0 B", "+32 B", "+64 B", "+96 B"]
    stride8 = draw.sectors(addresses=np.arange(32) * 4 * 8)
    assert len(set(stride8.data[0].y)) == 32 and stride8.layout.yaxis.categoryarray[1] == "+32 B"


def test_bank_picture_highlights_conflicts(runs):
    bad = draw.banks(runs["tile"].sim, op="ld")
    served, waits = bad.data
    assert len(served.x) == 1 and len(waits.x) == 31 and set(waits.x) == {0}    # all 32 lanes in bank 0
    assert waits.marker.color == draw.BAD and sorted(waits.y) == list(range(1, 32))
    assert "32 wavefront(s), 31 bank conflict(s) — 32-way" in bad.layout.title.text
    good = draw.banks(runs["padded"].sim, op="ld")
    assert len(good.data[0].x) == 32 and len(good.data[1].x) == 0 and "conflict-free" in good.layout.title.text
    quarter = draw.banks(addresses=16 * np.arange(32), width=16, op="st")
    assert len(quarter.data) == 8 and [len(t.x) for t in quarter.data[::2]] == [32] * 4   # four quarter-warps


@pytest.mark.parametrize("width", [4, 8, 16])
def test_bank_map_agrees_with_the_simulator_metrics(width):
    rng = np.random.default_rng(width)
    for trial in range(200):
        stride = int(rng.integers(0, 40))
        base = width * (np.arange(32) * stride + int(rng.integers(0, 8)))
        if trial % 3 == 0:
            base = width * rng.integers(0, 64, 32)
        if trial % 5 == 0:
            base[rng.random(32) < 0.3] = -1
        for is_load in (True, False):
            phases = draw.bank_map(base, width, is_load)
            wf, _, _ = shared_wavefronts(base.reshape(1, 32), (base >= 0).reshape(1, 32), width, is_load)
            assert sum(p["cost"] for p in phases) == wf == draw.bank_cost(base, width, "ld" if is_load else "st")[0]


def test_bandwidth_bars_say_modelled_or_measured(runs):
    fig = draw.bandwidth(list(runs.values()))
    assert "MODELLED for H100" in fig.layout.title.text
    assert list(fig.data[0].y) == list(runs) and all(s == "/" for s in fig.data[0].marker.pattern.shape)
    measured = draw.bandwidth({"copy": 2900.0, "naive": 900.0}, measured=True, device="NVIDIA H100", ceiling=2900)
    assert "measured on NVIDIA H100" in measured.layout.title.text
    assert "31% of cudaMemcpy" in measured.data[0].text[1]


def test_listing_and_table_have_text_and_html(runs):
    lst = draw.listing(runs["naive_row"].sim)
    text, html_ = repr(lst), lst._repr_html_()
    assert "global st: 32.0 sectors/req" in text and "__global__ void naive_row" in text
    assert "<pre" in html_ and palette.BAD in html_ and len(html_) < 4000
    tab = draw.table({k: runs[k] for k in ("tile", "padded")}, model_gpu="H100")
    assert "32.0" in repr(tab) and "<table>" in tab._repr_html_() and "model GB/s (H100)" in repr(tab)


# ------------------------------------------------------------------------------------ widgets

def _padding_explorer():
    return widgets.Explorer(
        compute=lambda PAD, TILE: SIM.run("tile", TILE=TILE, BLOCK_ROWS=8, PAD=PAD, shape=(32, 32)).sim,
        figures=lambda run, **p: [draw.banks(run, op="ld"), draw.table({"tile": run})],
        controls=dict(PAD=range(0, 5), TILE=32))


def test_explorer_updates_its_chart_when_a_control_moves(capsys):
    ex = _padding_explorer()
    assert set(ex.controls) == {"PAD"} and ex.params == {"TILE": 32, "PAD": 0}
    before = ex.items[0].layout.title.text
    ex.set(PAD=1)
    assert ex.items[0].layout.title.text != before and "conflict-free" in ex.items[0].layout.title.text
    assert "1.0" in repr(ex.items[1])
    ex.set(PAD=2)
    assert "2-way" in ex.items[0].layout.title.text


def test_explorer_reports_errors_and_keeps_the_chart(capsys):
    ex = widgets.Explorer(lambda n: 1 / n, lambda v, **p: draw.sweep([0, 1], {"v": [v, v]}), dict(n=[1, 0]))
    ex.set(n=0)
    assert "ZeroDivisionError" in ex.status.value and list(ex.items[0].data[0].y) == [1.0, 1.0]


def test_sweep_runs_every_point_with_a_progress_bar(capsys):
    sw = widgets.Sweep(lambda stride, size: len(np.unique((np.arange(32) * stride * size) >> 5)),
                       over=("stride", [1, 2, 4, 8, 32]),
                       figures=lambda xs, ys, **p: draw.sweep(xs, {"sectors/request": ys}),
                       controls=dict(size=[4, 8]))
    assert sw.value == [4, 8, 16, 32, 32] and sw.progress.value == sw.progress.max == 5
    sw.set(size=8)
    assert list(sw.items[0].data[0].y) == [8, 16, 32, 32, 32]


def test_figure_widget_mode_updates_in_place(capsys):
    pytest.importorskip("anywidget")
    widgets.use_figure_widget(True)
    try:
        ex = _padding_explorer()
        fw = ex.views[0].fw
        ex.set(PAD=1)
        assert ex.views[0].fw is fw and "conflict-free" in fw.layout.title.text
    finally:
        widgets.use_figure_widget(False)


# ------------------------------------------------------------------------------------ model

# measured on an H100 SXM, 8192 x 8192, GB/s (benchmarks/results/bench_h100_first.txt)
H100 = {"float32": dict(copy=2795, naive_row=437, naive_col=1599, tile=982, padded=1638, padded_32x8=2775),
        "float64": dict(copy=2983, naive_row=710, naive_col=2202, tile=1797, padded=2453, padded_32x8=2907)}


@pytest.mark.parametrize("dtype", list(H100))
def test_model_ranks_the_course_kernels_like_the_h100(dtype):
    measured = H100[dtype]
    runs = {k: SIM.run(k, dtype=np.dtype(dtype), shape=(128, 128)).sim for k in measured}
    modelled = {k: model.predict(r, "H100") for k, r in runs.items()}
    assert sorted(measured, key=measured.get) == sorted(modelled, key=modelled.get)
    assert all(abs(modelled[k] / v - 1) < 0.35 for k, v in measured.items()), modelled
    assert model.bottleneck(runs["tile"]) == "sm" and model.bottleneck(runs["copy"]) == "dram"


def test_model_status_states_what_the_latest_h100_run_shows():
    """model.STATUS is quoted in notebook 00: its error and ranking figures must be the ones the
    committed measurements give (benchmarks/calibrate_model.py computes them)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import calibrate_model
    from course_lib.lessons import measured
    bench = measured.first_bench(Path(__file__).resolve().parents[2] / "benchmarks/results/h100_2026-11-23/b_bench.txt")
    runs = calibrate_model.simulate_all(bench, 256)
    s = calibrate_model.summary(bench, runs)
    apart, bad = sum(s["apart"].values()), sum(len(v) for v in s["misordered"].values())
    assert f"the {len(runs)} of 2026-11-23" in model.STATUS
    assert f"typical error {s['typical']:.0%}, largest {s['largest']:.0%}" in model.STATUS
    assert f"of the {apart} kernel pairs more than 10% apart on the H100 the model orders all but {bad} " in model.STATUS


def test_model_scales_with_the_gpu(runs):
    copy = runs["copy"].sim
    assert model.predict(copy, "T4") < model.predict(copy, "A100") < model.predict(copy, "H100") <= model.copy_gbps("H100")
    assert runs["naive_col"].model_gbps > runs["naive_row"].model_gbps
    assert model.ranking({"a": 100, "b": 97, "c": 50}) == [["a", "b"], ["c"]]


def test_model_calibration_recovers_its_own_constants(runs):
    truth_gpu = model.GPUS["H100"].__class__(**{**model.GPUS["H100"].__dict__, "l2_gbps": 4200.0})
    truth = model.Knobs(l1_reuse=0.7, partial_store_cost=2.0, cycles_per_line=0.5, cycles_per_thread=1.5,
                        cycles_per_request=0.3, p=3.0)
    sims = {k: r.sim for k, r in runs.items()}
    measured = {k: model.predict(s, truth_gpu, truth) for k, s in sims.items()}
    g, k, report = model.calibrate(measured, sims, "H100")
    assert report.startswith("H100: typical error")
    assert all(abs(model.predict(sims[n], g, k) / v - 1) < 0.05 for n, v in measured.items())


# ------------------------------------------------------------------------------------ backends

def test_simulator_backend_and_banner():
    b = cl.default_backend()
    assert isinstance(b, cl.Simulator)          # conftest forces the simulator
    text = repr(cl.banner(b))
    assert text.startswith("CPU simulator: metrics are exact; times are not measured.")
    assert "modelled for an H100" in text and "<div" in cl.banner(b)._repr_html_()
    r = b.run("naive_row", shape=(64, 96))
    assert r.correct.ok and r.sim.ratio("global", "st") == 32.0 and r.gbps is None and r.model_gbps > 0
    assert "correct" in repr(r) and "a model, not a measurement" in repr(r)


def test_gpu_banner_text(monkeypatch):
    info = cl.gpu.DeviceInfo(name="NVIDIA H100 80GB HBM3", arch=90, sm_count=132, peak_bandwidth=3.352e12,
                            l2_bytes=50 << 20, max_threads_per_block=1024, max_block_dims=(1024, 1024, 64),
                            max_grid_dims=(2**31 - 1, 65535, 65535), shared_per_block=48 << 10,
                            shared_per_block_optin=227 << 10, memory_bytes=80 << 30)
    monkeypatch.setattr(cl.gpu, "info", lambda: info)
    gpu = cl.GPU()
    monkeypatch.setattr(gpu, "copy_gbps", lambda nbytes: 2900.0)
    assert repr(cl.banner(gpu)) == ("GPU: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs) · peak 3352 GB/s (datasheet) · "
                                    "copy 2900 GB/s measured (87% of peak)\n"
                                    "sm_90 (Hopper: H100, H200): notebooks 00-12 run entirely on this GPU")


def test_cell_kernel_runs_through_the_same_backend(ip):
    assert ip.run_cell("%%cuda -q\n" + NAIVE_CELL, store_history=True).success
    r = SIM.run(ip.user_ns["naive"], block=(32, 8), shape=(40, 70))
    assert r.name == "naive" and r.correct.ok and r.sim.ratio("global", "ld") <= 4.5
    with pytest.raises(cl.ArgumentError, match="block="):
        SIM.run(ip.user_ns["naive"])


NAIVE_CELL = ("__global__ void naive(float* out, const float* in, int rows, int cols)\n{\n"
              "    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;\n"
              "    if (x < cols && y < rows) out[(size_t)x * rows + y] = in[(size_t)y * cols + x];\n}\n")


@pytest.mark.skipif(not cl.gpu_available(), reason="needs an NVIDIA GPU; run with COURSE_LIB_BACKEND=gpu")
def test_gpu_backend_measures_and_checks():
    r = cl.GPU(shape=(2048, 2048), repeat=5).run("padded")
    assert r.correct.ok and r.gbps > 0 and 0 < r.frac_copy < 1.5 and "of copy" in repr(r)
    assert exercises.check("shared_tile", magic.compile_cell("", NAIVE_CELL.replace("naive", "transpose_tile"))[1]
                           ["transpose_tile"]).problems


# ------------------------------------------------------------------------------------ stored notebooks

@pytest.mark.slow          # executes a notebook with plotly in a kernel of its own
def test_a_notebook_stores_figure_json_only_and_stays_small(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    cells = [
        "import course_lib as cl, numpy as np\nbackend = cl.setup()",
        "%%cuda\n" + NAIVE_CELL,
        "r = backend.run(naive, block=(32, 8), shape=(64, 64))\ncl.draw.sectors(r.sim, op='st')",
        "cl.draw.banks(addresses=4 * 32 * np.arange(32))",
        "cl.draw.bandwidth([r])",
        "cl.draw.listing(r.sim)",
        "cl.widgets.Explorer(lambda PAD: backend.run('tile', BLOCK_ROWS=8, PAD=PAD, shape=(32, 32)).sim,\n"
        "                    lambda run, **p: [cl.draw.banks(run, op='ld'), cl.draw.table({'tile': run})],\n"
        "                    dict(PAD=range(0, 3)))",
        "cl.widgets.Sweep(lambda s: s * 2, over=('s', [1, 2, 3]), figures=lambda xs, ys, **p: cl.draw.sweep(xs, {'y': ys}))",
        "%%cuda\n__global__ void bad(float* a)\n{\n    a[0] = b;\n}",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.cells[-1].metadata["tags"] = ["raises-exception"]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    # nbclient's defaults, as a regeneration tool would run it (store_widget_state=False crashes
    # nbclient 0.11 on Output widgets); widget state then goes to metadata.widgets
    # 60 s a cell: a stall of nbclient on widget cells lasts until the timeout (jupyter/nbclient#312)
    nbclient.NotebookClient(nb, kernel_name="python3", allow_errors=True, timeout=60).execute()
    path = tmp_path / "t.ipynb"
    nbformat.write(nb, path)
    raw = path.read_text()
    assert len(raw) < 100_000, f"{len(raw)} bytes stored"
    assert len(json.dumps(nb.metadata.get("widgets", {}))) < 40_000
    assert "plotly.min" not in raw and "<script" not in raw and "bdata" not in raw
    kinds = [set(o.get("data", {})) for c in nb.cells for o in c.outputs]
    assert not any(k & {"image/png", "image/jpeg", "image/svg+xml"} for k in kinds)
    plotly_outputs = [o for c in nb.cells for o in c.outputs if "application/vnd.plotly.v1+json" in o.get("data", {})]
    assert len(plotly_outputs) == 3                       # the three figure cells, none from widgets
    for o in plotly_outputs:
        assert set(o["data"]) == {"application/vnd.plotly.v1+json"}
        assert len(json.dumps(o["data"]["application/vnd.plotly.v1+json"])) < 25_000
    banner = nb.cells[0].outputs[0]["data"]["text/plain"]
    assert banner.startswith("CPU simulator")
    err = nb.cells[-1].outputs[-1]
    assert err["output_type"] == "error" and err["ename"] == "CellCompileError"
    assert err["traceback"][0].startswith("\x1b[0;31mCompileError")
    assert any("^" in line for line in err["traceback"]) and len(err["traceback"]) <= 5
    assert not any("raised by" in line for line in err["traceback"])
    # explorers draw into widget state, never into the cell's outputs: nbval sees the same outputs
    widget_figures = json.dumps(nb.metadata["widgets"])
    assert widget_figures.count("application/vnd.plotly.v1+json") == 2 and "plotly.min" not in widget_figures
    done = subprocess.run([sys.executable, "-m", "pytest", "--nbval", str(path), "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
