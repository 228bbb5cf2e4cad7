"""Readers of config.json, one module per model family; importing a module registers its readers.

Add a family: write ``engine/archs/<family>.py`` with functions decorated by
``engine.arch.register("<model_type>", ...)`` and add the module to the import below.
"""

from . import llama  # noqa: F401
