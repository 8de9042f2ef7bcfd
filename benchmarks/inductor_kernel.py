#!/usr/bin/env python
"""What torch.compile makes of ``x.t().contiguous()``: its Triton kernel, grid, block and elements per thread.

    python benchmarks/inductor_kernel.py --dtype u8,f16 --size 1000x1030 --out DIR

benchmarks/transpose.py times ``torch.compile`` as a peer; this script says what that peer is. For
each dtype and size it compiles the same lambda (benchmarks/library_peers.py's), runs it once so
Inductor's autotuner picks a configuration, and writes DIR/inductor_<dtype>_<rows>x<cols>.py (the
generated module: the Triton kernel and the Python that launches it) and DIR/inductor.json with,
per case: the kernel's name, the candidate configurations, the one the autotuner kept (XBLOCK,
YBLOCK, num_warps, num_stages), the grid that configuration launches ((xnumel / XBLOCK) x
(ynumel / YBLOCK) programs, each a CUDA block of 32 * num_warps threads), and elements per thread.

The autotuner is found among live objects (``gc``) by its class name, CachingAutotuner, because the
module that defines it has moved between PyTorch releases; what it finds is printed as found. Needs
torch with a GPU; elsewhere it says so and exits 0. Nothing here times anything.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import re
import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
import transpose as tr  # noqa: E402  (benchmarks/transpose.py)

TORCH = {"f32": "float32", "f64": "float64", "f16": "float16", "u8": "uint8"}


def autotuners():
    """Every live Inductor CachingAutotuner (one per generated Triton kernel)."""
    return [o for o in gc.get_objects() if type(o).__name__ == "CachingAutotuner"]


def describe(cfg):
    """A Triton Config -> a plain dict."""
    return dict(kwargs=dict(getattr(cfg, "kwargs", {})), num_warps=getattr(cfg, "num_warps", None),
                num_stages=getattr(cfg, "num_stages", None))


def numels(code):
    """{'xnumel': 1030, 'ynumel': 1000} as the generated kernel spells them (static shapes)."""
    return {k: int(v) for k, v in re.findall(r"\b([xyz]numel)\s*=\s*(\d+)\b", code)}


def one_case(dkey, rows, cols, out_dir):
    import torch
    from torch._inductor.utils import run_and_get_code
    before = {id(a) for a in autotuners()}
    fn = torch.compile(lambda x: x.t().contiguous(), dynamic=False)
    x = torch.randint(0, 100, (rows, cols), device="cuda").to(getattr(torch, TORCH[dkey]))
    got, codes = run_and_get_code(fn, x)
    assert torch.equal(got, x.t()), "torch.compile's transpose is wrong"
    torch.cuda.synchronize()
    code = "\n\n# ----- next generated module -----\n\n".join(codes)
    (out_dir / f"inductor_{dkey}_{rows}x{cols}.py").write_text(code)
    found = [a for a in autotuners() if id(a) not in before]
    case = dict(dtype=TORCH[dkey], rows=rows, cols=cols, numel=numels(code), kernels=[])
    for a in found:
        kept = [describe(getattr(launcher, "config", None)) for launcher in getattr(a, "launchers", None) or []]
        candidates = getattr(a, "configs", None) or [getattr(r, "config", None) for r in
                                                     getattr(a, "compile_results", None) or []]
        k = dict(name=getattr(getattr(a, "fn", None), "__name__", "?"),
                 candidates=[describe(c) for c in candidates if c is not None], kept=kept)
        if len(kept) == 1:
            kw, warps = kept[0]["kwargs"], kept[0]["num_warps"]
            xb, yb = kw.get("XBLOCK", 1), kw.get("YBLOCK", 1)
            nx, ny = case["numel"].get("xnumel", 1), case["numel"].get("ynumel", 1)
            k.update(grid=[math.ceil(nx / xb), math.ceil(ny / yb)], block=32 * warps,
                     elements_per_program=xb * yb, elements_per_thread=xb * yb / (32 * warps))
        case["kernels"].append(k)
    return case


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtype", default="u8,f16")
    p.add_argument("--size", type=tr.parse_sizes, default=[(1000, 1030)])
    p.add_argument("--out", type=Path, default=Path("/tmp/inductor"))
    a = p.parse_args(argv)
    try:
        import torch
        ok = torch.cuda.is_available()
    except ImportError:
        ok = False
    if not ok:
        print("benchmarks/inductor_kernel.py: needs PyTorch with a CUDA GPU; none here, nothing to show.")
        return 0
    a.out.mkdir(parents=True, exist_ok=True)
    cases = [one_case(d, r, c, a.out) for d in a.dtype.split(",") for r, c in a.size]
    (a.out / "inductor.json").write_text(json.dumps(dict(torch=torch.__version__, device=torch.cuda.get_device_name(),
                                                         cases=cases), indent=1))
    for c in cases:
        print(f"{c['dtype']} {c['rows']}x{c['cols']}  numel {c['numel']}")
        for k in c["kernels"]:
            print(f"  {k['name']}: {len(k['candidates'])} candidate configs, kept {k['kept']}")
            if "grid" in k:
                print(f"    grid {k['grid'][0]} x {k['grid'][1]} programs of {k['block']} threads, "
                      f"{k['elements_per_program']} elements each = {k['elements_per_thread']:g} per thread")
    return 0


if __name__ == "__main__":
    sys.exit(main())
