"""Start the worker: `python3 -I -B <this folder> [--scratch-root DIR]`.

Python puts this folder first on sys.path to find this file; it comes off at once, so
no module a program or a test imports is looked for here, and nothing they write can
shadow the worker's modules. The worker's modules are loaded as the package
`sandbox_worker` from this folder by path; the folder is never on sys.path, and the
blank children forget the package before they take a job (see zygote.py).
"""
import importlib.util
import os
import sys

PACKAGE = "sandbox_worker"


def _load_package() -> None:
    folder = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != folder]
    spec = importlib.util.spec_from_file_location(
        PACKAGE, os.path.join(folder, "__init__.py"), submodule_search_locations=[folder]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)


if __name__ == "__main__":
    _load_package()
    if sys.argv[1:] == ["--warm"]:  # the one-shot warm-up container (warm.py)
        from sandbox_worker.warm import main
    else:
        from sandbox_worker.supervisor import main

    sys.exit(main())
