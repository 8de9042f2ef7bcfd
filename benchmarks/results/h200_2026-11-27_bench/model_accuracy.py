import sys; sys.path.insert(0, 'benchmarks')
import calibrate_model as cm
from course_lib.transposes import model
from course_lib.lessons import measured
from pathlib import Path
bench = measured.first_bench(Path('benchmarks/results/h200_2026-11-27_bench/b_bench.txt'))
import pickle, os
if os.path.exists("/tmp/runs.pkl"):
    runs = pickle.load(open("/tmp/runs.pkl","rb"))
else:
    runs = cm.simulate_all(bench, 256)
print(len(runs), "measurements")
for name in ("H200", "H100"):
    s = cm.summary(bench, runs, model.GPUS[name], model.KNOBS)
    mis = sum(len(v) for v in s['misordered'].values()); apart = sum(s['apart'].values())
    print(name, f"typical {s['typical']:.1%} largest {s['largest']:.1%} worst {s['worst']} misordered {mis} of {apart}")
old = measured.first_bench(Path('benchmarks/results/h100_2026-11-23/b_bench.txt'))
keys = {k for k, _ in old.rows if k not in cm.LEFT_OUT}
sub = {n: r for n, r in runs.items() if n[0] in keys}
print(sorted(keys))
for name in ("H200",):
    s = cm.summary(bench, sub, model.GPUS[name], model.KNOBS)
    mis = sum(len(v) for v in s['misordered'].values()); apart = sum(s['apart'].values())
    print(name, "same 16 kernels as the H100 status:", len(sub), f"typical {s['typical']:.1%} largest {s['largest']:.1%} worst {s['worst']} misordered {mis} of {apart}")
