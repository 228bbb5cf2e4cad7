"""tokfeel's estimation engine: how fast a local LLM runs on given hardware.

One entry point, :func:`estimate` (engine/api.py): a request dict in, a result dict out. Pure
Python, standard library only; the same code runs in CPython (CLI, tests, the build) and in
Pyodide (the page's Web Worker).
"""

from .api import estimate, handle
from .errors import EngineInputError

__all__ = ["estimate", "handle", "EngineInputError"]
__version__ = "0.1.0"
