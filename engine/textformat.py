"""Human-readable text of an estimate, for the CLI (the page formats in site/js/format.js)."""

from __future__ import annotations


def rate(value: float) -> str:
    """Tokens per second with sensible precision: 0.42, 4.2, 42, 4,200."""
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def seconds(value: float) -> str:
    if value >= 60:
        return f"{value / 60:.1f} min"
    if value >= 1:
        return f"{value:.2f} s"
    return f"{value * 1000:.0f} ms"


def describe(result: dict) -> str:
    hw, model, mem = result["hardware"], result["model"], result["memory"]
    lines = [
        f"{model['name']} {result['quant']} on {hw['name']}"
        + (f" x{hw['gpus']}" if hw.get("gpus", 1) > 1 else "")
        + f" ({result['engine']}, {result['backend']})",
        f"  decode   {rate(result['decode_tps'])} tok/s  (range {rate(result['decode_tps_low'])}-"
        f"{rate(result['decode_tps_high'])}, ceiling {rate(result['decode_ceiling_tps'])}, {result['tier']})",
        f"  prefill  {rate(result['prefill_tps'])} tok/s",
        f"  TTFT     {seconds(result['ttft_s'])}",
        f"  memory   {mem['total_gb']:.1f} GB of {mem['usable_gb']:.1f} GB usable: {result['fit']}"
        f"  (weights {mem['weights_gb']:.1f}, KV {mem['kv_gb']:.2f}, overhead {mem['overhead_gb']:.2f})",
    ]
    return "\n".join(lines)
