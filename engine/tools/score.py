"""``python -m engine score FILE.csv [--out PRED.csv]``: predict measured rows, report the error.

Each row of a measurement file (the format of ``data/calibration/measurements.csv``) becomes a
:class:`Case`: the set-up it ran (device, model, format, engine, backend, devices and split, flash
attention, KV type, CPU threads, micro-batch) and the quantity it measured (``tg``: aggregate
decode tokens/s of N tokens after ``depth``; ``pp``: prompt tokens/s). The prediction comes from
the physics alone; a row is never looked up in measured data.

Row conditions the source states in ``notes`` are inputs of the experiment and are read from
there: ``threads=`` (CPU threads), ``n_ubatch=`` / ``-ub`` (micro-batch), ``kv=`` / ``-ctk`` (KV
type), ``kind=single_stream_wall`` (a server's wall rate, which includes the TTFT of
``prompt_tokens=``), a rate that counts streamed text chunks rather than tokens (mlx-vlm 0.4.x behind the
Apple harness: :data:`TOKENS_PER_STREAMED_CHUNK`), ``size=`` (llama-bench's file size: the weights' bytes), the weights' placement beside a discrete card
(``-ngl`` / ``ngl=``, ``--n-cpu-moe``, ``--cpu-moe``, ``-ot``: :func:`row_placement`), an operating system before Windows 11 on
a multi-socket server (its threads ran on one socket, ``one_socket``). Conditions the physics does not model (a power cap, an old build) are not
read: their rows show up as residuals, and docs/calibration.md discusses them.
"""

from __future__ import annotations

import csv
import math
import re
import statistics
import sys
from dataclasses import dataclass, field

from ..decode import StepFeatures, run_features, step_features, step_time_from
from ..engines import load_engines, ollama_engine_for_version
from ..errors import EngineInputError
from ..kvcache import kv_read_elements
from ..params import BackendParams
from ..prefill import PrefillFeatures, prefill_features, prefill_time_from
from ..system import System, build_system, resolve_device

COLUMNS = (
    "source_id", "hardware", "n_devices", "split_mode", "model", "params_b", "active_params_b", "quant",
    "backend", "engine", "test", "n_tokens", "depth", "batch", "flash_attn", "tokens_per_s", "notes",
)
OUT_COLUMNS = COLUMNS + ("predicted_tps", "ape", "hardware_id", "model_id", "status")

#: KV-cache types as sources write them -> our names: llama.cpp/vLLM ``kv=`` and ``-ctk``, and
#: the Apple harness's ``kv_cache=`` settings (mlx ``--kv-bits``; its llama.cpp "kv" runs are
#: ``-ctk q8_0``, see their test names).
KV_NAMES = {"q8": "q8_0", "q8_0": "q8_0", "fp8": "fp8", "f16": "f16", "fp16": "f16", "q4_0": "q4_0"}
HARNESS_KV = {
    ("mlx", "kv"): "mlx-8bit", ("mlx", "kv4"): "mlx-4bit", ("mlx", "kv2"): "mlx-2bit",
    ("mlx", "tq3"): "tq3.5", ("mlx", "tq3bit"): "tq3.5", ("mlx", "tq3.5bit"): "tq3.5",
    ("mlx", "tq4bit"): "tq4",
    ("gguf", "kv"): "q8_0", ("gguf", "kv4"): "q4_0",
}

