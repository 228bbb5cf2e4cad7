"""Build data/measured/points.json from the calibration rows (``python -m engine measured``)."""

from __future__ import annotations

import json
import sys

from ..catalog import DATA_DIR
from ..measured import FIELDS, POINTS_FILE
from .calibrate import MEASUREMENTS
from .score import load_cases


def build_points() -> dict:
    """Every resolved calibration row as a compact record (the content of points.json)."""
    rows = []
    for case in load_cases(str(MEASUREMENTS)):
        if not case.resolved:
            continue
        system = case.system
        rows.append(
            [
                case.row.get("source_id", ""),
                system.device.id,
                system.model.id,
                system.quant.name,
                system.engine.id,
                system.backend,
                system.gpus * system.device.cpu_sockets,
                system.options.split if system.gpus > 1 else "none",
                case.test,
                case.tokens,
                int(float(case.row.get("depth") or 0)),
                case.batch,
                # In tokens/s: a row that counted streamed chunks is converted by the rule
                # the fit scores it with (score.tokens_per_counted_unit).
                round(case.measured * case.tokens_per_unit, 3) if case.tokens_per_unit != 1.0 else case.measured,
            ]
        )
    rows.sort(key=lambda r: [str(x) for x in r])
    return {"generated_by": "python -m engine measured", "fields": list(FIELDS), "points": rows}


def measured_main(check: bool = False) -> int:
    text = json.dumps(build_points(), separators=(",", ":")) + "\n"
    if check:
        if not POINTS_FILE.exists() or POINTS_FILE.read_text(encoding="utf-8") != text:
            print("data/measured/points.json is stale: run python -m engine measured", file=sys.stderr)
            return 1
        print("data/measured/points.json is up to date")
        return 0
    POINTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    POINTS_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {POINTS_FILE.relative_to(DATA_DIR.parent)} ({text.count('],[') + 1} points)")
    return 0
