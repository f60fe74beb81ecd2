"""A multi-node Ray cluster on this one machine, for the tests and bench/scale.py (a test double).

Each node is a raylet of its own (Ray's `cluster_utils.Cluster`) with 1 CPU, a
100 MB object store and no dashboard, so several fit on a 2-core machine.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ray.cluster_utils import Cluster

NODE = {"num_cpus": 1, "object_store_memory": 100 * 1024**2}


def start_local_cluster(nodes: int) -> "Cluster":
    """A head and `nodes - 1` more nodes; every node may run units."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False})
    for _ in range(nodes - 1):
        cluster.add_node(**NODE)
    cluster.wait_for_nodes()
    return cluster