#: The Apple harness (github.com/AlexHiesch/apple-silicon-llm-bench, benchmark.py
#: ``bench_openai_streaming`` at commit c230ae4) divides by ``usage.completion_tokens`` and, when a
#: server does not send it, by the number of SSE chunks with non-empty content. mlx-vlm 0.4.3 and
#: 0.4.4 stream their usage as ``input_tokens``/``output_tokens`` (mlx_vlm/server.py,
#: https://github.com/Blaizzy/mlx-vlm/blob/v0.4.3/mlx_vlm/server.py, ``chat_completions_endpoint``),
#: and their streaming detokenizers release text only when the next token starts with a space
#: (mlx_vlm/tokenizer_utils.py, ``BPEStreamingDetokenizer`` / ``SPMStreamingDetokenizer``), so a
#: counted chunk is about a word: these rows' "tokens/s" are chunks/s. Their run counts say so:
#: 158-283 "completion tokens" on the code prompt where every engine that reports usage stops at
#: the 512-token limit with the same length of text. Tokens per counted chunk, 1.9, is the median
#: over the source's 156 mlx-vlm short/code runs (docs/calibration.md, "mlx-vlm rows count words").
TOKENS_PER_STREAMED_CHUNK = 1.9
CHUNK_COUNTING_SERVERS = re.compile(r"decode_tps via OpenAI-compatible server harness")
CHUNK_COUNTING_VERSIONS = {"mlx-vlm": re.compile(r"backend_version=0\.4\.[34];")}
#: The harness asks every run for at most 512 tokens (``max_tokens``; no row of the source reports
#: more), and its code and context-N prompts (refactor a module, benchmark.py ``BUILTIN_PROMPTS``,
#: ``generate_context_prompt``) are answered to that limit at temperature 0: every server that
#: reports usage stops there on them (mlx-lm 434-512, llama.cpp, Ollama, vLLM-MLX, oMLX 502-512),
#: where the short prompt's answers end at 137-512. A chunk-counting run of those prompts made the
#: limit's tokens, so its tokens per chunk is its own, (512 - 1) / (chunks - 1) (the harness's
#: rate is (count - 1) / time); the short prompt keeps TOKENS_PER_STREAMED_CHUNK.
HARNESS_MAX_TOKENS = 512
ANSWERED_TO_THE_LIMIT = re.compile(r"prompt_type=(?:code|long|context-\d+k)\b")


def tokens_per_counted_unit(row: dict) -> float:
    """Tokens per unit a decode row counts: 1, or, where the harness counted the streamed text
    chunks of a server that reports no completion tokens, the run's own ratio when its prompt is
    answered to the harness's token limit, else :data:`TOKENS_PER_STREAMED_CHUNK`."""
    notes = row.get("notes", "")
    version = CHUNK_COUNTING_VERSIONS.get(row.get("engine", ""))
    if version and version.search(notes) and CHUNK_COUNTING_SERVERS.search(notes):
        chunks = _int(row.get("n_tokens"), 0)
        if ANSWERED_TO_THE_LIMIT.search(notes) and 1 < chunks <= HARNESS_MAX_TOKENS:
            return (HARNESS_MAX_TOKENS - 1) / (chunks - 1)
        return TOKENS_PER_STREAMED_CHUNK
    return 1.0


@dataclass
class Case:
    """One measured row, resolved and reduced to physics features."""

    row: dict
    test: str
    measured: float
    key: str = ""  # engine/backend whose parameters predict it
    status: str = "ok"
    system: System | None = None
    batch: int = 1
    tokens: int = 0
    #: tg: the mean decode step of the run; pp: the prefill of the prompt.
    step: StepFeatures | None = None
    prefill: PrefillFeatures | None = None
    #: Server wall rates include the TTFT: its prefill and first step.
    wall_prefill: PrefillFeatures | None = None
    wall_first_step: StepFeatures | None = None
    #: tg: tokens per unit the row counts (:func:`tokens_per_counted_unit`).
    tokens_per_unit: float = 1.0
    extra: dict = field(default_factory=dict)

    @property
    def resolved(self) -> bool:
        return self.status == "ok"


def _int(text: str, default: int) -> int:
    text = (text or "").strip()
    return int(float(text)) if text else default


def _note(notes: str, pattern: str) -> str | None:
    match = re.search(pattern, notes)
    return match.group(1) if match else None


#: llama.cpp builds before this number (June 2024) are a different engine for the physics:
#: no CUDA graphs, cuBLAS prefill of dequantised weights, old split code (engines.toml).
LEGACY_LLAMA_CPP_BUILD = 3000


def llama_cpp_build(row: dict) -> int | None:
    """The llama.cpp build number a row names (``build 4426e298 (2824)``, ``build 1691 (...)``,
    ``backend_version=b5220``, or a source id ending in ``_b7941``)."""
    notes = row.get("notes", "")
    for pattern in (r"build [0-9a-f]{7,9} \((\d{3,5})\)", r"build (\d{3,5}) \(", r"backend_version=b(\d{3,5})"):
        found = _note(notes, pattern)
        if found:
            return int(found)
    found = re.search(r"_b(\d{3,5})$", row.get("source_id", ""))
    return int(found.group(1)) if found else None


