"""The box around a submission (course_lib/lab/grader/box.py, cgroups.py) without nbgrader: every writable place
in the sandbox is a sized tmpfs; in each mode this machine gives (a cgroup, and the watchdog alone) a program
that passes one bound is stopped and the bound named, one that stays within them is not; a delegated cgroup v2
folder (a stand-in: no v2 memory controller here) gets a child per submission with its limits, and its events
name the bound; a mode this machine lacks is refused with why. tests/lab/test_nbgrader.py runs the same
attacks through real nbgrader."""
import subprocess
import sys
import time

import pytest

from course_lib.lab.grader import box, cgroups, sandbox

pytestmark = pytest.mark.usefixtures("bubblewrap")   # tests/lab/conftest.py: skip without the sandbox

MiB = box.MiB
SMALL = box.Bounds(time_s=2, memory=320 * MiB, space=96 * MiB, shm=16 * MiB, processes=48, output=MiB)


def _modes() -> list[str]:
    try:
        cgroups.open_group(f"{cgroups.PREFIX}probe", 64 * MiB, 8).remove()
        return ["auto", "watchdog"]
    except (AttributeError, cgroups.Unavailable):        # None: no writable cgroup here, "auto" is the watchdog
        return ["watchdog"]


def _boxed(code: str, mode: str, bounds=SMALL, wait: float = 20) -> box.Box:
    """Run `code` (Python) in the sandbox, in a box; the box once the program ended or was stopped."""
    b = box.Box(bounds, mode)
    p = subprocess.Popen(b.wrap(sandbox.command([sys.executable, "-c", code], bounds=bounds)), env={},
                         preexec_fn=b.preexec(sandbox.CPU_S, sandbox.MEMORY), start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    b.started(p.pid)
    try:
        p.wait(wait)
    finally:
        b.close()
        p.wait(5)
    return b


def test_every_writable_place_in_the_sandbox_is_a_sized_tmpfs(tmp_path):
    (tmp_path / "handed_in.txt").write_text("x")
    probe = """import os
for line in open("/proc/self/mountinfo"):
    left, _, right = line.partition(" - ")
    point, options, (kind, _, sup) = left.split()[4], left.split()[5], right.split()
    print(point, kind, "rw" if "rw" in options.split(",") else "ro", "sized" if "size=" in sup else "unsized")
open("written.txt", "w").write("y"); print(sorted(os.listdir(".")))"""
    r = sandbox.run([sys.executable, "-c", probe], work=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    mounts = [line.split() for line in lines[:-1]]
    writable = [m for m in mounts if m[2] == "rw" and m[1] not in ("proc", "devpts", "devtmpfs")]  # /dev/null...
    assert [m for m in writable if m[1] != "tmpfs" or m[3] != "sized"] == []
    assert {m[0] for m in writable} == {"/box", "/dev/shm"}       # /submission, /tmp, HOME: links into /box
    assert ["/", "tmpfs", "ro", "unsized"] in mounts and ["/dev", "tmpfs", "ro", "unsized"] in mounts
    assert lines[-1] == "['handed_in.txt', 'written.txt']"            # a copy of the folder, written in the box
    assert sorted(p.name for p in tmp_path.iterdir()) == ["handed_in.txt"]      # the folder itself: only read


HOG = "import time\nx = b'm' * (400 << 20)\ntime.sleep(30)"
FILES_AND_MEMORY = """import time
open("/tmp/f", "wb").write(b"f" * (90 << 20))            # under the files' bound
x = b'm' * (260 << 20)                                     # under the memory bound alone
time.sleep(30)"""
FILL = """import time
try:
    with open("/dev/shm/f", "wb") as f:
        for _ in range(64): f.write(b"w" * 2**20); f.flush()
except OSError:
    time.sleep(30)"""
FORK = "import subprocess, time\nps = [subprocess.Popen(['sleep', '30']) for _ in range(100)]\ntime.sleep(30)"
SLEEP = "import time\ntime.sleep(30)"


@pytest.mark.slow                   # ten sandboxes, 1-3 s each
@pytest.mark.parametrize("mode", _modes())
@pytest.mark.parametrize("code, bound", [(HOG, "memory"), (FILES_AND_MEMORY, "memory"), (FILL, "shm"),
                                         (FORK, "processes"), (SLEEP, "time")],
                         ids=["memory", "memory_with_files", "files", "processes", "time"])
def test_a_program_past_a_bound_is_stopped_and_the_bound_named(mode, code, bound):
    started = time.monotonic()
    b = _boxed(code, mode)
    assert b.stopped == bound, (b.mode, b.summary())
    assert time.monotonic() - started < 15                 # stopped, not left to its 30 s
    assert b.says.startswith("stopped: the notebook ") and SMALL.says(bound) in b.says


@pytest.mark.slow
def test_a_fork_bomb_is_held_by_the_cgroup_and_stopped():
    """Only where a cgroup holds tasks: under the watchdog alone, as root, a bomb forks until the next sample."""
    if "auto" not in _modes():
        pytest.skip("no writable cgroup here")
    b = _boxed("import os\nwhile True:\n    try: os.fork()\n    except OSError: pass", "auto")
    assert b.mode != "watchdog" and b.stopped == "processes", b.summary()


@pytest.mark.parametrize("mode", _modes())
def test_a_program_within_the_bounds_runs_to_its_end(mode):
    b = _boxed("import subprocess\nx = b'k' * (100 << 20)\nopen('/tmp/f', 'wb').write(b'f' * (40 << 20))\n"
               "subprocess.run(['true'])", mode)
    assert b.stopped is None, b.summary()
    assert (b.mode == "watchdog") == (mode == "watchdog")        # "auto" is offered only where a cgroup works


def test_the_output_bound_counts_bytes_and_stops_once():
    b = box.Box(SMALL, "watchdog")
    assert b.output(SMALL.output // 2) and b.output(SMALL.output // 2)
    assert not b.output(1) and b.stopped == "output" and "more than 1 MiB of output" in b.says
    b.close()


def test_a_delegated_cgroup_v2_folder_gets_a_child_with_the_limits_and_its_events_name_the_bound(tmp_path):
    (tmp_path / "cgroup.subtree_control").write_text("cpu memory pids\n")
    group = cgroups.open_group("sub_1", 512 * MiB, 64, "auto", str(tmp_path))
    child = tmp_path / "sub_1"
    assert group.mode == "cgroup2" and group.memory == group.pids == child
    assert (child / "memory.max").read_text() == f"{512 * MiB}\n" and (child / "pids.max").read_text() == "64\n"
    assert group.passed() is None
    (child / "pids.events").write_text("max 3\n")
    assert group.passed() == "processes"
    (child / "memory.events").write_text("low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\n")
    assert group.passed() == "memory"


def test_a_mode_this_machine_lacks_is_refused_saying_why(tmp_path):
    with pytest.raises(cgroups.Unavailable, match="cgroup.subtree_control"):
        cgroups.open_group("sub_1", MiB, 8, "cgroup2", str(tmp_path / "not_a_cgroup"))
    with pytest.raises(cgroups.Unavailable, match="c.SandboxedExecute.cgroup"):
        cgroups.open_group("sub_1", MiB, 8, "cgroup2")
    if cgroups._systemd_works():
        with pytest.raises(cgroups.Unavailable, match="systemd"):
            cgroups.open_group("sub_1", MiB, 8, "systemd")
