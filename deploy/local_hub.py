"""A class hub on this machine: a real JupyterHub with the course's single-user settings, for trying
the deployment and for the tests (tests/lab/test_hub.py) and the class-load benchmark.

    python deploy/local_hub.py --students 3          # prints the hub's URL and the students' links

    with LocalHub(scratch_folder) as hub:            # started; stopped (servers, kernels, proxy) on exit
        hub.add_students(["s1", "s2"])
        hub.start_servers(["s1", "s2"])              # all at once; returns when every one answers
        hub.api("GET", "/users/s1")                  # the hub's REST API, as the class-admin service
        hub.user_token("instructor")                 # a user's token, as a terminal in their server has it

It is the hub of deploy/config.yaml without Kubernetes: JupyterHub's local process spawner (each
student a process of this OS user, with a home folder of their own under the scratch folder),
the dummy authenticator (any password), configurable-http-proxy from npm, everything on 127.0.0.1.
The students' servers run ``jupyterhub-singleuser`` of the Python given (the image's environment
in the tests), so they get what the image gives: the course, JupyterLab's course settings,
nbgitpuller and nbgrader. With ``ngshare_site`` nbgrader's exchange is ngshare, a service of this
hub (deploy/ngshare.yaml in the cluster): each request carries the user's hub token, so a
submission is filed under the user the hub says, whatever the student's environment claims. Not
for real students: their servers run as one OS user, so one student's process can read another's
token from /proc (in the cluster each server is a pod of its own).

Kernels are driven by deploy/kernel_client.py; this module only runs the hub and talks REST.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

DEPLOY = Path(__file__).resolve().parent
SERVICE = "class-admin"
PROXY_HINT = ("configurable-http-proxy (npm) was not found: `npm install -g configurable-http-proxy`, or "
              "`npm install --prefix .ci/chp configurable-http-proxy` in the course folder (.ci/run does that)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children, theirs...), from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop()
        found.append(p)
        todo += children.get(p, [])
    return found


def find_proxy() -> str | None:
    """configurable-http-proxy on PATH, or installed by .ci/run under .ci/chp."""
    local = DEPLOY.parent / ".ci" / "chp" / "node_modules" / ".bin" / "configurable-http-proxy"
    return shutil.which("configurable-http-proxy") or (str(local) if local.exists() else None)


# ngshare binds every interface (its main() listens on 0.0.0.0 for a cluster's proxy); this hub stays on
# 127.0.0.1, so its service is started with tornado's listen() held to loopback
NGSHARE_ON_LOOPBACK = ("import sys, tornado.httpserver as h; listen = h.HTTPServer.listen\n"
                       "h.HTTPServer.listen = lambda self, port, address='', **kw: listen(self, port, '127.0.0.1', **kw)\n"
                       "from ngshare.ngshare import main; main(sys.argv[1:])")


def has_ngshare(python: str, site: str) -> bool:
    """Whether `python` runs ngshare from `site`. ngshare 0.6.0 needs SQLAlchemy 1.4 (under 2.0 a released
    assignment is silently not stored: 2.0 no longer adds objects to the session through backrefs) while
    the hub has 2.x, so it gets a folder of its own, first on its PYTHONPATH, as its own image in the cluster."""
    return subprocess.run([python, "-c", "import ngshare.ngshare"], env=dict(os.environ, PYTHONPATH=site),
                          capture_output=True).returncode == 0


CONFIG = '''\
# written by deploy/local_hub.py: a hub on 127.0.0.1 for trying the class deployment
c = get_config()  # noqa
c.JupyterHub.ip = c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.port, c.JupyterHub.hub_port = {port}, {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.pid_file = {folder!r} + "/proxy.pid"
c.JupyterHub.db_url = "sqlite:///" + {folder!r} + "/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = {folder!r} + "/cookie_secret"
c.JupyterHub.pid_file = {folder!r} + "/hub.pid"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {folder!r} + "/homes/{{username}}"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.ip = "127.0.0.1"
c.Spawner.default_url = "/lab"
c.Spawner.args = {args!r}
c.Spawner.environment = {environment!r}
c.Spawner.start_timeout = c.Spawner.http_timeout = {start_timeout}
c.JupyterHub.concurrent_spawn_limit = 200
c.JupyterHub.services = [{{"name": "{service}", "api_token": {token!r}}}] + {services}
c.JupyterHub.load_roles = [{{"name": "{service}-role", "services": ["{service}"],
    "scopes": ["admin:users", "admin:servers", "admin:server_state", "access:servers", "read:hub", "tokens"]}}]
'''


class LocalHub:
    """A JupyterHub in `folder` whose students run `python`'s jupyterhub-singleuser; with ngshare (the
    nbgrader exchange as a hub service, deploy/ngshare.yaml), `admins` its admins, when `python` finds
    it in `ngshare_site` (a folder from `pip install --target DIR ngshare==0.6.0 "sqlalchemy<2"`)."""

    def __init__(self, folder, python: str = sys.executable, environment: dict | None = None,
                 proxy: str | None = None, start_timeout: int = 300, hub_env: dict | None = None,
                 ngshare_site=None, admins=("instructor",)):
        self.folder, self.python = Path(folder).resolve(), python
        self.proxy = proxy or find_proxy()
        if self.proxy is None:
            raise FileNotFoundError(PROXY_HINT)
        self.environment, self.start_timeout = dict(environment or {}), start_timeout
        self.hub_env = dict(os.environ if hub_env is None else hub_env)     # the hub's; servers keep PATH, LANG...
        self.port, self.token, self.process = free_port(), secrets.token_hex(32), None
        self.url = f"http://127.0.0.1:{self.port}"
        self.ngshare_site = str(ngshare_site) if ngshare_site else None
        self.ngshare = bool(self.ngshare_site) and has_ngshare(python, self.ngshare_site)
        self.admins = list(admins)
        if self.ngshare:      # students reach it through the proxy, as in the cluster (deploy/nbgrader_config.py)
            self.environment.setdefault("NGSHARE_URL", f"{self.url}/services/ngshare")

    def services(self) -> list[dict]:
        """ngshare as a service the hub starts, storing under the hub's folder, on 127.0.0.1 only."""
        if not self.ngshare:
            return []
        store = self.folder / "ngshare"
        (store / "files").mkdir(parents=True, exist_ok=True)
        return [{"name": "ngshare", "url": f"http://127.0.0.1:{free_port()}",
                 "environment": {"PYTHONPATH": self.ngshare_site},
                 "command": [self.python, "-c", NGSHARE_ON_LOOPBACK, "--admins", ",".join(self.admins),
                             "--database", f"sqlite:///{store}/ngshare.db", "--storage", f"{store}/files/"]}]

    def config(self) -> str:
        bin_dir = Path(self.python).parent
        args = ["--ServerApp.allow_root=True"] if os.geteuid() == 0 else []   # jupyter_server refuses root
        return CONFIG.format(port=self.port, hub_port=free_port(), proxy_api_port=free_port(), proxy=self.proxy,
                             folder=str(self.folder), singleuser=str(bin_dir / "jupyterhub-singleuser"), args=args,
                             environment=self.environment, start_timeout=self.start_timeout, service=SERVICE,
                             token=self.token, services=repr(self.services()))

    def start(self, timeout: float = 90) -> "LocalHub":
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "jupyterhub_config.py").write_text(self.config())
        env = dict(self.hub_env, PATH=os.pathsep.join([str(Path(self.python).parent), str(Path(self.proxy).parent),
                                                       self.hub_env.get("PATH", "")]))
        with open(self.folder / "hub.log", "ab") as log:
            self.process = subprocess.Popen([self.python, "-m", "jupyterhub", "-f", "jupyterhub_config.py"],
                                            cwd=self.folder, env=env, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterHub ended at start:\n{self.log()[-3000:]}")
            try:
                if self.api("GET", "/")[0] == 200:
                    return self
            except (OSError, ValueError):     # the proxy answers (an error page) before the hub does
                pass
            time.sleep(0.3)
        raise TimeoutError(f"JupyterHub did not answer in {timeout} s:\n{self.log()[-3000:]}")

    def log(self) -> str:
        return (self.folder / "hub.log").read_text(errors="replace") if (self.folder / "hub.log").exists() else ""

    # ------------------------------------------------------------------------------------ REST

    def request(self, method: str, path: str, body=None, timeout: float = 60, headers=None) -> tuple[int, bytes]:
        """(status, body) of `path` through the proxy, as the class-admin service."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Authorization": f"token {self.token}", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def api(self, method: str, path: str, body=None, timeout: float = 60):
        """(status, JSON) of the hub's REST API at /hub/api`path`."""
        status, raw = self.request(method, "/hub/api" + path, body, timeout)
        return status, (json.loads(raw) if raw.strip() else None)

    def add_students(self, names) -> None:
        status, body = self.api("POST", "/users", {"usernames": list(names)})
        if status != 201:
            raise RuntimeError(f"creating students: {status} {body}")

    def start_servers(self, names, timeout: float | None = None) -> dict:
        """Ask for every student's server at once; wait until each is ready. {name: seconds to ready}."""
        start, waiting = time.monotonic(), set(names)
        # the hub answers a POST when the server is up or after 10 s (202): ask for all of them at once
        with ThreadPoolExecutor(max_workers=min(32, len(waiting) or 1)) as pool:
            answers = dict(zip(names, pool.map(
                lambda n: self.api("POST", f"/users/{n}/server", timeout=self.start_timeout), names)))
        for name, (status, body) in answers.items():
            # a 500 can come with the spawn still going (JupyterHub's slow-spawn wait, past 10 s on a loaded
            # machine: InvalidStateError): the server the hub then lists, pending or ready, is what counts
            if status not in (201, 202) and not self.api("GET", f"/users/{name}")[1].get("servers"):
                raise RuntimeError(f"starting {name}'s server: {status} {body}\n{self.log()[-2000:]}")
        ready, end = {}, start + (timeout or self.start_timeout)
        while waiting and time.monotonic() < end:
            for name in sorted(waiting):
                server = (self.api("GET", f"/users/{name}")[1].get("servers") or {}).get("", {})
                if server.get("ready"):
                    ready[name] = time.monotonic() - start
                    waiting.discard(name)
            time.sleep(0.5)
        if waiting:
            raise TimeoutError(f"servers not ready: {sorted(waiting)}\n{self.log()[-3000:]}")
        return ready

    def user_token(self, name: str, note: str = "a terminal on the hub") -> str:
        """A hub API token of user `name`: what their server's terminal holds as $JUPYTERHUB_API_TOKEN."""
        status, body = self.api("POST", f"/users/{name}/tokens", {"note": note, "expires_in": 3600})
        if status != 201:
            raise RuntimeError(f"a token for {name}: {status} {body}")
        return body["token"]

    def server_pid(self, name: str) -> int:
        return self.api("GET", f"/users/{name}")[1]["servers"][""]["state"]["pid"]

    def stop(self, grace: float = 120) -> None:
        """Stop the hub, which stops every student's server (all at once) and the proxy; then kill
        whatever of them is left after `grace` seconds."""
        if self.process is None:
            return
        pids = []
        try:
            for user in self.api("GET", "/users", timeout=10)[1]:
                if user.get("servers"):
                    server = self.server_pid(user["name"])
                    pids += [server, *descendants(server)]          # its kernels run in sessions of their own
        except (OSError, ValueError, KeyError, TypeError):
            pass
        proxy_pid = self.folder / "proxy.pid"
        pids += [int(proxy_pid.read_text())] if proxy_pid.exists() else []
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        for pid in pids:                 # only what this hub started, if it is still there
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.process = None

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()          # a hub that did not come up must not outlive the test
            raise

    def __exit__(self, *exc):
        self.stop()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="a class hub on 127.0.0.1 (dummy login: any password)")
    ap.add_argument("--students", type=int, default=3)
    ap.add_argument("--folder", default="build/local-hub")
    ap.add_argument("--ngshare-site", help='the exchange: pip install --target DIR ngshare==0.6.0 "sqlalchemy<2"')
    args = ap.parse_args(argv)
    from links import link
    with LocalHub(args.folder, ngshare_site=args.ngshare_site) as hub:
        names = [f"student{i + 1}" for i in range(args.students)]
        hub.add_students(names)
        print(f"hub: {hub.url}  (log in as {', '.join(names)} with any password)")
        print(f"the course's notebooks for each student: {link(hub.url, '00_start_here.ipynb')}")
        print("Ctrl-C stops the hub and every student's server")
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
