"""Readers of config.json, one module per model family; importing a module registers its readers.

Add a family: write ``engine/archs/<family>.py`` with functions decorated by
``engine.arch.register("<model_type>", ...)`` and add the module to the import below.
"""

from . import afmoe  # noqa: F401
from . import cohere  # noqa: F401
from . import deepseek  # noqa: F401
from . import dots  # noqa: F401
from . import falcon  # noqa: F401
from . import falcon_h1  # noqa: F401
from . import gemma  # noqa: F401
from . import glm  # noqa: F401
from . import gpt_oss  # noqa: F401
from . import granite  # noqa: F401
from . import hunyuan  # noqa: F401
from . import lfm  # noqa: F401
from . import llama  # noqa: F401
from . import llama4  # noqa: F401
from . import minimax  # noqa: F401
from . import nemotron  # noqa: F401
from . import olmo  # noqa: F401
from . import qwen_next  # noqa: F401
from . import starcoder2  # noqa: F401