#: A memory bandwidth measured with a bandwidth tool, as notes quote it: "~225GB/s mlc memory read
#: bandwidth", "180 GB/s (STREAM triad)".
MEASURED_BANDWIDTH = r"(\d+(?:\.\d+)?) ?GB/s,? \(?(?:Intel )?(?:mlc|MLC|STREAM|stream)\b"


#: Windows before 11 / Server 2022 keeps a process in one processor group (engine/devices.py
#: cpu_sockets): a row that names one of them ran its threads on one socket of a bigger server.
OLD_WINDOWS = re.compile(r"\bWindows (?:7|8(?:\.1)?|10|Server 20(?:08|12|16|19))\b")
#: Logical processors a Windows processor group holds at most.
PROCESSOR_GROUP = 64


def one_processor_group(hardware: str, sockets: int, notes: str) -> bool:
    """A multi-socket row measured on Windows before 11 with more logical processors than one
    processor group holds: the process ran on one group, one socket."""
    if not OLD_WINDOWS.search(notes):
        return False
    try:
        device = resolve_device(hardware)
    except EngineInputError:
        return False
    return (device.cpu_threads or 0) * sockets > PROCESSOR_GROUP


def row_request(row: dict) -> dict:
    """The estimate request describing the set-up a measured row ran."""
    notes = row.get("notes", "")
    quant = row["quant"]
    # Google's QAT Q4_0 GGUFs keep the embedding in Q8_0: a format of its own.
    if quant == "Q4_0" and "qat" in notes.lower():
        quant = "QAT-Q4_0"
    split = row.get("split_mode", "none")
    request = {
        "hardware": row["hardware"],
        "model": row["model"],
        "quant": quant,
        "engine": row["engine"],
        "backend": row["backend"] if row["backend"] != "unknown" else None,
        "gpus": _int(row.get("n_devices"), 1),
        "split": split if split in ("layer", "row", "tensor") else "layer",
        "flash_attn": {"1": True, "0": False}.get((row.get("flash_attn") or "").strip()),
    }
    kv = _note(notes, r"(?:\bkv=|-ctk )(\w+)")
    if kv in KV_NAMES:
        request["kv_quant"] = KV_NAMES[kv]
    harness_kv = _note(notes, r"kv_cache=([\w.]+)")
    if harness_kv:
        family = "mlx" if quant.startswith("MLX") or row["engine"] in ("mlx-lm", "mlx-vlm", "omlx", "vllm-mlx") else "gguf"
        if (family, harness_kv) in HARNESS_KV:
            request["kv_quant"] = HARNESS_KV[(family, harness_kv)]
    build = llama_cpp_build(row)
    if row["engine"] == "llama.cpp" and build is not None:
        request["llama_cpp_build"] = build
        if build < LEGACY_LLAMA_CPP_BUILD:
            request["engine"] = "llama.cpp (before mid-2024)"
    # oMLX before PR 688 (engines.toml omlx-legacy): the Apple harness's 0.3.4 runs.
    if row["engine"] == "omlx" and re.search(r"backend_version=0\.3\.[0-4];", notes):
        request["engine"] = "oMLX 0.3.4 and earlier"
    # Ollama before 0.30 (engines.toml ollama-legacy): its own Go engine for many architectures;
    # 0.30 replaced it with upstream llama-server (PR 16031). Its MLX tags still run in ollama-mlx.
    # The release rule is engines.ollama_engine_for_version, shared with the page's Measure your own.
    ollama = ollama_engine_for_version(_note(notes, r"backend_version=([^;,\s]+)")) if row["engine"] == "ollama" else None
    if ollama and ollama != "ollama":
        request["engine"] = load_engines()[ollama].name
    # llama.cpp's ./main timed its prompt as the process's first large batch (its warm-up decodes
    # two tokens): a cold start (params.py t_cold_batch_s). llama-bench warms up on the test itself.
    if re.search(r"(?:^|[\s(`])\./main\b", notes):
        request["cold_start"] = True
    toolbox = _note(notes, r"toolbox=(\w+)")
    if toolbox == "vulkan_amdvlk":
        request["backend"] = "vulkan-amdvlk"
    # rocBLAS's GEMM backend where the run states it (ROCBLAS_USE_HIPBLASLT=0 forces Tensile).
    hipblaslt = _note(notes, r"ROCBLAS_USE_HIPBLASLT=([01])\b")
    if row["backend"] == "rocm" and hipblaslt is not None:
        request["rocm_gemm"] = "hipblaslt" if hipblaslt == "1" else "tensile"
    threads = _note(notes, r"\bthreads=(\d+)")
    if threads and row["backend"] == "cpu":
        request["threads"] = int(threads)
    if row["backend"] == "cpu" and request["gpus"] > 1 and one_processor_group(row["hardware"], request["gpus"], notes):
        request["one_socket"] = True
    # A server's memory population as its owner lists it ("16x 32GB DDR4-2666"): all sockets' DIMMs.
    dimms = _note(notes, r"\b(\d+)x \d+ ?GB DDR\d")
    if dimms and row["backend"] == "cpu":
        request["memory_dimms"] = int(dimms)
    # A bandwidth the row's author measured on the machine ("~225GB/s mlc memory read bandwidth").
    measured = _note(notes, MEASURED_BANDWIDTH)
    if measured and row["backend"] == "cpu":
        request["measured_bandwidth_gbs"] = float(measured)
    ubatch = _note(notes, r"(?:n_ubatch=|-ub )(\d+)")
    if ubatch:
        request["ubatch"] = int(ubatch)
    # Multi-card rigs that state their links (lotto: "PCIe 3.0 x16, no NVLink").
    slot = re.search(r"PCIe (\d)\.0 x(\d+)", notes)
    if slot and request["gpus"] > 1:
        request["slot_pcie_gen"], request["slot_pcie_lanes"] = int(slot.group(1)), int(slot.group(2))
    if re.search(r"\bno NVLink\b", notes):
        request["nvlink"] = False
    # llama-bench prints the model file's size: custom mixes read what their file holds.
    size = re.search(r"\bsize=(\d+(?:\.\d+)?) ([GM])iB", notes)
    if size:
        request["file_gb"] = float(size.group(1)) * (2**30 if size.group(2) == "G" else 2**20) / 1e9
    nbatch = _note(notes, r"\bn_batch=(\d+)")
    if nbatch:
        request["nbatch"] = int(nbatch)
    request.update(row_placement(row["hardware"], notes))
    return request


