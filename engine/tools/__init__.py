"""Developer tools beside the engine: scoring, calibration, benchmarks and schema export.

They import the core (``engine``) and are never imported by it or by the page layer, and the
page's engine bundle leaves this package out (build.py).
"""
