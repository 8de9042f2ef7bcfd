"""The class hub (deploy/), for real on this machine:

- deploy/Dockerfile's steps run as a shell script (its folders moved to a temporary one; apt-get and
  useradd checked, not run) build the students' environment: the course, JupyterHub, nbgitpuller,
  nbgrader with ngshare's client, and their settings;
- a real JupyterHub from that environment (deploy/local_hub.py: local process spawner, dummy
  authenticator, configurable-http-proxy from npm, ngshare as its exchange service, all on 127.0.0.1)
  gets three students and an instructor through its REST API and starts the students' servers;
- meanwhile the instructor, with their own hub token, opens the course in ngshare, enrolls the class,
  exports notebook 00 with `python -m course_lib instructor nbgrader` (from the instructor repository:
  a clean clone of HEAD), generates and releases it (the course id is course_lib.lab.course.COURSE_ID);
- each student follows the nbgitpuller link (deploy/links.py) to notebook 05, and their server
  clones the course from a local copy of this repository's HEAD into their home;
- each runs their own copy of notebook 05 top to bottom in their own kernel, all at the same time,
  and every cell's outputs are the stored ones (compared as nbval does); the kernel knows it is on
  a hub (course_lib's hints name the instructor there);
- alice and bob fetch notebook 00 and submit it from their kernels; then bob hands in as alice:
  `--student=alice` is refused, JUPYTERHUB_USER=alice is filed as bob's;
- bob adds a cell to notebook 05 and the course appends one: his next click on the link keeps his
  notebook as saved and the course's version beside it, and says so (the image's merge driver,
  course_lib/lab/student/keepboth.py; tests/lab/test_hub_pull.py covers the cases without a hub);
- the instructor collects (each submission its own student's, alice's once), autogrades, generates and
  releases feedback, and alice fetches hers.

Plus, quickly, what cannot run here: deploy/config.yaml's image, limits, links and exchange agree
with the Dockerfile, the class-load measurement, ngshare.yaml and nbgrader_config.py (one course id).

Needs PyPI (or pip's cache), git and configurable-http-proxy; skips, saying how, without them.
Tests the committed HEAD. About 3.5 minutes on 2 cores (the image's pip install is half of it).
"""
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from fresh_env import python312, run, run_dockerfile
from live_progress import say

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
sys.path.insert(0, str(DEPLOY))
import kernel_client  # noqa: E402
import links  # noqa: E402
import local_hub  # noqa: E402
from course_lib.lab.instructor.assignments import COURSE_ID  # noqa: E402

STUDENTS = ["s1", "s2", "s3"]
ALICE, BOB, INSTRUCTOR = "s1", "s2", "instructor"
NOTEBOOK = "05_bank_conflicts.ipynb"          # what the class runs on the hub
ASSIGNMENT = "00_start_here"                  # what it hands in: the cheapest notebook with an exercise
NGSHARE = ["ngshare==0.6.0", "sqlalchemy>=1.4,<2", "alembic>=1.13,<1.14"]    # what its image runs


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    """(environment, python, context) of the students' image, built by deploy/Dockerfile's steps from HEAD,
    plus ngshare for the hub's exchange service (in the cluster its own chart runs it: deploy/ngshare.yaml)."""
    if not shutil.which("git") or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout")
    tmp = tmp_path_factory.mktemp("image")
    say("building the students' image: deploy/Dockerfile's steps as a script (minutes)")
    context = tmp / "context"                       # what `docker build` gets: the committed files
    subprocess.run(["git", "clone", "-q", str(REPO), str(context)], check=True, capture_output=True)
    env, home, cmd = run_dockerfile(DEPLOY / "Dockerfile", context, tmp, python312() or sys.executable)
    assert cmd == ["jupyterhub-singleuser"]
    python = shutil.which("python", path=env["PATH"])
    assert python and python.startswith(str(tmp)), f"the image's python is not the one it built: {python}"
    site = tmp / "ngshare-site"                     # ngshare 0.6.0 needs SQLAlchemy 1.4; the hub has 2.x
    run([python, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), *NGSHARE], "pip install ngshare",
        env=env)
    return env, python, context, site


