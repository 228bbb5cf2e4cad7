"""tokfeel's estimation engine: how fast a local LLM runs on given hardware.

One entry point, :func:`estimate` (engine/api.py): a request dict in, a result dict out. The
page layer (``engine.page``: the worker's ``handle``) and the developer tools (``engine.tools``)
stand on it; it imports neither. Pure
Python, standard library only; the same code runs in CPython (CLI, tests, the build) and in
Pyodide (the page's Web Worker).
"""

from .api import estimate
from .errors import EngineInputError

__all__ = ["estimate", "EngineInputError"]
__version__ = "0.1.0"
