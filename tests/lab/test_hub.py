"""The class hub (deploy/), for real on this machine:

- deploy/Dockerfile's steps run as a shell script (its folders moved to a temporary one; apt-get and
  useradd checked, not run) build the students' environment: the course, JupyterHub, nbgitpuller,
  nbgrader and their settings;
- a real JupyterHub from that environment (deploy/local_hub.py: local process spawner, dummy
  authenticator, configurable-http-proxy from npm, all on 127.0.0.1) gets three students through
  its REST API and starts their servers at once;
- each student follows the nbgitpuller link (deploy/links.py) to notebook 05, and their server
  clones the course from a local copy of this repository's HEAD into their home;
- each runs their own copy of notebook 05 top to bottom in their own kernel, all at the same time,
  and every cell's outputs are the stored ones (compared as nbval does); the kernel knows it is on
  a hub (course_lib's hints name the instructor there);
- each fetches the assignment the instructor released through nbgrader's exchange (deploy/
  nbgrader_config.py) and submits it from their kernel, and the instructor collects one submission
  per student, each under the student's hub name.

Plus, quickly, what cannot run here: deploy/config.yaml's image, limits, links and exchange agree
with the Dockerfile, the class-load measurement and nbgrader_config.py.

Needs PyPI (or pip's cache), git and configurable-http-proxy; skips, saying how, without them.
Tests the committed HEAD. About 2.5 minutes on 2 cores.
"""
import asyncio
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fresh_env import python312, run, run_dockerfile

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
sys.path.insert(0, str(DEPLOY))
import kernel_client  # noqa: E402
import links  # noqa: E402
import local_hub  # noqa: E402

STUDENTS = ["s1", "s2", "s3"]
NOTEBOOK = "05_bank_conflicts.ipynb"


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    """(environment, python) of the students' image, built by deploy/Dockerfile's steps from HEAD."""
    if not shutil.which("git") or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout")
    tmp = tmp_path_factory.mktemp("image")
    context = tmp / "context"                       # what `docker build` gets: the committed files
    subprocess.run(["git", "clone", "-q", str(REPO), str(context)], check=True, capture_output=True)
    env, home, cmd = run_dockerfile(DEPLOY / "Dockerfile", context, tmp, python312() or sys.executable)
    assert cmd == ["jupyterhub-singleuser"]
    python = shutil.which("python", path=env["PATH"])
    assert python and python.startswith(str(tmp)), f"the image's python is not the one it built: {python}"
    return env, python