@pytest.mark.slow
def test_a_class_gets_runs_hands_in_and_gets_feedback_on_a_real_hub(image, tmp_path):
    proxy = local_hub.find_proxy()
    if proxy is None:
        pytest.skip(local_hub.PROXY_HINT)
    env, python, context, site = image
    remote = tmp_path / "remote" / "transpose-course"      # a local stand-in for the GitHub repository
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    subprocess.run(["git", "-C", str(REPO), "push", "-q", str(remote), "HEAD:refs/heads/main"], check=True,
                   capture_output=True)
    course = tmp_path / "instructor" / "course"
    times, start = {}, time.perf_counter()
    # config.yaml's extraEnv, and the image's git config (its ENV reaches every process of a pod; a hub's
    # local spawner passes servers only what it is told)
    servers_env = {"NBGITPULLER_APP": "lab", "GIT_CONFIG_SYSTEM": env["GIT_CONFIG_SYSTEM"]}
    with local_hub.LocalHub(tmp_path / "hub", python=python, proxy=proxy, hub_env=env, ngshare_site=site,
                            admins=[INSTRUCTOR], environment=servers_env) as hub:
        times["hub up"] = time.perf_counter() - start
        hub.add_students(STUDENTS + [INSTRUCTOR])
        # the instructor works in a terminal on the hub: their own token, their own course folder
        teacher = dict(env, JUPYTERHUB_USER=INSTRUCTOR, JUPYTERHUB_API_TOKEN=hub.user_token(INSTRUCTOR),
                       NGSHARE_URL=hub.environment["NGSHARE_URL"], NBGRADER_COURSE_DIR=str(course))
        with ThreadPoolExecutor(1) as pool:                 # the release while the servers start
            released = pool.submit(_release, python, teacher, course, context)
            times["servers ready"] = max(hub.start_servers(STUDENTS).values())
            released.result()
        times["released"] = time.perf_counter() - start
        for student in STUDENTS:
            _pull(hub, student, f"file://{remote}")
        times["pulled"] = time.perf_counter() - start
        ran = asyncio.run(_class(hub, links.target_folder(f"file://{remote}")))
        times["notebook 05, all students"] = max(ran.values())
        asyncio.run(_bob_poses_as_alice(hub))
        times["handed in"] = time.perf_counter() - start
        _course_update_kept_both_ways(hub, f"file://{remote}", tmp_path / "hub" / "homes" / BOB)
        times["updated"] = time.perf_counter() - start
        _grade(python, teacher, course, hub)
        times["graded"] = time.perf_counter() - start
        feedback = asyncio.run(_in_kernel(hub, ALICE, FETCH_FEEDBACK))
        assert feedback.split()[-1] == f"{ASSIGNMENT}.html", f"{ALICE} got no feedback: {feedback}"
    times["total"] = time.perf_counter() - start
    print("class hub timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in times.items()))


def _release(python, env, course, instructor_repo):
    """The ngshare admin opens the course and enrolls the class; the instructor exports notebook 00 from
    the instructor repository (`instructor nbgrader`: it has the solutions), generates and releases it."""
    manage = [str(Path(python).parent / "ngshare-course-management")]
    run(manage + ["create_course", COURSE_ID, INSTRUCTOR], "create the course", env=env)
    roster = course.parent / "students.csv"
    roster.parent.mkdir(parents=True, exist_ok=True)
    roster.write_text("student_id,first_name,last_name,email\n" + "".join(f"{s},,,\n" for s in STUDENTS))
    run(manage + ["add_students", COURSE_ID, str(roster), "--no-gb"], "enroll the class", env=env)
    run([sys.executable, "-m", "course_lib", "instructor", "nbgrader", "--out", str(course),
         f"notebooks/{ASSIGNMENT}.ipynb"], "instructor nbgrader", cwd=instructor_repo, env=dict(env, PATH=os.environ["PATH"]))
    for step in ("generate_assignment", "release_assignment"):
        run([python, "-m", "nbgrader", step, ASSIGNMENT], f"nbgrader {step}", cwd=course, env=env)


def _grade(python, env, course, hub):
    """The instructor collects, autogrades and hands feedback back. Each student's submission is their own:
    bob's attempts to hand in as alice were refused or filed as bob's."""
    for step in ("collect", "autograde", "generate_feedback", "release_feedback"):
        run([python, "-m", "nbgrader", step, ASSIGNMENT], f"nbgrader {step}", cwd=course, env=env)
    who = {p.parent.parent.name: p.read_text() for p in (course / "submitted").glob(f"*/{ASSIGNMENT}/who.txt")}
    assert who == {ALICE: ALICE, BOB: f"{BOB}, posing as {ALICE}"}, who
    status, raw = hub.request("GET", f"/services/ngshare/submissions/{COURSE_ID}/{ASSIGNMENT}/{ALICE}",
                              headers={"Authorization": f"token {env['JUPYTERHUB_API_TOKEN']}"})
    assert status == 200 and len(json.loads(raw)["submissions"]) == 1, f"{ALICE} handed in once: {raw[:500]!r}"
    assert list((course / "feedback").glob(f"*/{ASSIGNMENT}/{ASSIGNMENT}.html")), "no feedback generated"


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
    return "".join(e.get("output", "") for e in events)


def _course_update_kept_both_ways(hub, repo, home):
    """bob saved notebook 05 with a cell of his own at the end; the course appends a cell to it; his next
    click on the link keeps his notebook as saved and the course's version beside it, and says so."""
    mine = home / links.target_folder(repo) / "notebooks" / NOTEBOOK
    nb = json.loads(mine.read_text())
    nb["cells"].append({"cell_type": "code", "execution_count": None, "id": "bobs-cell", "metadata": {},
                        "outputs": [], "source": ["# bob's own cell"]})
    mine.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    saved = mine.read_bytes()
    instructor = home.parent.parent / "instructor-clone"
    subprocess.run(["git", "clone", "-q", repo, str(instructor)], check=True)
    course = json.loads((instructor / "notebooks" / NOTEBOOK).read_text())
    course["cells"].append({"cell_type": "markdown", "id": "new-exercise", "metadata": {}, "source": ["## New"]})
    (instructor / "notebooks" / NOTEBOOK).write_text(json.dumps(course, indent=1, ensure_ascii=False) + "\n")
    git = ["git", "-C", str(instructor), "-c", "user.name=instructor", "-c", "user.email=i@example.edu"]
    subprocess.run(git + ["commit", "-qam", "05: a new exercise"], check=True)
    subprocess.run(git + ["push", "-q", "origin", "HEAD:main"], check=True)
    said = _pull(hub, BOB, repo)
    [copy] = mine.parent.glob(NOTEBOOK.replace(".ipynb", ".course-*.ipynb"))
    assert mine.read_bytes() == saved and copy.read_bytes() == (instructor / "notebooks" / NOTEBOOK).read_bytes()
    assert f"beside it as {copy.name}" in said and copy.name in (mine.parent / "COURSE-UPDATES.md").read_text()


# what a student runs in their kernel (or a terminal of their server: the same environment and token)
NBGRADER = ("import os, pathlib, subprocess, course_lib.compile.platforms as p\n"
            "home = pathlib.Path.home()\n"
            "def nbgrader(*args, env=None):\n"
            "    r = subprocess.run(['nbgrader', *args], cwd=home, capture_output=True, text=True, env=env)\n"
            "    return r.returncode, r.stdout + r.stderr\n")
SUBMIT = NBGRADER + ("print(p.place())\n"
                     "code, out = nbgrader('fetch_assignment', '{a}')\n"
                     "assert code == 0, out\n"
                     "(home / '{a}' / 'who.txt').write_text(os.environ['JUPYTERHUB_USER'])\n"
                     "code, out = nbgrader('submit', '{a}')\n"
                     "assert code == 0 and 'Failed' not in out, out\n"
                     "print('submitted')")
POSE = NBGRADER + ("(home / '{a}' / 'who.txt').write_text('{bob}, posing as {alice}')\n"
                   "code, out = nbgrader('submit', '{a}', '--student={alice}')\n"
                   "print('--student:', code, 'not possible with ngshare' in out)\n"
                   "code, out = nbgrader('submit', '{a}', env=dict(os.environ, JUPYTERHUB_USER='{alice}'))\n"
                   "print('JUPYTERHUB_USER:', code, 'Failed' in out)")
FETCH_FEEDBACK = NBGRADER + ("code, out = nbgrader('fetch_feedback', '{a}')\n"
                             "assert code == 0, out\n"
                             "print(*sorted(p.name for p in (home / '{a}' / 'feedback').glob('*/*.html')))")


async def _in_kernel(hub, name, code: str) -> str:
    """Run `code` (formatted with the assignment and the two students) in a new kernel of `name`; its print."""
    kernel = await kernel_client.Kernel.open(hub.url, hub.token, name, "terminal.ipynb")
    try:
        reply = await kernel.execute(code.format(a=ASSIGNMENT, alice=ALICE, bob=BOB), timeout=300)
    finally:
        await kernel.close()
    assert reply.status == "ok", (name, reply.error)
    return "".join(o.get("text", "") for o in reply.outputs)


async def _bob_poses_as_alice(hub):
    """bob hands in under alice's name twice, after alice handed in: refused, then filed as bob's."""
    said = (await _in_kernel(hub, BOB, POSE)).splitlines()
    assert said == ["--student: 1 True", "JUPYTERHUB_USER: 0 False"], said


async def _class(hub, folder) -> dict:
    """Every student runs their copy of notebook 05 (in `folder` of their home) in their own kernel at
    once; alice and bob then fetch the released assignment and submit it."""
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
            if name in (ALICE, BOB):                 # two hand-ins are enough: each autograde runs notebook 00
                handed_in = await kernel.execute(SUBMIT.format(a=ASSIGNMENT), timeout=300)
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


def test_config_yaml_agrees_with_the_image_the_exchange_and_the_links(monkeypatch):
    import types
    import yaml
    from traitlets.config import Config
    from course_lib.lab.course import BRANCH, COURSE_REPO
    values, dockerfile = _values(), (DEPLOY / "Dockerfile").read_text()
    image = f"{values['singleuser']['image']['name']}:{values['singleuser']['image']['tag']}"
    assert f"-t {image} " in dockerfile and f"-t {image} " in (DEPLOY / "README.md").read_text(), \
        "the Dockerfile and the README build the image config.yaml runs"
    chart, hub_version = re.search(r"Chart (\S+) runs JupyterHub (\d+)\.", (DEPLOY / "config.yaml").read_text()).groups()
    assert f"--version {chart} " in (DEPLOY / "config.yaml").read_text() + (DEPLOY / "README.md").read_text()
    assert re.search(rf"ARG JUPYTERHUB_VERSION={hub_version}\.", dockerfile), "the image's JupyterHub is the chart's"
    hook = " ".join(values["singleuser"]["lifecycleHooks"]["postStart"]["exec"]["command"])
    assert f"gitpuller {COURSE_REPO} {BRANCH} {links.target_folder()} || true" in hook
    assert "GIT_CONFIG_SYSTEM=${VENV}/etc/gitconfig" in dockerfile and "keep-both --install --system" in dockerfile, \
        "the image defines the merge driver that keeps both sides of a pull (course_lib/lab/student/keepboth.py)"
    assert "* merge=course-keep-both" in (REPO / ".gitattributes").read_text().splitlines()
    config, client = Config(), types.ModuleType("ngshare_exchange")       # the image's client, as it configures
    client.configureExchange = lambda c, url=None: c.ExchangeFactory.update(exchange="ngshare_exchange.Exchange")
    monkeypatch.setitem(sys.modules, "ngshare_exchange", client)
    exec((DEPLOY / "nbgrader_config.py").read_text(), {"get_config": lambda: config})
    assert config.CourseDirectory.course_id == COURSE_ID, "the hub's course id is the one `instructor nbgrader` writes"
    assert config.ExchangeFactory.exchange == "ngshare_exchange.Exchange", "the exchange is ngshare's"
    assert "student_id" not in config.CourseDirectory, "who hands in comes from the hub's token, never from config"
    ngshare, service = yaml.safe_load((DEPLOY / "ngshare.yaml").read_text()), values["hub"]["services"]["ngshare"]
    assert service["url"] == "http://ngshare:8080" and ngshare["ngshare"]["hub_api_url"] == "http://hub:8081/hub/api"
    assert "ngshare_exchange==" in dockerfile and "extraVolumes" not in values["singleuser"]["storage"], \
        "the image has ngshare's client; no shared exchange volume is mounted in students' servers"


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
