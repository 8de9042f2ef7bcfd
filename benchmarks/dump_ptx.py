"""Write the PTX this machine's NVRTC emits for every course kernel and dtype into a folder.

    python benchmarks/dump_ptx.py DIR

Run on the GPU machine (NVRTC 13) to get fixtures that test the simulator on CUDA 13 PTX."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from course_lib.compile import nvrtc
from course_lib import transposes  # noqa: E402

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
print("NVRTC", nvrtc.nvrtc_version())
for key in transposes.SPECS:
    for dt in (np.float32, np.float64, np.float16, np.uint8):
        try:
            t = transposes.kernel(key, dt)
            t.function  # instantiates the template in its module
            ptx = transposes.module_for(t.spec.file).ptx
        except Exception as exc:  # report and go on: one broken kernel must not hide the rest
            print(key, np.dtype(dt).name, "FAILED:", exc)
            continue
        (out / t.spec.file.replace(".cu", ".ptx")).write_text(ptx)
print(sorted(p.name for p in out.iterdir()))
