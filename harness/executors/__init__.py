"""Where units of work run: `local` (a thread pool in the runner) or `ray` (a cluster).

Only the runner chooses; `ray_*` modules import Ray and are imported only when the
run's config says `executor = "ray"`.
"""
