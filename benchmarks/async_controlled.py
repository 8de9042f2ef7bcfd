"""Notebook 12's cp.async claims, controlled: the same kernel with cp.async and with ordinary loads.

    python benchmarks/async_controlled.py --rounds 5 --out DIR          (on a GPU)

Issue 25: notebook 12 once said staging a transpose through cp.async is slower than ordinary loads.
Here every comparison changes one thing. ``async_tile`` (kernels/async_tile.cu) is compiled as it is
and with its one ``__pipeline_memcpy_async`` replaced by the same element copies through a register
(``plain``), each at 4 tiles per block with 2 stages (the course's ``async``) and at 1 tile per block
with 1 stage (the exercise's shape: staging only); ``padded_32x8`` is the course's tile with ordinary
loads. For float32 at 8192 x 8192 and 1000 x 1030, each round measures a device-to-device copy of the
same bytes and every kernel (median of 20 launches, inputs read from DRAM), as fractions of that
round's copy; the result is the median and range over the rounds (DIR/async_controlled.json and .md).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from course_lib import gpu, paths  # noqa: E402
from course_lib.kernel.module import RawModule  # noqa: E402
from course_lib.transposes import kernel, random_matrix  # noqa: E402
from course_lib.transposes.transpose import Transpose  # noqa: E402

COPY_CALL = "__pipeline_memcpy_async(&s[j][c], src, W);"
PLAIN = "for (int e = 0; e < E; ++e) s[j][c + e] = src[e];"


def variant(plain: bool, stages: int, tiles: int) -> Transpose:
    text = (paths.KERNELS / "async_tile.cu").read_text()
    if plain:
        assert COPY_CALL in text, "async_tile.cu changed: update COPY_CALL"
        text = text.replace(COPY_CALL, PLAIN)
    name = f"async_tile<float, 32, 8, {stages}, {tiles}>"
    fn = RawModule(code=text, options=("-std=c++17",), name_expressions=(name,),
                   filename="async_tile.cu").get_function(name)
    label = f"{'plain' if plain else 'cp.async'} {tiles} tile(s)/block, {stages} stage(s)"
    return Transpose(label, block=(32, 8), tile=(32, 32 * tiles), dtype=np.float32, function=fn)


def kernels() -> dict:
    out = {"padded_32x8": kernel("padded_32x8", np.float32)}
    for plain in (False, True):
        for stages, tiles in ((2, 4), (1, 4), (1, 1)):
            t = variant(plain, stages, tiles)
            out[t.name] = t
    return out


def one_round(ks: dict, shape) -> dict:
    import cupy as cp
    a = random_matrix(*shape, np.float32, 1)
    inp = cp.asarray(a)
    copy = gpu.copy_bandwidth(a.nbytes, repeat=20)
    fracs = {}
    for name, t in ks.items():
        out = cp.empty(t.out_shape(*shape), np.float32)
        t.run(inp, out)
        assert np.array_equal(out.get(), t.expected(a)), f"{name} is wrong on {shape}"
        seconds = t.time(inp, out, repeat=20)
        fracs[name] = 2 * a.nbytes / seconds / copy
    return fracs


def short(name: str) -> str:
    """'cp.async 4 tile(s)/block, 2 stage(s)' -> 'async_t4_s2' (keys the prose-figure test can name)."""
    if not name.startswith(("cp.async", "plain")):
        return name
    tiles, stages = (int(w) for w in name.replace("(", " ").split() if w.isdigit())
    return f"{'async' if name.startswith('cp.async') else 'plain'}_t{tiles}_s{stages}"


def summary(results: dict) -> dict:
    """{'median'|'min'|'max': {'8192x8192': {short name: value}}} over the rounds."""
    return {stat: {shape: {short(n): round(f(v), 4) for n, v in per.items()} for shape, per in results.items()}
            for stat, f in (("median", statistics.median), ("min", min), ("max", max))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=".")
    args = ap.parse_args(argv)
    ks, results = kernels(), {}
    for shape in ((8192, 8192), (1000, 1030)):
        rounds = [one_round(ks, shape) for _ in range(args.rounds)]
        results[f"{shape[0]}x{shape[1]}"] = {n: [r[n] for r in rounds] for n in ks}
    lines = [f"{gpu.info().name}, float32, fractions of a same-round device copy, {args.rounds} rounds: "
             "median (min-max)", "", "| kernel | " + " | ".join(results) + " |", "|---|" + "---|" * len(results)]
    for n in ks:
        cells = [f"{statistics.median(v[n]):.3f} ({min(v[n]):.3f}-{max(v[n]):.3f})" for v in results.values()]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "async_controlled.json").write_text(json.dumps(
        {"gpu": gpu.info().name, "rounds": args.rounds, "fractions_of_copy": results, **summary(results)},
        indent=1) + "\n")
    (Path(args.out) / "async_controlled.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
