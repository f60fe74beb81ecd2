"""Reports derived from run folders: HTML (self-contained), Markdown, CSV, SVG plots."""
from harness.report.render import write_compare, write_report

__all__ = ["write_compare", "write_report"]