#: Placement flags as sources print them: llama-bench's columns (``ngl=99``, ``n_cpu_moe=36``),
#: command lines (``-ngl 99``, ``--n-gpu-layers 99``, ``--n-cpu-moe 36``, ``-ncmoe 36``,
#: ``--cpu-moe``, ``-ot exps=CPU``) and llama-cpp-python's ``n_gpu_layers 0``.
NGL = re.compile(r"(?:(?<![\w-])-ngl[ =]|--n-gpu-layers[ =]|\bn_gpu_layers[ =]|\bngl=)(\d+)")
N_CPU_MOE = re.compile(r"(?:--n-cpu-moe[ =]|(?<![\w-])-ncmoe[ =]|\bn_cpu_moe=)(\d+)")
CPU_MOE = re.compile(r"(?:--cpu-moe|(?<![\w-])-cmoe)\b")
OVERRIDE = re.compile(r"(?:(?<![\w-])-ot[ =]|--override-tensors?[ =]|\boverride_tensor=)\"?([^\s;\"]+)")


def row_placement(hardware: str, notes: str) -> dict:
    """The placement a row's notes state, as request options. Read beside discrete cards only:
    on one memory (Apple Silicon, whose old llama.cpp builds took ``-ngl 1`` to mean "use Metal")
    or a CPU there is nothing to place."""
    found = {}
    ngl = NGL.search(notes)
    if ngl:
        found["n_gpu_layers"] = int(ngl.group(1))
    n_cpu_moe = N_CPU_MOE.search(notes)
    if n_cpu_moe and int(n_cpu_moe.group(1)):
        found["n_cpu_moe"] = int(n_cpu_moe.group(1))
    if CPU_MOE.search(notes):
        found["expert_offload"] = True
    override = OVERRIDE.search(notes)
    if override:
        found["tensor_overrides"] = override.group(1)
    if not found:
        return {}
    try:
        kind = resolve_device(hardware).kind
    except EngineInputError:
        return {}
    return found if kind == "gpu" else {}


