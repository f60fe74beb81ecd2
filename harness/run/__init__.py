"""Putting a run together: the runner (plan, open, execute, finish), its units of work,
budgets, the model check before a run, the reference check of a task set, and studies
(several runs as one). The CLI's `run` and `study`, the executors and the bench call it."""
