"""`harness view`: a local web app over run folders (see README.md here for the URLs)."""
from harness.view.app import create_app
from harness.view.server import DEFAULT_PORT, ViewServer

__all__ = ["create_app", "ViewServer", "DEFAULT_PORT"]
