"""Measure your own: what a local server reports, resolved to the catalog by engine.page.server
(model from names, else architecture and size; weight format from the server's type string, else
the file name; Ollama's size_vram as placement), and hostile reports refused or ignored."""

from __future__ import annotations

import json

import pytest

from engine.errors import EngineInputError
from engine.page import handle
from engine.page.server import server_model
from engine.page.fields import DEFAULT_VIEW
from engine.page.view import estimate_view

VIEW = {**DEFAULT_VIEW, "hw": "rtx-3060", "prompt": 14}


def resolve(**report):
    return server_model({"report": report, "view": VIEW})


@pytest.mark.parametrize(
    ("report", "model", "quant"),
    [
        ({"server": "llama-server", "names": ["Llama-3.2-1B-Instruct-Q4_K_M.gguf"], "ftype": "Q4_K - Medium", "params": 1235814432}, "llama-3.2-1b", "Q4_K_M"),
        ({"server": "llama-server", "names": ["/m/Meta-Llama-3.1-8B-Instruct-Q8_0.gguf"]}, "llama-3.1-8b", "Q8_0"),
        ({"server": "llama-server", "names": ["Qwen3-8B-UD-Q4_K_XL-00001-of-00002.gguf"]}, "qwen3-8b", "UD-Q4_K_XL"),
        ({"server": "llama-server", "names": ["gpt-oss-20b-mxfp4.gguf"], "ftype": "MXFP4 MoE"}, "gpt-oss-20b", "MXFP4"),
        ({"server": "llama-server", "names": ["x.gguf"], "ftype": "IQ4_XS - 4.25 bpw", "arch": "llama", "params": 1235814432, "layers": 16, "n_embd": 2048}, "llama-3.2-1b", "IQ4_XS"),
        ({"server": "ollama", "names": ["llama3.1:8b"], "ftype": "Q4_K_M"}, "llama-3.1-8b", "Q4_K_M"),
    ],
)
def test_names_and_types_resolve_to_the_catalog(report, model, quant):
    result = resolve(**report)
    assert (result["model"], result["quant"]) == (model, quant), result["text"]
    assert result["estimate"]["decode_tps"] > 0
    assert result["estimate"] == estimate_view(result["view"])["estimate"]


def test_a_name_contradicted_by_the_parameter_count_is_not_taken():
    result = resolve(server="llama-server", names=["Llama-3.2-1B-Instruct-Q4_K_M.gguf"], params=70.6e9)
    assert result["model"] != "llama-3.2-1b"


def test_ollama_size_vram_below_size_offloads_that_share_and_lmstudio_mlx_runs_mlx():
    result = resolve(server="ollama", names=["llama3.1:8b"], ftype="Q4_K_M", loaded_bytes=6.5e9, size_vram=4.0e9, size_bytes=4.92e9)
    assert (result["view"]["offload"], result["view"]["gpu_pct"], result["view"]["engine"]) == ("layers", 62, "ollama")
    assert any("system RAM" in c for c in result["checks"])
    whole = resolve(server="ollama", names=["llama3.1:8b"], ftype="Q4_K_M", loaded_bytes=6.5e9, size_vram=6.5e9)
    assert whole["view"]["offload"] == "auto"
    report = {"server": "lmstudio", "names": ["qwen3-8b"], "ftype": "4bit", "format": "mlx"}
    mlx = server_model({"report": report, "view": {**VIEW, "hw": "apple-m4-max-40c-128gb"}})
    assert (mlx["model"], mlx["quant"], mlx["view"]["engine"]) == ("qwen3-8b", "MLX-4bit", "mlx-lm")
    # MLX weights on an NVIDIA card: resolved, said, not predicted.
    on_cuda = server_model({"report": report, "view": VIEW})
    assert on_cuda["model"] == "qwen3-8b" and on_cuda["estimate"] is None and "cannot be predicted" in on_cuda["text"]


def test_unknown_models_say_so_and_predict_nothing_of_their_own():
    result = resolve(server="openai", names=["my-finetune"])
    assert result["model"] == "" and result["estimate"] is None and "not resolved" in result["text"]
    # An architecture and size several catalog models share is not guessed.
    several = resolve(server="llama-server", names=["x.gguf"], arch="llama", params=8030261248, layers=32, n_embd=4096)
    assert several["model"] == "" and "Llama 3.1 8B" in several["text"]


def test_hostile_reports_are_refused_or_ignored():
    for args in ({}, {"report": {}, "view": VIEW}, {"report": {"server": "vllm"}, "view": VIEW}, {"report": {"server": "ollama", "names": "x"}, "view": VIEW},
                 {"report": {"server": "ollama", "names": ["x" * 5000]}, "view": VIEW}, {"report": {"server": "ollama"}, "view": "x"}, {"report": {"server": "ollama"}, "view": {"prompt": -1}}):
        with pytest.raises(EngineInputError):
            server_model(args)
    # A server's implausible figures are ignored, never used.
    result = resolve(server="ollama", names=["llama3.1:8b"], params=float("nan"), size_bytes=-5, size_vram="<b>", loaded_bytes=1e30)
    assert result["model"] == "llama-3.1-8b" and result["view"]["offload"] == "auto"
    answer = json.loads(handle(json.dumps({"fn": "server_model", "args": {"report": {"server": "ollama", "names": [1]}, "view": VIEW}})))
    assert answer["ok"] is False and "names" in answer["error"]["message"]


