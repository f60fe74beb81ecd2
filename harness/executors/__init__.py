"""Where units of work run: `local` (a thread pool in this process: local.py) or `ray`
(a cluster: ray_executor.py on the driver, ray_node.py on each node, ray_services.py
for the run's cluster-wide actors).

Only the runner chooses; the `ray_*` modules import Ray and are imported only when the
run's config says `executor = "ray"`. Both run each unit through harness/run/units.py.
"""
