"""What cannot run here (no Kubernetes, no Helm), checked as config: deploy/dask-gateway.yaml, the Dask Gateway
that grades a class in parallel on the hub's cluster (issue 32, item 6), agrees with deploy/config.yaml (the
same image, the same service token and address) and starts clusters for the hub's admins only; config.yaml's
spawner hook hands each student only their own variant key (item 5), the one course_lib computes from the
class's secret, and never the secret or a classmate's key. Quick: the hooks run here with stand-ins for
KubeSpawner's spawner and for dask_gateway_server's Options."""
import sys
import tomllib
import types
from pathlib import Path

import pytest
import yaml

from course_lib.teach import variants

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
REPO = DEPLOY.parent
SECRET = "a7c0ffee0123456789abcdef01234567"


def _yaml(name):
    return yaml.safe_load((DEPLOY / name).read_text())


def test_the_gateway_runs_the_hubs_image_behind_the_hub_with_workers_that_can_sandbox():
    gateway, hub = _yaml("dask-gateway.yaml")["gateway"], _yaml("config.yaml")
    assert gateway["backend"]["image"] == hub["singleuser"]["image"], "workers run the instructor's course_lib"
    assert gateway["auth"]["type"] == "jupyterhub" and gateway["auth"]["jupyterhub"]["apiUrl"] == "http://hub:8081/hub/api"
    service = hub["hub"]["services"]["dask-gateway"]
    assert service["api_token"].startswith("REPLACE") and gateway["auth"]["jupyterhub"]["apiToken"].startswith("REPLACE")
    assert "config.yaml" in gateway["auth"]["jupyterhub"]["apiToken"] and "dask-gateway.yaml" in service["api_token"]
    assert hub["singleuser"]["extraEnv"]["DASK_GATEWAY__ADDRESS"].endswith("/services/dask-gateway")
    assert hub["singleuser"]["extraEnv"]["DASK_GATEWAY__AUTH__TYPE"] == "jupyterhub"
    worker = gateway["backend"]["worker"]
    assert worker["threads"] == 1 and worker["cores"]["limit"] == 1, "one submission per worker, a core each"
    context = worker["extraContainerConfig"]["securityContext"]
    assert context["seccompProfile"] == {"type": "Unconfined"} and not context.get("privileged"), \
        "user namespaces for bubblewrap, and nothing more"
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "bubblewrap" in dockerfile, "the image sandboxes submissions"
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"distributed", "dask-gateway"} <= {d.split(">")[0] for d in extras["hub"]}, "workers' entry points"
    assert any(d.startswith("distributed") for d in extras["instructor"])


class _Options:
    def __init__(self, *fields, handler=None):
        self.fields, self.handler = fields, handler


def test_only_the_hubs_admins_get_a_grading_cluster(monkeypatch):
    options = types.ModuleType("dask_gateway_server.options")
    options.Options, options.Integer = _Options, lambda name, **kw: (name, kw)
    monkeypatch.setitem(sys.modules, "dask_gateway_server", types.ModuleType("dask_gateway_server"))
    monkeypatch.setitem(sys.modules, "dask_gateway_server.options", options)
    from traitlets.config import Config
    c = Config()
    for code in _yaml("dask-gateway.yaml")["gateway"]["extraConfig"].values():
        exec(code, {"c": c})
    handler = c.Backend.cluster_options.handler
    user = lambda name, admin: types.SimpleNamespace(name=name, admin=admin, groups=[])      # noqa: E731
    with pytest.raises(PermissionError, match="only the hub's admins"):
        handler(types.SimpleNamespace(workers=8), user("alice", False))
    assert handler(types.SimpleNamespace(workers=8), user("instructor", True)) == {"cluster_max_workers": 8}
    assert c.ClusterConfig.idle_timeout > 0


def _spawned_env(name: str, secret: str | None, monkeypatch) -> dict:
    """The environment deploy/config.yaml's hub gives `name`'s server: singleuser.extraEnv plus the hook's."""
    from traitlets.config import Config
    values, c = _yaml("config.yaml"), Config()
    if secret is None:
        monkeypatch.delenv("COURSE_LIB_CLASS_SECRET", raising=False)
    else:
        monkeypatch.setenv("COURSE_LIB_CLASS_SECRET", secret + "\n")    # as kubectl's --from-file stores it
    for code in values["hub"]["extraConfig"].values():
        exec(code, {"c": c})
    spawner = types.SimpleNamespace(user=types.SimpleNamespace(name=name))
    hook = c.KubeSpawner.environment.get_value({})
    return {**values["singleuser"]["extraEnv"], **{k: v(spawner) if callable(v) else v for k, v in hook.items()}}


def test_the_hub_hands_each_student_only_their_own_variant_key(monkeypatch):
    secret_ref = _yaml("config.yaml")["hub"]["extraEnv"]["COURSE_LIB_CLASS_SECRET"]["valueFrom"]["secretKeyRef"]
    assert secret_ref["optional"], "a class without variants starts without the secret"
    keys = {}
    for name in ("alice", "bob", "carol"):
        env = _spawned_env(name, SECRET, monkeypatch)
        assert env[variants.ENV_KEY] == variants.student_key(SECRET, name), "the key course_lib computes"
        assert not any(SECRET in str(v) for v in env.values()) and "COURSE_LIB_CLASS_SECRET" not in env
        assert variants.ENV_OLD_SEED not in env
        keys[name] = env[variants.ENV_KEY]
    assert len(set(keys.values())) == 3, "each student's key is their own"
    assert _spawned_env("alice", None, monkeypatch)[variants.ENV_KEY] == "", "no secret: no variants"