def test_the_files_size_and_the_servers_kv_allocation_are_what_is_predicted():
    # A "Q8_0" DeepSeek-R1 that llama-bench reports as a 307.20 GiB file (a mix: a real Q8_0 is
    # ~713 GB; data/calibration/SOURCES.md, ik_llama.cpp discussion 266, 16x RTX 3090). Predicted
    # for the file it fits the sixteen cards; from its label it would not.
    report = {"server": "llama-server", "names": ["DeepSeek-R1-Q8_0-00001-of-00015.gguf"], "ftype": "Q8_0", "size_bytes": 307.20 * 2**30}
    view = {**VIEW, "hw": "rtx-3090", "gpus": 16}
    result = server_model({"report": report, "view": view})
    assert (result["model"], result["quant"], result["view"]["file"]) == ("deepseek-r1", "Q8_0", 329.853)
    assert result["estimate"]["memory"]["weights_gb"] == pytest.approx(329.85, rel=0.01)
    assert result["estimate"]["fit"] == "fits"
    assert any("mix of other tensor types" in check for check in result["checks"])
    label_only = estimate_view({**result["view"], "file": 0})["estimate"]
    assert label_only["fit"] != "fits" and label_only["memory"]["weights_gb"] > 600
    # llama-server reserved 131,072 tokens of KV cache per slot at load: on a 12 GB card that is
    # what decides whether Llama 3.1 8B fits, whatever the measured prompt used.
    big = resolve(server="llama-server", names=["Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"], n_ctx=131072, size_bytes=4.92e9)
    assert big["view"]["ctx"] == 131072 and big["estimate"]["memory"]["kv_gb"] > 16
    small = resolve(server="llama-server", names=["Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"], n_ctx=4096, size_bytes=4.92e9)
    assert small["estimate"]["memory"]["kv_gb"] < 1 and small["estimate"]["fit"] == "fits"
    assert "4,096 tokens" in small["text"] and not small["checks"]


def test_llama_servers_build_is_the_build_predicted():
    """llama-server's /props build_info ("b7423-...") is the build the prediction is for: before
    b7654 RDNA4 ran prefill flash attention on its shader ALUs (engine/prefill.py)."""
    on_r9700 = {**VIEW, "hw": "radeon-ai-pro-r9700", "engine": "llama.cpp", "prompt": 2048, "depth": 16384}
    report = {"server": "llama-server", "names": ["Qwen3-30B-A3B-Q4_K_M.gguf"], "ftype": "Q4_K - Medium"}
    old = server_model({"report": {**report, "build_info": "b7423-8a1b2c3d"}, "view": on_r9700})
    new = server_model({"report": {**report, "build_info": "b9187-00aa11bb"}, "view": on_r9700})
    assert (old["view"]["build"], new["view"]["build"]) == (7423, 9187)
    assert "llama.cpp b7423" in old["text"]
    assert old["estimate"]["prefill_tps"] < 0.9 * new["estimate"]["prefill_tps"]
    assert old["estimate"] == estimate_view(old["view"])["estimate"]
    # Not a build number the engine takes, or not a llama-server: the engine's current release.
    for build_info, server in (("unknown", "llama-server"), ("b12-abc", "llama-server"), ("b7423", "ollama")):
        result = server_model({"report": {**report, "server": server, "build_info": build_info}, "view": on_r9700})
        assert "build" not in result["view"] or result["view"]["build"] == 0, build_info


def test_the_build_field_reaches_the_request():
    view = {**VIEW, "build": 7423}
    assert estimate_view(view)["request"]["llama_cpp_build"] == 7423
    assert "llama_cpp_build" not in estimate_view(VIEW)["request"]


