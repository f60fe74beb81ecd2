"""Benchmark harness for Reflexion-style self-correcting code agents."""

__version__ = "0.1.0"
