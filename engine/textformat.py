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
    """The estimate as a few lines; a set-up that cannot load gets no speed, only what it needs."""
    hw, model, mem = result["hardware"], result["model"], result["memory"]
    lines = [
        f"{model['name']} {result['quant']} on {hw['name']}"
        + (f" x{hw['gpus']}" if hw.get("gpus", 1) > 1 else "")
        + f" ({result['engine']}, {result['backend']})",
    ]
    if result["fit"] == "no":
        lines.append(f"  won't run: {shortfall(mem)}")
    else:
        lines += [
            f"  decode   {rate(result['decode_tps'])} tok/s  (range {rate(result['decode_tps_low'])}-"
            f"{rate(result['decode_tps_high'])}, ceiling {rate(result['decode_ceiling_tps'])}, {result['tier']})",
            f"  prefill  {rate(result['prefill_tps'])} tok/s",
            f"  TTFT     {seconds(result['ttft_s'])}",
        ]
        if result["visible_ttft_s"] > result["ttft_s"]:
            lines.append(f"  answer   visible after {seconds(result['visible_ttft_s'])} (thinking first), whole answer after {seconds(result['total_s'])}")
        else:
            lines.append(f"  answer   whole answer after {seconds(result['total_s'])}")
    lines.append(
        f"  memory   {mem['total_gb']:.1f} GB of {mem['usable_gb']:.1f} GB usable: {result['fit']}"
        f"  (weights {mem['weights_gb']:.1f}, KV {mem['kv_gb']:.2f}, overhead {mem['overhead_gb']:.2f})"
    )
    if result["fit"] == "offload":
        lines.append(
            f"  offload  {mem['host_need_gb']:.1f} GB in system RAM ({mem['host_usable_gb']:.1f} GB usable of "
            f"{mem['system_ram_gib']:g} GiB assumed; --system-ram changes it)"
        )
    return "\n".join(lines)


def shortfall(memory: dict) -> str:
    """What a set-up that cannot load lacks, from an estimate's memory report."""
    if memory["short_of"] == "system_ram":
        return (f"the part in system RAM needs {memory['host_need_gb']:.1f} GB, {memory['host_usable_gb']:.1f} GB "
                f"usable of the {memory['system_ram_gib']:g} GiB assumed (--system-ram)")
    return f"the device part needs {memory['device_need_gb']:.1f} GB, {memory['usable_gb']:.1f} GB usable"
