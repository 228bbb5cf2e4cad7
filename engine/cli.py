"""Command line: ``python -m engine estimate|list|score|calibrate|bench``.

Bad input (an unknown name, a value out of range) prints one line to stderr and exits with
status 2, never a traceback (contract.md section 1).
"""

from __future__ import annotations

import argparse
import json
import sys

from .errors import CatalogError, EngineInputError
from .quant import KV_TYPES

#: --split choices; llama.cpp says "row", vLLM "tensor".
SPLITS = ("layer", "row", "tensor")


def _add_estimate(sub) -> None:
    p = sub.add_parser("estimate", help="predict speed, TTFT and memory fit for one set-up")
    hw = p.add_mutually_exclusive_group(required=True)
    hw.add_argument("--hardware", help='device, e.g. "RTX 4090"')
    hw.add_argument(
        "--hardware-json",
        help='custom device as JSON: {"name", "kind" (gpu, soc or cpu), "memory_gib", "bandwidth_gbs", "fp16_tflops", ...}; '
        'a CPU may add "cpu_cores", "cpu_threads", "cpu_p_cores" (hybrid), "memory_channels" with "memory_data_rate_mts" '
        '(instead of bandwidth_gbs), "bandwidth_measured": true (bandwidth_gbs measured with STREAM or Intel MLC), '
        '"cpu_isa" (avx2, avx-vnni, avx512, avx512-vnni, amx, neon, dotprod, i8mm, sve ...), "cpu_base_clock_ghz", '
        '"cpu_boost_clock_ghz"',
    )
    md = p.add_mutually_exclusive_group(required=True)
    md.add_argument("--model", help='model, e.g. "Llama-3.1-8B"')
    md.add_argument("--model-config", help="a Hugging Face config.json file (a model not in the catalog)")
    p.add_argument("--quant", required=True, help="weight format, e.g. Q4_K_M")
    p.add_argument("--engine", help="llama.cpp, mlx-lm, vllm ... (default: the device's usual one)")
    p.add_argument("--backend", help="cuda, metal, rocm, vulkan, sycl, cpu (default: the device's)")
    p.add_argument("--prompt", type=int, default=512, help="prompt tokens to prefill (512)")
    p.add_argument("--depth", type=int, default=0, help="tokens already in the KV cache (0)")
    p.add_argument("--gen", type=int, default=128, help="tokens to generate (128)")
    p.add_argument("--batch", type=int, default=1, help="concurrent sequences (1)")
    p.add_argument("--file-gb", type=float, help="the weight file's size in GB when known (a custom quant mix reads what its file holds)")
    p.add_argument("--threads", type=int, help="CPU threads of a CPU device, llama.cpp -t (default, as llama.cpp: its physical cores, the performance cores of a hybrid CPU; threads beyond the physical cores share them and slow a step down)")
    p.add_argument("--gpus", type=int, default=1, help="identical devices used together (1); on a CPU, the sockets of one server")
    p.add_argument("--split", choices=SPLITS, default="layer", help="how several devices share the model")
    p.add_argument("--nvlink", action="store_true", default=None, help="NVLink bridges are fitted between the cards")
    p.add_argument("--slot-pcie-gen", type=int, help="PCIe generation of the slots/risers (default: the card's)")
    p.add_argument("--slot-pcie-lanes", type=int, help="PCIe lanes of the slots/risers (default: the card's)")
    p.add_argument("--gpu-layers", type=float, help="fraction of layers on the GPU, 0..1 (default: all that fit)")
    p.add_argument("--expert-offload", action="store_true", help="routed experts in system RAM (--n-cpu-moe)")
    p.add_argument("--kv-quant", default="f16", help=f"KV cache type: {', '.join(KV_TYPES)} (f16)")
    fa = p.add_mutually_exclusive_group()
    fa.add_argument("--flash-attn", dest="flash_attn", action="store_true", default=None)
    fa.add_argument("--no-flash-attn", dest="flash_attn", action="store_false")
    p.add_argument("--prefix-cached", type=int, default=0, help="prompt tokens already in the prompt cache")
    p.add_argument("--draft", help="draft model for speculative decoding")
    p.add_argument("--mtp", action="store_true", help="use the model's multi-token-prediction head")
    p.add_argument("--draft-tokens", type=int, default=4, help="tokens drafted per cycle (4)")
    p.add_argument("--acceptance", type=float, help="per-token acceptance of drafted tokens (0..1)")
    p.add_argument("--workload", choices=("code", "chat", "creative"), default="chat")
    p.add_argument("--host", help="CPU platform whose RAM holds offloaded weights")
    p.add_argument("--system-ram", type=float, help="GiB of system RAM next to discrete GPUs, for offloaded weights (default: the host's, 64)")
    p.add_argument("--reasoning", type=int, default=0, help="hidden reasoning tokens before the answer")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _json_argument(text: str, what: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EngineInputError(f"{what} is not valid JSON: {exc.msg} at character {exc.pos}") from exc
    if not isinstance(value, dict):
        raise EngineInputError(f"{what} must be a JSON object")
    return value


def _request(args) -> dict:
    hardware = _json_argument(args.hardware_json, "--hardware-json") if args.hardware_json else args.hardware
    model = args.model
    if args.model_config:
        try:
            text = open(args.model_config, encoding="utf-8").read()
        except OSError as exc:
            raise EngineInputError(f"cannot read {args.model_config}: {exc.strerror or exc}") from exc
        model = {"config": _json_argument(text, args.model_config), "name": args.model_config}
    return {
        "hardware": hardware,
        "model": model,
        "quant": args.quant,
        "engine": args.engine,
        "backend": args.backend,
        "prompt_tokens": args.prompt,
        "depth": args.depth,
        "gen_tokens": args.gen,
        "batch": args.batch,
        "threads": args.threads,
        "file_gb": args.file_gb,
        "gpus": args.gpus,
        "split": args.split,
        "nvlink": args.nvlink,
        "slot_pcie_gen": args.slot_pcie_gen,
        "slot_pcie_lanes": args.slot_pcie_lanes,
        "gpu_layers": args.gpu_layers,
        "expert_offload": args.expert_offload,
        "kv_quant": args.kv_quant,
        "flash_attn": args.flash_attn,
        "prefix_cached": args.prefix_cached,
        "draft": args.draft,
        "mtp": args.mtp,
        "draft_tokens": args.draft_tokens,
        "acceptance": args.acceptance,
        "workload": args.workload,
        "host": args.host,
        "system_ram_gib": args.system_ram,
        "reasoning_tokens": args.reasoning,
    }


def _print_estimate(result: dict) -> None:
    from .textformat import describe

    print(describe(result))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine", description="tokfeel's estimation engine")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_estimate(sub)
    p_list = sub.add_parser("list", help="list a catalog")
    p_list.add_argument("kind", choices=("hardware", "models", "quants", "engines"))
    p_list.add_argument("--json", action="store_true", help="print a JSON array")
    p_list.add_argument("--count", action="store_true", help="print only how many entries (hardware: distinct devices and memory variants)")
    p_score = sub.add_parser("score", help="predict measured rows and report the error")
    p_score.add_argument("file", help="CSV in the format of data/calibration/measurements.csv")
    p_score.add_argument("--out", help="write per-row predictions here")
    p_cal = sub.add_parser("calibrate", help="fit the free parameters on the calibration set")
    p_cal.add_argument("--check", action="store_true", help="fail if the committed fit differs from a fresh one")
    sub.add_parser("bench", help="estimates per second, the SCORE line, cross-validation by backend")
    p_measured = sub.add_parser("measured", help="rebuild data/measured/points.json from the calibration set")
    p_measured.add_argument("--check", action="store_true", help="fail if the committed file is stale")
    p_schemas = sub.add_parser("schemas", help="write the catalogs' JSON Schemas to data/schema/ (for editors)")
    p_schemas.add_argument("--check", action="store_true", help="fail if a committed schema is stale")
    args = parser.parse_args(argv)
    try:
        if args.command == "estimate":
            from .api import estimate

            result = estimate(_request(args))
            if args.json:
                print(json.dumps(result, indent=2, allow_nan=False))
            else:
                _print_estimate(result)
        elif args.command == "list":
            from .listing import list_catalog

            items = list_catalog(args.kind)
            if args.count:
                from .listing import count_line

                print(count_line(args.kind, items))
            elif args.json:
                print(json.dumps(items, indent=2))
            else:
                for item in items:
                    print(f"{item['id']:<40} {item['name']}")
        elif args.command == "score":
            from .tools.score import score_main

            return score_main(args.file, args.out)
        elif args.command == "calibrate":
            from .tools.calibrate import calibrate_main

            return calibrate_main(check=args.check)
        elif args.command == "measured":
            from .tools.points import measured_main

            return measured_main(check=args.check)
        elif args.command == "schemas":
            from .tools.schemas import schemas_main

            return schemas_main(check=args.check)
        elif args.command == "bench":
            from .tools.bench import bench_main

            return bench_main()
    except EngineInputError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    except CatalogError as exc:
        print(f"catalog error: {exc}", file=sys.stderr)
        return 3
    except BrokenPipeError:
        return 0
    return 0
