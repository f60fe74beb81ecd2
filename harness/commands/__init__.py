"""One module per sub-command; each exposes `register(subparsers)`."""