def case_from_row(row: dict) -> Case:
    test = row.get("test", "")
    try:
        measured = float(row["tokens_per_s"])
    except (KeyError, ValueError):
        return Case(row, test, math.nan, status="bad: tokens_per_s")
    case = Case(row, test, measured)
    if test not in ("tg", "pp") or not measured > 0:
        case.status = "bad: test or value"
        return case
    try:
        request = row_request(row)
        system = build_system(request)
    except EngineInputError as exc:
        case.status = f"unresolved: {exc.field or 'input'}: {exc.message}"
        return case
    case.system = system
    case.key = system.params.key if system.params.own_fit else f"{system.engine.id}/{system.backend}"
    case.batch = max(1, _int(row.get("batch"), 1))
    case.tokens = max(1, _int(row.get("n_tokens"), 128 if test == "tg" else 512))
    depth = max(0, _int(row.get("depth"), 0))
    if test == "tg":
        case.step = run_features(system, depth, case.tokens, case.batch)
        case.tokens_per_unit = tokens_per_counted_unit(row)
        notes = row.get("notes", "")
        if "kind=single_stream_wall" in notes:
            prompt = int(_note(notes, r"prompt_tokens=(\d+)") or depth or 1)
            case.wall_prefill = prefill_features(system, prompt, 0, 1)
            case.wall_first_step = step_features(system, kv_read_elements(system.arch, prompt), 1, prompt)
    else:
        case.prefill = prefill_features(system, case.tokens, depth, case.batch)
    return case


def predict(case: Case, params: BackendParams, host: BackendParams | None = None) -> float:
    """Tokens per second the physics predicts for a case under ``params``."""
    if case.test == "pp":
        return case.tokens * case.batch / prefill_time_from(case.prefill, params).total_s
    step = step_time_from(case.step, params, host).total_s
    if case.wall_prefill is not None:
        ttft = prefill_time_from(case.wall_prefill, params).total_s + step_time_from(case.wall_first_step, params, host).total_s
        return case.tokens / (ttft + (case.tokens - 1) * step) / case.tokens_per_unit
    return case.batch / step / case.tokens_per_unit


def predict_default(case: Case) -> float:
    """Prediction with the parameters the engine would use for this set-up today."""
    system = case.system
    return predict(case, system.params.params, system.host_params.params)


def load_cases(path: str) -> list[Case]:
    try:
        handle = open(path, newline="", encoding="utf-8")
    except OSError as exc:
        raise EngineInputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("hardware", "model", "quant", "test", "tokens_per_s") if c not in (reader.fieldnames or [])]
        if missing:
            raise EngineInputError(f"{path}: missing column(s) {', '.join(missing)}")
        return [case_from_row(row) for row in reader]


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1), linear interpolation between order statistics."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarize(apes: dict[str, list[float]], unresolved: int) -> str:
    def part(test: str) -> str:
        values = apes.get(test, [])
        mdape = statistics.median(values) if values else math.nan
        return f"{test}_mdape={mdape:.3f} {test}_p90={percentile(values, 0.9):.3f} {test}_n={len(values)}"

    return f"SCORE {part('tg')} {part('pp')} unresolved={unresolved}"


def score_cases(cases: list[Case], predictor=predict_default) -> tuple[list[float | None], str]:
    predictions: list[float | None] = []
    apes: dict[str, list[float]] = {"tg": [], "pp": []}
    unresolved = 0
    for case in cases:
        if not case.resolved:
            predictions.append(None)
            unresolved += case.status.startswith("unresolved")
            continue
        value = predictor(case)
        predictions.append(value)
        apes[case.test].append(abs(value - case.measured) / case.measured)
    return predictions, summarize(apes, unresolved)


def score_main(path: str, out: str | None) -> int:
    cases = load_cases(path)
    predictions, line = score_cases(cases)
    if out:
        with open(out, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(dict.fromkeys([*cases[0].row.keys(), *OUT_COLUMNS])) if cases else OUT_COLUMNS, extrasaction="ignore")
            writer.writeheader()
            for case, predicted in zip(cases, predictions):
                record = dict(case.row)
                record["predicted_tps"] = "" if predicted is None else f"{predicted:.4f}"
                record["ape"] = "" if predicted is None else f"{abs(predicted - case.measured) / case.measured:.4f}"
                record["hardware_id"] = case.system.device.id if case.system else ""
                record["model_id"] = case.system.model.id if case.system else ""
                record["status"] = case.status
                writer.writerow(record)
    unresolved = [c for c in cases if c.status.startswith("unresolved")]
    for case in unresolved[:10]:
        print(f"unresolved: {case.row.get('hardware')} | {case.row.get('model')} | {case.row.get('quant')}: {case.status}", file=sys.stderr)
    print(line)
    return 0
