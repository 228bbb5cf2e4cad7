"""Command lines for a request: the ``python -m engine estimate`` line that reproduces its numbers,
and the llama-bench / llama-server / mlx-lm / ollama commands that check it on real hardware."""

from __future__ import annotations

import json
import shlex
from functools import lru_cache

from ..offload import ngl_for_fraction
from ..errors import EngineInputError
from ..options import OPTION, OPTIONS
from ..request import KNOWN_KEYS, parse_options
from .fields import _shown

#: shlex.quote, kept per short word: the same flags and values come back in every view's
#: commands (a pasted config.json is quoted afresh).
_quote = lru_cache(maxsize=4096)(shlex.quote)


def _join(words: list[str]) -> str:
    """shlex.join with the quoting of short words kept."""
    return " ".join(_quote(word) if len(word) <= 200 else shlex.quote(word) for word in words)


#: ``python -m engine estimate`` flags for request keys that take a value (engine/options.py).
CLI_FLAGS = {"hardware": "--hardware", "model": "--model", "quant": "--quant",
             **{o.key: o.flag for o in OPTIONS if o.flag and not o.switch}}
#: Flags for request keys that are switches.
CLI_SWITCHES = {o.key: o.flag for o in OPTIONS if o.flag and o.switch}


def _check_request(request: dict) -> None:
    """A request as estimate() takes it: every option valid, hardware and model names or dicts."""
    unknown = sorted(_shown(key) for key in request if key not in KNOWN_KEYS) if isinstance(request, dict) else []
    if unknown:
        raise EngineInputError(f"unknown request key(s): {', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}")
    parse_options(request)
    for key in ("hardware", "model"):
        if not isinstance(request[key], (str, dict)):
            raise EngineInputError(f"{key} must be a name or an object, got {_shown(request[key])}", field=key)
    if not isinstance(request["quant"], str):
        raise EngineInputError(f"quant must be a name, got {_shown(request['quant'])}", field="quant")


def _check_result(result: dict) -> None:
    """The parts of an estimate() result the check commands read."""
    model = result.get("model") if isinstance(result, dict) else None
    ok = (
        isinstance(model, dict) and isinstance(model.get("name"), str)
        and isinstance(model.get("layers", 0), int) and not isinstance(model.get("layers", 0), bool)
        and isinstance(result.get("quant"), str) and isinstance(result.get("engine"), str)
    )
    if not ok:
        raise EngineInputError("expected the result of estimate() for this request")


def cli_command(request: dict) -> str:
    """The command line that reproduces a request's numbers: ``python -m engine estimate``
    (custom hardware as ``--hardware-json``), or, for a pasted config.json (the page has no file
    to name), the same request through the Python API."""
    _check_request(request)
    request = {key: value for key, value in request.items() if key != "schedule"}
    if isinstance(request["model"], dict):
        program = "import json, sys, engine; print(json.dumps(engine.estimate(json.loads(sys.argv[1])), indent=2))"
        return _join(["python", "-c", program, json.dumps(request, separators=(",", ":"))])
    parts = ["python", "-m", "engine", "estimate"]
    for key, flag in CLI_FLAGS.items():
        value = request.get(key)
        if key == "hardware" and isinstance(value, dict):
            parts += ["--hardware-json", json.dumps(value, separators=(",", ":"))]
        elif value not in (None, "", 0):
            parts += [flag, str(value)]
    for key, flag in CLI_SWITCHES.items():
        if request.get(key):
            parts.append(flag)
        elif request.get(key) is False and OPTION[key].default is None:
            # A switch the engine decides by default (flash attention) also has its "off" flag.
            parts.append("--no-" + flag.removeprefix("--"))
    return _join(parts + ["--json"])


def _gguf_name(request: dict, result: dict) -> str:
    return f"{result['model']['name'].replace(' ', '-')}-{result['quant']}.gguf"


