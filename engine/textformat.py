"""Human-readable text of an estimate, for the CLI. The page shows the same quantities with the
same precision: site/js/format.js receives ``DECIMALS`` from the build."""

from __future__ import annotations

#: How many decimals a quantity shows, by its size: ``[from this value up, decimals]``, largest
#: first (0 decimals: thousands separated). One table for the CLI's text and the page's numbers.
DECIMALS = {
    "rate": [[100, 0], [10, 1], [0, 2]],  # tok/s: 4,200 · 42.0 · 4.20
    "gigabytes": [[100, 0], [10, 1], [0, 2]],  # GB: 140 · 40.5 · 4.92
    "seconds": [[10, 1], [0, 2]],  # from 1 s to a minute: 12.5 s · 1.25 s
    "milliseconds": [[10, 0], [1, 1], [0, 2]],  # under a second: 450 ms · 4.5 ms · 0.45 ms
}


def fixed(kind: str, value: float) -> str:
    """``value`` with the decimals ``DECIMALS[kind]`` gives its size."""
    digits = next((d for lowest, d in DECIMALS[kind] if value >= lowest), DECIMALS[kind][-1][1])
    return f"{value:,.0f}" if digits == 0 else f"{value:.{digits}f}"


def rate(value: float) -> str:
    """Tokens per second: 0.42, 4.20, 42.0, 4,200."""
    return fixed("rate", value)


def seconds(value: float) -> str:
    """A duration: 45 ms, 1.25 s, 12.5 s, 3.4 min, 2.1 h (as site/js/format.js duration)."""
    if value < 1:
        return f"{fixed('milliseconds', value * 1000)} ms"
    if value < 60:
        return f"{fixed('seconds', value)} s"
    if value < 3600:
        return f"{value / 60:.1f} min"
    return f"{value / 3600:.1f} h"


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
            + (f", llama.cpp -ngl {mem['n_gpu_layers']}" if mem.get("n_gpu_layers") is not None else "")
        )
    return "\n".join(lines)


def shortfall(memory: dict) -> str:
    """What a set-up that cannot load lacks, from an estimate's memory report."""
    if memory["short_of"] == "system_ram":
        return (f"the part in system RAM needs {memory['host_need_gb']:.1f} GB, {memory['host_usable_gb']:.1f} GB "
                f"usable of the {memory['system_ram_gib']:g} GiB assumed (--system-ram)")
    return f"the device part needs {memory['device_need_gb']:.1f} GB, {memory['usable_gb']:.1f} GB usable"
