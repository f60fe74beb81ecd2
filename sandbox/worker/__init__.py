"""The sandbox worker: judges one test against one program per job, in two processes.

Standard library only: it runs inside the sandbox image as PID 1 of a container, and,
for the process backend, as a plain subprocess on the host. sandbox/README.md explains
the design and its threat model; in short:

    worker (W)   talks to the host, watches each job, cleans up; runs no job's code
     '- zygote (Z)   forked before the first job; never holds a job; forks blank
          children on request and says when each one ends
           |- P   a blank child given the program: runs it, then serves calls
           '- T   a blank child given one test: runs it; the program's functions are
                  proxies that call into P; the verdict is computed here and written
                  on a pipe that only T holds

No process holds another job's program or test: P and T come from a zygote that has
held none, so a test the model wrote cannot read a hidden test out of memory it
inherited, and the program never sees the test that judges it. Only plain data
crosses from P to T (None, bool, int, float, complex, str, bytes and list / tuple /
dict / set / frozenset of them), as tagged JSON decoded by a parser that can build
nothing else, and references to P's other objects, which T can ask P to call, read,
iterate or index but which compare only by identity.

Host protocol, one JSON object per line. At start the worker writes
``{"ready": true, "protocol": N, "pid": ..., "python": "..."}``. Each job line
``{"id", "program", "test", "prelude", "entry_point", "timeout_s", "memory_mb",
"max_output_bytes", "max_file_mb", "pids"}`` gets one answer line
``{"id", "status", "detail", "duration_s", "output"}`` (an io job's in a mode other than
strict also ``"strict_status"``). The answer goes out before the clean-up; a worker that
could not restore a clean state declines the next job with
``{"id", "not_run": true, "during": false, "retire": "<why>"}`` and exits (``"during":
true``: its zygote died under the job), and the host runs that job on a fresh worker. A
failure of the worker's own is ``"internal": true`` on the answer (with ``"retire"``
unless it failed only in judging, which changes nothing of its state); the host never
takes it for a verdict.

Modules, one per process role and concern (standard library only):

    protocol    what both sides share: the protocol version, P/T frames (the host imports it)
    rewrite     how a test's asserts are rewritten: T's tree transforms and the host's text (the host imports it)
    plain       plain data as JSON trees, and the strict decoder
    text        one-line failure details
    procs       process and /proc helpers
    scratch     emptying the scratch folder
    traces      kernel counters no wipe resets: noticed after a job, the worker retires
    confine     the seccomp filter of every job's process: no counter of the whole host moves
    namespace   the zygote's user and mount namespace: /proc and /sys covered for every job (the host imports its flags)
    stock       every job's pipes and socket, made when the worker starts
    landlock    the files a job may read (all in the page cache before any job runs) and write;
                nothing of /proc or /sys
    warm        the warm-up container: reads every file landlock allows into the page cache
    assertions  the test's asserts, compiled so a failed one shows the value observed
    child       a blank child taking its job (P or T)
    program     P: runs the program, answers the test's requests
    link        T's end of the channel: proxies for the program's functions and objects
    judge       T: binds names, runs the test, writes the verdict
    zygote      Z, and W's handle on it
    supervisor  W: the job loop, the watch, the clean-up
    __main__    the entry point: `python3 -I -B <this folder> --scratch-root DIR [--jobs N]` (or `--warm`)
"""
