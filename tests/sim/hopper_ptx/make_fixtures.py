"""Freeze the PTX that NVRTC 12 and NVRTC 13 emit for issue 19's kernels, for the simulator's tests.

    python tests/sim/hopper_ptx/make_fixtures.py      # rewrites nvrtc12/ and nvrtc13/ (.ptx.gz) and manifest.json

Each fixture is one .cu source (kernels/ and benchmarks/hopper_probe.cu, copied into src/ so that
later edits of those files do not change what the PTX was made from) compiled for compute_90 with
-lineinfo and the header folders course_lib.compile.headers gives that NVRTC; the folders' absolute
paths in `.file` lines are replaced by <headers>. The two generations differ in how they spell
the same operations (e.g. mbarrier.try_wait loops, cvta.param, 32-bit shared addresses); the
simulator must run both to identical results.
"""
import gzip
import json
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from course_lib.compile import headers, nvrtc_lib  # noqa: E402

T = {"f32": "float", "f64": "double", "u16": "unsigned short", "u8": "unsigned char"}
FIXTURES = {
    "tma.cu": [f"tma_tile<{T[t]}, 64, 4, 128>" for t in T] + ["tma_tile<float, 64, 4, 0>",
               "tma_copy<float, 128>", "tma_copy<unsigned char, 64>", "tma_both<unsigned short, 128>",
               "tma_both<float, 32>"],
    "tma_fast.cu": ["tma_pipe<float, 64, 4, 2, 0>", "tma_pipe<unsigned short, 64, 4, 3, 1>",
                    "tma_wide<double, 64, 4, 2, 1>", "tma_out<float, 4, 2>", "tma_out<unsigned char, 2, 1>",
                    "tma_out<double, 4, 2>"],
    "async_tile.cu": ["async_tile<float, 32, 8, 2, 4>", "async_tile<unsigned char, 32, 8, 2, 4>",
                      "async_tile<double, 32, 8, 3, 4>", "async_tile<unsigned short, 32, 8, 1, 4>"],
    "shuffle.cu": ["shuffle<float, 4>", "shuffle<double, 4>", "shuffle<unsigned char, 4>"],
    "ldsm.cu": ["ldsm<unsigned short, 256>"],
    "band.cu": ["band<unsigned char, 8, 256>", "band<float, 4, 256>"],
    "hopper_probe.cu": [f"probe_cpasync<{s}, {cg}>" for s, cg in ((4, "false"), (8, "false"), (16, "false"), (16, "true"))]
                       + [f"probe_{k}<{x}, {t}>" for k in ("ldsm", "stsm") for x in (1, 2, 4) for t in ("false", "true")]
                       + ["probe_tma<2048, true>", "probe_tma<4096, false>"],
    "pipeline_forms.cu": [],          # extern "C" kernels: cuda_pipeline.h, cuda::pipeline, cuda::barrier
}


def sources():
    src = HERE / "src"
    src.mkdir(exist_ok=True)
    for name in FIXTURES:
        origin = ROOT / "benchmarks" / name if name == "hopper_probe.cu" else ROOT / "kernels" / name
        if origin.exists():
            shutil.copy(origin, src / name)
    for header in ("pack.cuh", "tma.cuh"):
        shutil.copy(ROOT / "kernels" / header, src / header)
    return src


def main():
    src = sources()
    manifest = {}
    for major in (12, 13):
        lib = nvrtc_lib.load(major)
        out = HERE / f"nvrtc{major}"
        out.mkdir(exist_ok=True)
        opts = ["--gpu-architecture=compute_90", "-lineinfo", "-std=c++17", f"--include-path={src}"]
        opts += headers.include_options(major)
        for name, exprs in FIXTURES.items():
            r = lib.compile((src / name).read_text(), name, opts, exprs)
            ptx = r.ptx
            for folder in headers.folders(major):
                ptx = ptx.replace(str(folder), "<headers>")
            ptx = ptx.replace(str(src), "<src>")
            (out / name.replace(".cu", ".ptx.gz")).write_bytes(gzip.compress(ptx.encode(), mtime=0))
            manifest.setdefault(name, {})[f"nvrtc{major}"] = dict(version="{}.{}".format(*lib.version),
                                                                 lowered=r.lowered_names,
                                                                 entries=re.findall(r"\.entry\s+([\w$]+)", ptx))
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    print("wrote", sorted(str(p.relative_to(HERE)) for p in HERE.glob("nvrtc*/*.ptx.gz")))


if __name__ == "__main__":
    main()
