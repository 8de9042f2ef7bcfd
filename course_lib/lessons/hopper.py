"""Notebook 12 (asynchronous copies and the Tensor Memory Accelerator): swizzle pictures, the
swizzle explorer, and the pipeline-depth explorer.

    from course_lib.lessons import hopper
    hopper.addresses("chunks", 128)            # one warp's shared addresses in a TMA box swizzled 128 B
    hopper.bank_picture("chunks", 128)         # draw.banks of them: 1 wavefront per quarter-warp
    hopper.layout_picture(64)                  # where chunk c of box row r lands, for one mode
    hopper.swizzle_explorer()                  # mode buttons x access buttons -> bank pictures + table
    hopper.timeline(stages=2)                  # one block's copies and work over time
    hopper.pipeline_explorer()                 # STAGES slider -> timeline
    hopper.tma_vs_best(rounds.load(hopper.RUN))   # the H100's run: best TMA kernel against the best other one
    hopper.instruction_mix({"shuffle": run})  # machine instructions per thread, by opcode, from the SASS listing

The swizzle is the simulator's own (``sim.movement.tma.swizzled``, checked against an H100's TMA), and the
costs are the simulator's metrics rules (``draw.bank_cost``), so the pictures say what Nsight Compute
would count. The pipeline timeline is a model with two numbers (how long a tile's copy takes to
arrive, how long the block works on a tile), not a measurement; the H100's measurements are read
from benchmarks/results (``RUN``, through ``lessons.rounds``), with their spread. Nothing here runs a
kernel.
"""
from __future__ import annotations

import collections
import re

import numpy as np
import plotly.graph_objects as go

from ..notebook import draw, widgets
from ..notebook.palette import MAIN, ORANGE
from ..sim.movement import tma
from . import rounds

RUN = "h100_2026-11-26_hopper/rounds_hopper.json"     # benchmarks/rounds.py hopper: notebook 12's H100 figures

MODES = {"none": 0, "32 B": 32, "64 B": 64, "128 B": 128, "05's XOR (per word)": "xor"}
ACCESSES = {
    "chunks": "16-byte chunks of one chunk column, 8 rows per quarter-warp (ldmatrix)",
    "tma_tile": "16-byte chunks of rows four apart (tma_tile's float reads): per quarter-warp 4 chunk columns x 2 rows, "
                "in 32-byte rows 2 x 4",
    "column": "a column of 4-byte words, 32 rows (notebook 05's column read)",
    "row": "a row of 4-byte words (the TMA's or a warp's row write)",
}
BASE = 1024          # a box aligned to 1024 bytes: the swizzle pattern starts at its first row
XOR_CHUNKS = ("notebook 05's XOR swizzle moves single words (word c of row r to word c ^ r): the 4 words of a "
              "16-byte chunk no longer sit together, so a 16-byte access cannot read them. The TMA swizzles whole "
              "16-byte chunks instead")


def _pitch(mode) -> int:
    """Bytes per box row: a swizzled box row is at most the swizzle span (cuTensorMapEncodeTiled)."""
    return mode if isinstance(mode, int) and mode else 128