def _llama_common(request: dict, result: dict) -> list[str]:
    """llama.cpp flags shared by llama-bench and llama-server for this placement."""
    layers = result["model"].get("layers") or 0
    # The -ngl the engine placed the layers by (engine/system.py n_gpu_layers: as stated, the
    # page's share converted by offload.ngl_for_fraction, or the count that fits); every layer: 99.
    memory = result.get("memory")
    if isinstance(memory, dict) and "n_gpu_layers" in memory:
        ngl = memory["n_gpu_layers"]
    elif request.get("gpu_layers") is not None:
        ngl = ngl_for_fraction(layers, request["gpu_layers"])
    else:
        ngl = request.get("n_gpu_layers")
    flags = ["-ngl", str(max(99, layers + 1) if ngl is None else ngl)]
    if request.get("expert_offload"):
        flags += ["-ncmoe", str(layers or 99)]
    elif request.get("n_cpu_moe"):
        flags += ["-ncmoe", str(request["n_cpu_moe"])]
    if request.get("tensor_overrides"):
        flags += ["-ot", request["tensor_overrides"]]
    if request.get("gpus", 1) > 1:
        flags += ["-sm", "row" if request.get("split") in ("row", "tensor") else "layer"]
    kv = request.get("kv_quant")
    if kv:
        flags += ["-ctk", kv, "-ctv", kv]
    if request.get("threads"):
        flags += ["-t", str(request["threads"])]
    # Both tools take -b / -ub (llama-bench's defaults equal llama-server's: 2048 / 512).
    if request.get("nbatch"):
        flags += ["-b", str(request["nbatch"])]
    if request.get("ubatch"):
        flags += ["-ub", str(request["ubatch"])]
    return flags


def check_commands(request: dict, result: dict) -> list[dict]:
    """Commands a user runs to check this prediction on real hardware (docs/physics.md section 11:
    llama-bench's pp/tg figures, llama-server's per-request timings), with what to compare."""
    _check_request(request)
    _check_result(result)
    gguf = _gguf_name(request, result)
    prompt = request["prompt_tokens"]
    depth = request.get("depth", 0)
    bench = ["llama-bench", "-m", gguf, "-p", str(prompt), "-n", "128"]
    if depth:
        bench += ["-d", str(depth)]
    flash = result.get("flash_attn", True)
    bench += _llama_common(request, result) + ["-fa", "1" if flash else "0"]
    context = depth + prompt + request["gen_tokens"] + request.get("reasoning_tokens", 0)
    server = ["llama-server", "-m", gguf, "-c", str(max(4096, context)), "--port", "8080"]
    server += _llama_common(request, result) + ["-fa", "on" if flash else "off"]
    if request.get("draft"):
        server += ["-md", f"{request['draft']}-{result['quant']}.gguf", "--draft-max", str(request.get("draft_tokens", 4))]
    if request.get("batch", 1) > 1:
        server += ["-np", str(request["batch"])]
    commands = [
        {
            "tool": "llama-bench",
            "command": _join(bench),
            "compare": f"tg128 against decode, pp{prompt} against prefill",
        },
        {
            "tool": "llama-server",
            "command": _join(server),
            "compare": "then measure it from this page (below), or read the eval and prompt-eval tok/s it logs per request",
        },
    ]
    if result["engine"] == "mlx-lm":
        commands.append({
            "tool": "mlx-lm",
            "command": _join(["mlx_lm.generate", "--model", f"<mlx repo of {result['model']['name']}>", "--prompt", "Hello", "--max-tokens", "256"]),
            "compare": "its Generation tokens-per-sec against decode, Prompt tokens-per-sec against prefill",
        })
    if result["engine"] == "Ollama":
        commands.append({
            "tool": "ollama",
            "command": _join(["ollama", "run", "<model>", "--verbose"]),
            "compare": "eval rate against decode, prompt eval rate against prefill",
        })
    return commands
