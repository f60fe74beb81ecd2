"""A real multi-node Ray cluster on this machine, a deterministic agent behind the stub API.

Each "node" is a raylet of its own (Ray's `cluster_utils.Cluster`) with 1 CPU, a
100 MB object store and no dashboard; they share this machine's Docker engine, and
each node's NodeWorker opens its own pool of containers in it.
"""
from __future__ import annotations

import os
from typing import Iterator

import pytest

from ray.cluster_utils import Cluster  # a test dependency: its absence must fail, never skip
from ray_helpers import start_cluster  # noqa: E402


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    if os.environ.get("HARNESS_REQUIRE_DOCKER") != "1":
        import docker

        try:
            docker.from_env().ping()
        except Exception as exc:  # noqa: BLE001 - any failure means no engine
            pytest.skip(f"no Docker engine: {exc}")
    cluster = start_cluster(3)
    yield cluster
    cluster.shutdown()