def addresses(access: str, mode, pitch: int | None = None) -> np.ndarray:
    """Shared byte addresses of one warp's access to a box whose rows are `pitch` bytes long (by default
    the longest the mode allows: `mode` bytes, 128 unswizzled), placed as the TMA's swizzle `mode` places
    them; mode "xor" is notebook 05's [32][32] float tile with element (r, c) at column c ^ r."""
    lane = np.arange(32)
    if mode == "xor":
        if access in ("chunks", "tma_tile"):
            raise ValueError(XOR_CHUNKS)
        r, c = (lane, np.zeros(32, int)) if access == "column" else (np.zeros(32, int), lane)
        return BASE + r * 128 + 4 * (c ^ r)
    p = pitch or _pitch(mode)
    if access == "chunks":          # quarter-warp q reads chunk column q % (p/16) of 8 rows
        r = lane % 8 + 8 * (lane // 8 // (p // 16))
        b = r * p + 16 * (lane // 8 % (p // 16))
    elif access == "tma_tile":      # tma.cuh's transpose_box for floats: JW chunk columns, rows 4 apart
        jw = min(4, p // 16)
        b = (lane // jw) * 4 * p + 16 * (lane % jw)
    elif access == "column":        # word 0 of 32 consecutive rows
        b = lane * p
    else:                           # one row, word after word (rows of p bytes: 32 words span 128 / p rows)
        b = (lane * 4 // p) * p + lane * 4 % p
    return BASE + tma.swizzled(BASE + b, mode) - BASE if mode else BASE + b


def width_of(access: str) -> int:
    return 16 if access in ("chunks", "tma_tile") else 4


def cost(access: str, mode, pitch: int | None = None) -> tuple[int, int] | None:
    """(wavefronts, bank conflicts) of the access, by the simulator's rules; None where the layout
    cannot serve it (16-byte chunks of a per-word XOR swizzle)."""
    if mode == "xor" and access in ("chunks", "tma_tile"):
        return None
    return draw.bank_cost(addresses(access, mode, pitch), width_of(access))


def bank_picture(access: str, mode) -> go.Figure:
    name = next((k for k, v in MODES.items() if v == mode), str(mode))
    if cost(access, mode) is None:
        fig = go.Figure()
        fig.update_layout(title=f"swizzle {name}: no 16-byte accesses<br><sup>{XOR_CHUNKS[:90]}...</sup>", height=200)
        return draw.sourced(fig, "computed from the swizzle formula")
    wf, conflicts = cost(access, mode)
    return draw.banks(addresses=addresses(access, mode), width=width_of(access),
                      title=f"swizzle {name}: {ACCESSES[access].split(' (')[0]}<br><sup>{wf} wavefront(s), "
                            f"{conflicts} conflict(s); box rows of {_pitch(mode)} bytes</sup>")


def layout_picture(mode) -> go.Figure:
    """Box rows 0-7 x their 16-byte chunks (8 of a 128-byte row; 2 or 4 where a swizzled row is 32 or
    64 bytes): the slot (0-7 in its 128-byte line of shared memory) where chunk c of row r lands.
    Unswizzled every column is one slot; swizzled 128 B every row is a permutation and every column too."""
    p = _pitch(mode)
    rows, chunks = np.meshgrid(np.arange(8), np.arange(p // 16), indexing="ij")
    if mode == "xor":
        slot = (chunks ^ rows) % 8                       # word c of row r -> word c ^ r: per-word, drawn per chunk
    else:
        b = BASE + rows * p + chunks * 16
        slot = ((tma.swizzled(b, mode) - BASE) % 128) // 16 if mode else (b - BASE) % 128 // 16
    fig = go.Figure(go.Heatmap(z=slot, text=slot.astype(str), texttemplate="%{text}", colorscale="Viridis",
                               showscale=False, x=[f"c{c}" for c in range(p // 16)], y=[f"r{r}" for r in range(8)]))
    name = next((k for k, v in MODES.items() if v == mode), str(mode))
    what = "word group" if mode == "xor" else "chunk"
    fig.update_layout(title=f"swizzle {name}: slot in its 128-byte line of {what} c of box row r"
                            f"<br><sup>box rows of {p} bytes, {p // 16} chunks each</sup>",
                      yaxis=dict(autorange="reversed"), width=420, height=380, margin=dict(t=70))
    draw.noticed(fig, _layout_notice(name, slot, mode))
    return draw.sourced(fig, "computed from the swizzle formula (course_lib.sim.movement.tma)")


def _layout_notice(name: str, slot, mode) -> str:
    """What layout_picture shows, in one sentence: how many slots the 8 rows of a chunk column reach."""
    if mode == "xor":
        return ("Notebook 05's per-word XOR: the 8 rows of a column of words land in 8 different places, but a "
                "16-byte chunk's words no longer sit together, so nothing reads it 16 bytes at a time.")
    ways = max(collections.Counter(col).most_common(1)[0][1] for col in slot.T.tolist())
    reach = min(len(set(col)) for col in slot.T.tolist())
    head = f"Swizzle {name}" if mode else "No swizzle"
    if ways == 1:
        return (f"{head}: the 8 rows of one chunk column land in 8 different slots of their 128-byte lines, so a "
                f"quarter-warp reading them 16 bytes at a time meets no bank twice.")
    where = "one slot" if reach == 1 else f"{reach} slots"
    return (f"{head}: the 8 rows of one chunk column land in only {where} of their 128-byte lines, so a "
            f"quarter-warp reading them 16 bytes at a time is {ways}-way.")


# the cost table's columns: (box row bytes, mode), each swizzle beside the same rows unswizzled
TABLE = [(32, 0), (32, 32), (64, 0), (64, 64), (128, 0), (128, 128), (128, "xor")]


def cost_table() -> draw.HTMLText:
    """Wavefronts per request of every access, each swizzle mode beside the same box rows unswizzled
    (a swizzled box row is at most the swizzle span, so 32- and 64-byte swizzles have shorter rows)."""
    name = {0: "none", "xor": "05's XOR (per word)"}
    shown = lambda a, p, v: "-" if cost(a, v, p) is None else str(cost(a, v, p)[0])     # noqa: E731
    groups = "".join(f"<th colspan='{sum(q == p for q, _ in TABLE)}'>box rows of {p} bytes</th>" for p in (32, 64, 128))
    head = "".join(f"<th>{name.get(v, f'{v} B')}</th>" for _, v in TABLE)
    body = "".join(f"<tr><td>{ACCESSES[a]}</td>" + "".join(f"<td>{shown(a, p, v)}</td>" for p, v in TABLE) + "</tr>"
                   for a in ACCESSES)
    text = "\n".join(f"{ACCESSES[a]}: " + "; ".join(f"{p}-byte rows {name.get(v, f'swizzle {v} B')} {shown(a, p, v)}"
                                                      for p, v in TABLE) for a in ACCESSES)
    return draw.HTMLText(f"<table><tr><th rowspan='2'>wavefronts per request</th>{groups}</tr><tr>{head}</tr>{body}"
                         f"</table>", "Each swizzle beside the same box rows unswizzled: a swizzle never costs more than "
                         "its rows do without it, and only the 128-byte one frees tma_tile's reads.\n" + text).sourced(
        "simulated (H100 rules): the simulator's bank rules on the swizzled addresses")


def swizzle_explorer() -> widgets.Explorer:
    """Buttons for the swizzle mode and the access; bank picture, layout and the cost table."""
    return widgets.Explorer(
        compute=lambda mode, access: (MODES[mode], access),
        figures=lambda v, mode, access: [bank_picture(access, v[0]), layout_picture(v[0]), cost_table()],
        controls=dict(mode=list(MODES), access=list(ACCESSES)), start=dict(mode="128 B", access="chunks"),
        title="Swizzle explorer: pick a mode and an access")


SASS_OP = re.compile(r"^\s+[0-9a-f]{4,}\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", re.M)


def instruction_mix(runs: dict, ops=("SHFL", "SEL", "LDG", "STG", "LDS", "STS")) -> draw.HTMLText:
    """Machine instructions in each kernel's code (NVRTC's SASS for sm_90, as the simulator's listing
    shows it), by opcode: what a thread executes once, the loops unrolled as ptxas unrolled them."""
    counts = {k: collections.Counter(SASS_OP.findall(str(r.sim.listing(view="sass")))) for k, r in runs.items()}
    head = ["kernel", *ops, "all instructions"]
    body = [[k, *(str(c[o]) for o in ops), str(sum(c.values()))] for k, c in counts.items()]
    html_ = ("<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
             + "".join("<tr>" + "".join(f"<td>{x}</td>" for x in row) + "</tr>" for row in body) + "</table>")
    return draw.HTMLText(html_, "\n".join("  ".join(f"{x:>8}" for x in row) for row in [head, *body])).sourced(
        "computed from the machine code (NVRTC 13.0's SASS for sm_90)")


# ------------------------------------------------------------------------------ pipelining
def schedule(stages: int, tiles: int = 6, copy_us: float = 1.0, work_us: float = 0.4) -> list[dict]:
    """When one block's copies and tile work happen with `stages` shared tiles: a copy may start
    once its stage is free (the work on the tile STAGES before it finished), the work on a tile once
    its copy arrived and the previous work finished. Returns rows for a timeline."""
    copy_end, work_end, rows = [], [], []
    for t in range(tiles):
        start = 0.0 if t < stages else work_end[t - stages]
        copy_end.append(start + copy_us)
        rows.append(dict(task=f"copy tile {t}", lane="copies", start=start, end=copy_end[t]))
        begin = max(copy_end[t], work_end[t - 1] if t else 0.0)
        work_end.append(begin + work_us)
        rows.append(dict(task=f"transpose tile {t}", lane="threads", start=begin, end=work_end[t]))
    return rows


def timeline(stages: int, tiles: int = 6, copy_us: float = 1.0, work_us: float = 0.4) -> go.Figure:
    rows = schedule(stages, tiles, copy_us, work_us)
    fig = go.Figure()
    for r in rows:
        fig.add_trace(go.Bar(y=[r["lane"]], x=[r["end"] - r["start"]], base=[r["start"]], orientation="h",
                             text=r["task"].split()[-1], textposition="inside", showlegend=False,
                             marker_color=MAIN if r["lane"] == "copies" else ORANGE,
                             marker_pattern_shape="" if r["lane"] == "copies" else "/",
                             hovertext=r["task"]))
    end = max(r["end"] for r in rows)
    fig.update_layout(barmode="overlay", title=f"one block, {tiles} tiles, STAGES = {stages}: done at {end:.1f} us"
                      f"<br><sup>modelled: a copy takes {copy_us} us to arrive, a tile's work {work_us} us</sup>",
                      xaxis_title="microseconds", height=260, width=640, margin=dict(t=70))
    idle = end - tiles * work_us
    sentence = (f"STAGES = {stages}: the block is done at {end:.1f} us, its threads idle {idle:.1f} us of it "
                f"waiting for copies; the copy of tile t can start only once the work on tile t - {stages} "
                f"is done, so more stages start the copies earlier and hide them behind the work.")
    spans = {r["task"]: f"{r['start']:.1f}-{r['end']:.1f}" for r in rows}
    table = [[str(t), spans[f"copy tile {t}"], spans[f"transpose tile {t}"]] for t in range(tiles)]
    return draw.noticed(fig, sentence, [("one block's timeline, modelled", ["tile", "copy (us)", "transpose (us)"],
                                         table)])


def _best(case: dict, keep) -> dict | None:
    ok = [r for r in case["results"] if r.get("kind") == "course" and "skipped" not in r and r.get("correct")
          and keep(r["name"])]
    return max(ok, key=lambda r: r["ratio"]["median"], default=None)


def _spread(r: dict) -> rounds.Spread:
    return rounds.Spread(r["ratio"]["median"], r["ratio"]["min"], r["ratio"]["max"])


def tma_vs_best(run: dict) -> draw.HTMLText:
    """Per dtype and size where the TMA kernels ran (rows of whole 16-byte pieces): the best TMA transpose
    against the best other course transpose, median [min-max] of a copy, and the verdict by the course's
    rule (ahead only when the gap between the medians exceeds both spreads)."""
    if run.get("missing"):
        return rounds._missing(run)
    is_tma = lambda n: n.startswith("tma") and not n.startswith("tma_copy")
    body, words = [], {"faster": "TMA ahead", "slower": "TMA behind", "within noise": "within noise"}
    for c in run["cases"]:
        tma_best, other = _best(c, is_tma), _best(c, lambda n: not n.startswith("tma"))
        if tma_best is None or other is None:
            continue
        a, b = _spread(tma_best), _spread(other)
        body.append([c["dtype"], f"{c['rows']}x{c['cols']}", tma_best["name"], str(a), other["name"], str(b),
                     words[rounds.compare(a, b)]])
    counts = {w: sum(row[-1] == w for row in body) for w in words.values()}
    summary = (f"{len(body)} cases: TMA ahead in {counts['TMA ahead']}, within noise in {counts['within noise']}, "
               f"behind in {counts['TMA behind']}")
    t = rounds._table(f"best TMA transpose against the best other course transpose, fraction of a copy, median "
                      f"[min-max]: {rounds.named(run)}", ["dtype", "size", "best TMA", "/copy", "best other", "/copy",
                                                         "verdict"], body)
    return draw.HTMLText(t.html + f"<p>{summary}</p>", t.text + "\n" + summary)


def pipeline_explorer() -> widgets.Explorer:
    """STAGES slider (1-4) and copy-time buttons -> the timeline model."""
    return widgets.Explorer(
        compute=lambda STAGES, copy: (STAGES, copy),
        figures=lambda v, STAGES, copy: [timeline(STAGES, copy_us=copy)],
        controls=dict(STAGES=range(1, 5), copy=[0.5, 1.0, 2.0]), start=dict(STAGES=1, copy=1.0),
        title="Pipeline depth: how many tiles are on their way while one is turned around")