def test_the_offloaded_layers_of_llama_cpps_load_log_are_the_ngl_predicted():
    """llama.cpp logs "load_tensors: offloaded N/M layers to GPU" (N = min(-ngl, blocks + 1), M =
    blocks + 1); no server reports it over HTTP. A pasted line becomes the page's -ngl field
    (n_gpu_layers), not the share of layers; every layer means everything on the card; Ollama's
    size_vram share yields to it."""
    base = {"server": "llama-server", "names": ["Llama-3.2-1B-Instruct-Q4_K_M.gguf"], "ftype": "Q4_K - Medium", "build_info": "b7800-abc"}
    result = resolve(**base, offload_log="llama_model_load: load_tensors: offloaded 10/17 layers to GPU")
    assert (result["view"]["offload"], result["view"]["ngl"]) == ("flags", 10)
    assert result["estimate"]["memory"]["n_gpu_layers"] == 10
    request = estimate_view(result["view"])["request"]
    assert request["n_gpu_layers"] == 10 and "gpu_layers" not in request
    # b7800 reads -ngl 10 as the output layer and the last 9 of the 16 blocks.
    assert result["estimate"]["memory"]["gpu_layer_fraction"] == 9 / 16
    assert "offloaded 10 of 17 layers" in " ".join(result["checks"])
    everything = resolve(**base, offload_log="17/17")
    assert everything["view"]["offload"] == "auto" and everything["estimate"]["memory"]["n_gpu_layers"] is None
    none = resolve(**base, offload_log="offloaded 0/17 layers to GPU")
    assert none["estimate"]["memory"]["gpu_weights_gb"] == 0 and none["estimate"]["decode_tps"] < result["estimate"]["decode_tps"]
    # A log of another model's layer count is flagged.
    assert "counts 32 layers" in " ".join(resolve(**base, offload_log="20/33")["checks"])
    ollama = resolve(server="ollama", names=["llama3.2:1b"], ftype="Q4_K_M", size_bytes=1.3e9, loaded_bytes=2.0e9, size_vram=1.0e9, offload_log="12/17")
    assert (ollama["view"]["offload"], ollama["view"]["ngl"]) == ("flags", 12)
    for line in ("offloaded 18/17 layers to GPU", "all of them", "x" * 401):
        with pytest.raises(EngineInputError) as error:
            resolve(**base, offload_log=line)
        assert error.value.field == "offload_log"


@pytest.mark.parametrize(
    ("version", "engine"),
    [("0.29.9", "ollama-legacy"), ("0.23.1", "ollama-legacy"), ("0.19.0", "ollama-legacy"), ("v0.12.3", "ollama-legacy"), ("0.29.9-rc2", "ollama-legacy"),
     ("0.30.0", "ollama"), ("0.30.0-rc1", "ollama"), ("0.30", "ollama"), ("0.32.15", "ollama"), ("1.0.0", "ollama"),
     ("", None), ("garbage", None), ("0.x.1", None), ("0.23.1; rm -rf /", None), ("0.0.0", None), (None, None), (23, None), ([], None)],
)
def test_ollamas_release_picks_its_engine(version, engine):
    """Ollama 0.30 (PR 16031; its release candidates already without runner/ollamarunner) runs
    every GGUF in llama-server; earlier releases run the Go engine (ollama-legacy). One rule for
    calibration rows and the page; a version that names no release (a source build's 0.0.0) is None."""
    from engine.engines import ollama_engine_for_version
    from engine.tools.score import row_request

    assert ollama_engine_for_version(version) == engine
    if isinstance(version, str) and ";" not in version:
        row = {"hardware": "Apple M3 Max 64GB", "model": "Llama-3.1-8B", "quant": "Q4_K_M", "engine": "ollama", "backend": "metal",
               "n_devices": "1", "split_mode": "none", "notes": f"backend_version={version}; kv_cache=default"}
        assert row_request(row)["engine"] == ("Ollama before 0.30" if engine == "ollama-legacy" else "ollama")


def test_measure_your_own_compares_an_ollama_server_with_its_releases_engine():
    """The server's /api/version decides: 0.23.1 is compared with the Go engine (slower on a
    gated-DeltaNet hybrid on a Mac), 0.32.15 with llama-server; a missing or garbage version keeps
    today's Ollama and says so; none of it is an error."""
    mac = {**VIEW, "hw": "apple-m3-max-40c-64gb"}
    report = {"server": "ollama", "names": ["qwen3.5:35b-a3b"], "ftype": "Q4_K_M"}
    old = server_model({"report": {**report, "version": "0.23.1"}, "view": mac})
    new = server_model({"report": {**report, "version": "0.32.15"}, "view": mac})
    assert (old["engine"], old["view"]["engine"], new["engine"], new["view"]["engine"]) == ("ollama-legacy", "ollama-legacy", "ollama", "ollama")
    assert "Ollama before 0.30" in old["text"] and "Ollama 0.23.1" in old["text"]
    assert "Ollama 0.32.15" in new["text"] and "llama-server" in new["text"]
    assert old["estimate"]["decode_tps"] < 0.8 * new["estimate"]["decode_tps"]  # the Go engine's unfused DeltaNet
    assert old["estimate"] == estimate_view(old["view"])["estimate"]
    for version, said in (("", "did not report its version"), ("banana", "“banana” names no release"), ("0.0.0", "names no release")):
        result = server_model({"report": {**report, "version": version}, "view": mac})
        assert result["view"]["engine"] == "ollama" and said in result["text"] and "not known" in result["text"], result["text"]
    # A version is Ollama's: another server's is not read.
    llama = server_model({"report": {**report, "server": "llama-server", "version": "0.23.1"}, "view": mac})
    assert llama["view"]["engine"] == "llama-cpp" and "Ollama" not in llama["text"]
    with pytest.raises(EngineInputError):
        server_model({"report": {**report, "version": ["0.23.1"]}, "view": mac})
