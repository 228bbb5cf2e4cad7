"""Command line: ``python -m engine estimate|list|score|calibrate|bench|measured|schemas``.

Bad input (an unknown name, a value out of range) prints one line to stderr and exits with
status 2, never a traceback (docs/sources.md, the command line's promises).
"""

from __future__ import annotations

import argparse
import json
import sys

from .errors import CatalogError, EngineInputError
from .options import OPTIONS, Option, cli_help


def _add_option(parser, option: Option) -> None:
    """One request option as a command-line flag (engine/options.py declares them all); a flag
    left out stays None and the request takes the option's default."""
    if option.type == "bool" and option.default is None:
        group = parser.add_mutually_exclusive_group()
        group.add_argument(option.flag, dest=option.key, action="store_true", default=None, help=cli_help(option))
        group.add_argument("--no-" + option.flag[2:], dest=option.key, action="store_false")
    elif option.type == "bool":
        parser.add_argument(option.flag, dest=option.key, action="store_true", default=None, help=cli_help(option))
    else:
        kind = {"int": int, "float": float}.get(option.type, str)
        choices = option.choices if option.type == "choice" and len(option.choices) <= 3 else None
        # llama.cpp's own short spellings (-ngl, -ncmoe, -ot) are accepted too.
        flags = (option.flag, *option.extra.get("aliases", ()))
        parser.add_argument(*flags, dest=option.key, type=kind, choices=choices, help=cli_help(option))


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
    for option in OPTIONS:
        if option.flag:
            _add_option(p, option)
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
    return {"hardware": hardware, "model": model, "quant": args.quant, **{o.key: getattr(args, o.key) for o in OPTIONS if o.flag}}


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
    p_bench = sub.add_parser(
        "bench", help="estimates per second, the SCORE line, the fit's size, leave-one-source-out and leave-one-device-out tables"
    )
    p_bench.add_argument("--write-docs", action="store_true", help="also write the tables into docs/calibration.md")
    p_bench.add_argument(
        "--structures", action="store_true", help="also fit and cross-validate every candidate structure of the fit (minutes)"
    )
    p_bench.add_argument(
        "--structure",
        action="append",
        metavar="NAME",
        help="with --structures: only the candidate structures whose name contains NAME (repeatable); "
        "--write-docs then replaces only their rows of the structures table",
    )
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
                    flag = "  (numbers not read from the source: see 'unverified')" if item.get("provenance") == "unverified" else ""
                    print(f"{item['id']:<40} {item['name']}{flag}")
        elif args.command == "score":
            from .tools.score import score_main

            return score_main(args.file, args.out)
        elif args.command == "calibrate":
            from .tools.bounds import calibrate_and_audit

            return calibrate_and_audit(check=args.check)
        elif args.command == "measured":
            from .tools.points import measured_main

            return measured_main(check=args.check)
        elif args.command == "schemas":
            from .tools.schemas import schemas_main

            return schemas_main(check=args.check)
        elif args.command == "bench":
            from .tools.bench import bench_main

            return bench_main(write_docs=args.write_docs, structures=args.structures, only=args.structure)
    except EngineInputError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    except CatalogError as exc:
        print(f"catalog error: {exc}", file=sys.stderr)
        return 3
    except BrokenPipeError:
        return 0
    return 0
