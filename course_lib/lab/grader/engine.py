"""Where a batch's submissions are graded: one interface, a local pool of workers or a cluster, on Dask.

    with engine.local(workers=4) as e:                   # LocalPool: a Dask LocalCluster on this machine
    with engine.cluster("tcp://10.0.0.5:8786") as e:     # Cluster: any running Dask scheduler (dask-kubernetes, SSH)
    with engine.gateway(workers=16) as e:                # Cluster: a new one from the hub's Dask Gateway (deploy/)
        for item, outcome in e.map(fn, items): ...       # as each finishes: fn(item), or the exception it raised

Dask's ``distributed`` does the fanning out: a well-kept engine whose scheduler hands work to idle
workers, reschedules the work of a worker that died (so a task either finishes whole or runs again:
nothing half done comes back), and runs the same on one machine as on Kubernetes (Dask Gateway,
dask-kubernetes). A worker runs one submission at a time (one thread): a submission's notebook and its
checker run in sandboxed processes of their own, so one worker per core is the measure. The function and
its items travel to the workers by pickling: a worker needs the same course_lib (the grader's image).
This module knows nothing of grading; batch decides what to run.
"""
from __future__ import annotations

import os
from abc import ABC, abstractmethod
from typing import Callable, Iterable, Iterator


class EngineUnavailable(RuntimeError):
    """The engine cannot start: what is missing and how to get it."""


class Engine(ABC):
    """Runs fn(item) for many items somewhere, and hands each outcome back as it finishes."""
    describe = "an engine"
    workers = 1

    @abstractmethod
    def map(self, fn: Callable, items: Iterable) -> Iterator[tuple[object, object]]:
        """(item, fn(item) or the exception it raised), in the order they finish."""

    def close(self) -> None:
        """Give back what the engine holds (its workers)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _distributed():
    try:
        import distributed
    except ModuleNotFoundError:
        raise EngineUnavailable("grading in parallel needs Dask's `distributed`: pip install \"course-lib[instructor]\""
                                ) from None
    return distributed


class _OnDask(Engine):
    """What both engines share: a distributed.Client, one task per item, outcomes as they complete."""

    def __init__(self, client, describe: str, workers: int, owned=()):
        self.client, self.describe, self.workers, self._owned = client, describe, workers, owned

    def map(self, fn, items):
        distributed = _distributed()
        items = list(items)
        futures = {self.client.submit(fn, item, pure=False): item for item in items}
        for future in distributed.as_completed(futures):
            item = futures.pop(future)
            try:
                yield item, future.result()
            except Exception as exc:          # the task's own error, or one its worker died of twice
                yield item, exc
            finally:
                future.release()

    def close(self):
        for thing in (self.client, *self._owned):
            try:
                thing.close()
            except Exception:                 # already gone (a cluster that shut down first)
                pass


class LocalPool(_OnDask):
    """A Dask LocalCluster of `workers` processes of one thread each on this machine (default: one per core)."""

    def __init__(self, workers: int | None = None):
        distributed = _distributed()
        n = max(1, workers or os.cpu_count() or 1)
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=40)
        super().__init__(distributed.Client(cluster), f"{n} local worker{'s' * (n > 1)}", n, owned=(cluster,))


class Cluster(_OnDask):
    """A cluster elsewhere: a running scheduler's address, or a new cluster from a Dask Gateway."""

    @classmethod
    def at(cls, address: str) -> "Cluster":
        distributed = _distributed()
        try:
            client = distributed.Client(address, timeout="30s")
        except (OSError, TimeoutError) as exc:
            raise EngineUnavailable(f"no Dask scheduler answers at {address} ({exc}); start one (dask scheduler, "
                                    "dask-kubernetes' KubeCluster) or use --gateway / --workers") from None
        n = len(client.scheduler_info().get("workers", {}))
        return cls(client, f"the scheduler at {address} ({n} workers now)", max(n, 1))

    @classmethod
    def from_gateway(cls, workers: int, address: str | None = None) -> "Cluster":
        try:
            from dask_gateway import Gateway
        except ModuleNotFoundError:
            raise EngineUnavailable("--gateway needs dask-gateway's client: pip install dask-gateway (the hub image "
                                    "has it: deploy/Dockerfile)") from None
        gateway = Gateway(address) if address else Gateway()        # DASK_GATEWAY__ADDRESS: deploy/config.yaml
        try:
            gcluster = gateway.new_cluster()
        except Exception as exc:
            raise EngineUnavailable(f"the Dask Gateway refused a cluster: {exc} (only the hub's admins may start "
                                    "one: deploy/dask-gateway.yaml)") from None
        gcluster.scale(workers)
        return cls(gcluster.get_client(), f"a Dask Gateway cluster of {workers} workers", workers,
                   owned=(gcluster, gateway))


def local(workers: int | None = None) -> Engine:
    return LocalPool(workers)


def cluster(address: str) -> Engine:
    return Cluster.at(address)


def gateway(workers: int, address: str | None = None) -> Engine:
    return Cluster.from_gateway(workers, address)
