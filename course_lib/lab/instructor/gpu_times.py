"""GPU times beside a leaderboard, only where they pass the sanity checks; they never decide a rank.

    times = gpu_times.read(Path("course/leaderboard_gpu_times.json"))
    times[("11_capstone", "alice", "beat_library")]     # '0.031 ms, 2,150 GB/s (median of 7 rounds; copy 2,610 GB/s)'

A class with GPUs may time its leaderboard's kernels (benchmarks/leaderboard_gpu_times.py writes the file:
for each ranked submission, several rounds of the kernel and of a device-to-device copy of the same bytes,
in the same run, on one card, with that card's peak bandwidth). A time is shown only if it has at least
MIN_ROUNDS rounds (its median is what is shown), its bandwidth (bytes read once plus written once over the
median) is not above the card's peak, and not more than COPY_MARGIN above the same run's copy: a transpose
moves what a copy moves and cannot be much faster; a time that is, measured something else (a launch that
failed, a cached input, a clock read). Otherwise the reason is shown instead. This module reads and checks;
it times nothing.
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path

MIN_ROUNDS = 5
COPY_MARGIN = 1.10          # a transpose's bandwidth at most 10 % above the same run's copy


def check(entry: dict, peak_gbps: float) -> tuple[bool, str]:
    """(shown, the text beside the rank) for one timed submission (see the module's docstring)."""
    rounds = [float(t) for t in entry.get("rounds_ms") or [] if isinstance(t, (int, float)) and t > 0]
    copies = [float(t) for t in entry.get("copy_ms") or [] if isinstance(t, (int, float)) and t > 0]
    nbytes = entry.get("bytes")
    if len(rounds) < MIN_ROUNDS:
        return False, f"not shown: {len(rounds)} round(s), at least {MIN_ROUNDS} needed for a median"
    if not copies:
        return False, "not shown: no copy of the same bytes timed in the same run to compare with"
    if not isinstance(nbytes, (int, float)) or nbytes <= 0:
        return False, "not shown: the bytes moved are not given"
    median, copy = statistics.median(rounds), statistics.median(copies)
    gbps, copy_gbps = nbytes / median / 1e6, nbytes / copy / 1e6
    if peak_gbps and gbps > peak_gbps:
        return False, f"not shown: {gbps:,.0f} GB/s is above the card's peak ({peak_gbps:,.0f} GB/s): not a real time"
    if gbps > copy_gbps * COPY_MARGIN:
        return False, (f"not shown: {gbps:,.0f} GB/s is more than {COPY_MARGIN - 1:.0%} above the same run's copy "
                       f"({copy_gbps:,.0f} GB/s): not a transpose's time")
    return True, f"{median:.3g} ms, {gbps:,.0f} GB/s (median of {len(rounds)} rounds; copy {copy_gbps:,.0f} GB/s)"


def read(path) -> dict:
    """{(assignment, student, exercise): text} from a timing file; {} for None. ValueError names what is wrong."""
    if path is None:
        return {}
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"--gpu-times {path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("times"), list):
        raise ValueError(f"--gpu-times {path}: not a timing file (a JSON object with \"times\": [...]; "
                         "benchmarks/leaderboard_gpu_times.py writes one)")
    peak = float(data.get("peak_gbps") or 0)
    device = str(data.get("device") or "a GPU")
    out = {}
    for entry in data["times"]:
        if isinstance(entry, dict) and all(isinstance(entry.get(k), str) for k in ("assignment", "student", "exercise")):
            shown, text = check(entry, peak)
            out[(entry["assignment"], entry["student"], entry["exercise"])] = text + (f" on {device}" if shown else "")
    return out