@pytest.mark.slow
def test_a_class_gets_runs_and_hands_in_notebook_05_on_a_real_hub(image, tmp_path):
    proxy = local_hub.find_proxy()
    if proxy is None:
        pytest.skip(local_hub.PROXY_HINT)
    env, python = image
    remote = tmp_path / "remote" / "transpose-course"      # a local stand-in for the GitHub repository
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    subprocess.run(["git", "-C", str(REPO), "push", "-q", str(remote), "HEAD:refs/heads/main"], check=True,
                   capture_output=True)
    exchange, course = tmp_path / "exchange", tmp_path / "instructor" / "course"
    exchange.mkdir()
    exchange.chmod(0o777)
    nbgrader_env = dict(env, NBGRADER_EXCHANGE=str(exchange), NBGRADER_COURSE_DIR=str(course))
    _release(python, nbgrader_env, course)
    times, start = {}, time.perf_counter()
    with local_hub.LocalHub(tmp_path / "hub", python=python, proxy=proxy, hub_env=env, environment={
            "NBGRADER_EXCHANGE": str(exchange), "NBGITPULLER_APP": "lab"}) as hub:
        times["hub up"] = time.perf_counter() - start
        hub.add_students(STUDENTS)
        times["servers ready"] = max(hub.start_servers(STUDENTS).values())
        for student in STUDENTS:
            _pull(hub, student, f"file://{remote}")
        times["pulled"] = time.perf_counter() - start
        ran = asyncio.run(_class(hub, links.target_folder(f"file://{remote}")))
        times["notebook 05, all students"] = max(ran.values())
    collect = run([python, "-m", "nbgrader", "collect", "hw05"], "nbgrader collect", cwd=course, env=nbgrader_env)
    collected = sorted(p.parent.parent.name for p in (course / "submitted").glob(f"*/hw05/{NOTEBOOK}"))
    assert collected == STUDENTS, f"one submission per student, under their hub name:\n{collect.stderr[-2000:]}"
    times["total"] = time.perf_counter() - start
    print("class hub timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in times.items()))


def _release(python, env, course):
    """The instructor releases notebook 05 as assignment hw05 through the exchange."""
    (course / "source" / "hw05").mkdir(parents=True)
    shutil.copy(REPO / "notebooks" / NOTEBOOK, course / "source" / "hw05" / NOTEBOOK)
    for step in ("generate_assignment", "release_assignment"):
        run([python, "-m", "nbgrader", step, "hw05"], f"nbgrader {step}", cwd=course, env=env)


def _pull(hub, student, repo):
    """What a student's click on the link does: the hub sends them to their server's nbgitpuller page,
    whose script asks the server to pull (an event stream) and then opens the notebook."""
    url = links.link(hub.url, NOTEBOOK, repo=repo)
    status, page = hub.request("GET", url[len(hub.url):])
    assert status == 200 and b"git-pull" in page, f"{student}'s link: {status} {page[:500]!r}"
    target = links.target_folder(repo)
    status, stream = hub.request("GET", f"/user/{student}/git-pull/api?repo={repo}&branch=main&targetpath={target}",
                                 timeout=120)
    events = [json.loads(line[5:]) for line in stream.decode().splitlines() if line.startswith("data:")]
    assert status == 200 and events and events[-1]["phase"] == "finished", events


SUBMIT = ("import subprocess, course_lib.compile.platforms as p\n"
          "print(p.place())\n"
          "for step in ('fetch_assignment', 'submit'):\n"
          "    subprocess.run(['nbgrader', step, 'hw05'], cwd=os.path.expanduser('~'), check=True, capture_output=True)\n"
          "print('submitted')")


async def _class(hub, folder) -> dict:
    """Every student runs their copy of notebook 05 (in `folder` of their home) in their own kernel at
    once, then submits hw05."""
    async def student(name):
        path = f"{folder}/notebooks/{NOTEBOOK}"
        status, raw = await asyncio.to_thread(hub.request, "GET", f"/user/{name}/api/contents/{path}")
        assert status == 200, f"{name} has no {path}: {raw[:300]!r}"
        stored = [c for c in json.loads(raw)["content"]["cells"] if c["cell_type"] == "code"]
        kernel = await kernel_client.Kernel.open(hub.url, hub.token, name, path)
        start = time.perf_counter()
        try:
            for cell in stored:
                reply = await kernel.execute(cell["source"])
                raises = "raises-exception" in kernel_client.markers(cell) or "nbval-raises-exception" in \
                    kernel_client.markers(cell)
                assert reply.status == ("error" if raises else "ok"), f"{name}: {cell['source'][:200]}\n{reply.error}"
                assert kernel_client.cell_outputs_match(cell, reply), \
                    f"{name}: the outputs of\n{cell['source'][:300]}\ndiffer from the stored ones:\n" \
                    f"{kernel_client.comparable(reply.outputs)!r:.3000}"
            seconds = time.perf_counter() - start
            handed_in = await kernel.execute("import os\n" + SUBMIT, timeout=300)
            printed = "".join(o.get("text", "") for o in handed_in.outputs)
            assert handed_in.status == "ok" and printed.split() == ["hub", "submitted"], (name, handed_in)
        finally:
            await kernel.close()
        return name, seconds
    return dict(await asyncio.gather(*(student(n) for n in STUDENTS)))


# ------------------------------------------------------------------------------------ config.yaml

def _values() -> dict:
    import yaml
    return yaml.safe_load((DEPLOY / "config.yaml").read_text())


def _bytes(quantity: str) -> int:
    """KubeSpawner's sizes: K, M, G, T are powers of 1024 (jupyterhub.traitlets.ByteSpecification)."""
    units = {"K": 1, "M": 2, "G": 3, "T": 4}
    return int(float(quantity[:-1]) * 1024 ** units[quantity[-1]]) if quantity[-1] in units else int(quantity)


def test_config_yaml_agrees_with_the_image_the_exchange_and_the_links():
    from traitlets.config import Config
    from course_lib.lab.course_lab import BRANCH, COURSE_REPO
    values, dockerfile = _values(), (DEPLOY / "Dockerfile").read_text()
    image = f"{values['singleuser']['image']['name']}:{values['singleuser']['image']['tag']}"
    assert f"-t {image} " in dockerfile and f"-t {image} " in (DEPLOY / "README.md").read_text(), \
        "the Dockerfile and the README build the image config.yaml runs"
    chart, hub_version = re.search(r"Chart (\S+) runs JupyterHub (\d+)\.", (DEPLOY / "config.yaml").read_text()).groups()
    assert f"--version {chart} " in (DEPLOY / "config.yaml").read_text() + (DEPLOY / "README.md").read_text()
    assert re.search(rf"ARG JUPYTERHUB_VERSION={hub_version}\.", dockerfile), "the image's JupyterHub is the chart's"
    hook = " ".join(values["singleuser"]["lifecycleHooks"]["postStart"]["exec"]["command"])
    assert f"gitpuller {COURSE_REPO} {BRANCH} {links.target_folder()} || true" in hook
    config = Config()
    exec((DEPLOY / "nbgrader_config.py").read_text(), {"get_config": lambda: config})
    mounts = {m["name"]: m["mountPath"] for m in values["singleuser"]["storage"]["extraVolumeMounts"]}
    assert mounts["nbgrader-exchange"] == config.Exchange.root == "/srv/nbgrader/exchange"
    assert "student_id" not in config.CourseDirectory, "without JUPYTERHUB_USER nbgrader names no student"
    assert "useradd --create-home --uid 1000 --gid 100" in dockerfile and " jovyan" in dockerfile, \
        "nbgrader names a submission after the hub user only for the OS user jovyan"
    assert values["singleuser"]["uid"] == 1000 and "spawner.uid = 1001" in values["hub"]["extraConfig"]["instructors"]


def test_config_yaml_limits_are_sized_from_the_class_load_measurement():
    source = re.search(r"Sized from (benchmarks/results/\S+) ", (DEPLOY / "config.yaml").read_text())[1]
    rows = json.loads((REPO / source / "class_load.json").read_text())["summary"]
    assert [r["students"] for r in rows] == [10, 20, 40]
    cpu, memory = _values()["singleuser"]["cpu"], _values()["singleuser"]["memory"]
    per_core = min(r["students_per_core_at_70pct"] for r in rows)
    assert abs(cpu["guarantee"] * per_core - 1) < 0.1, "cpu.guarantee reserves 1 / (students per core at 70 %)"
    assert cpu["limit"] == 1, "a simulation runs on one core"
    peak_pss, peak_rss = max(r["peak_pss_mib"] for r in rows), max(r["peak_rss_mib"] for r in rows)
    assert peak_pss <= _bytes(memory["guarantee"]) / 2**20 < 1.5 * peak_pss
    assert _bytes(memory["limit"]) / 2**20 >= 2 * peak_rss, "room for the server and more than one notebook's kernel"
