"""Reports of run folders: HTML (self-contained), Markdown, CSV, SVG plots; they render
harness.rundata's numbers and compute none of their own."""
from harness.report.render import write_compare, write_report

__all__ = ["write_compare", "write_report"]
