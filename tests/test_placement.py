"""Placement as a llama.cpp command line states it (engine/offload.py): -ngl, --n-cpu-moe /
--cpu-moe and -ot tensor overrides, their memory and speed, the rows that state them
(engine/tools/score.py) and the check commands that carry them (engine/page/commands.py)."""

from __future__ import annotations

import re

import pytest

from engine import estimate
from engine.decode import step_features, step_time_from
from engine.errors import EngineInputError
from engine.kvcache import kv_read_elements
from engine.offload import OP_OFFLOAD_MIN_BATCH, PCIE_EFFICIENCY, Override, gguf_name, ngl_for_fraction, parse_overrides
from engine.page.commands import check_commands
from engine.parallel import pcie_link
from engine.prefill import prefill_features
from engine.quant import tensor_bytes
from engine.roofline import bandwidth_bytes_s
from engine.system import build_system
from engine.textformat import describe
from engine.tools.score import row_placement

#: A discrete card with its host, and a MoE model whose experts are most of its bytes.
MOE = {"hardware": "rx-7900-xt", "host": "amd-ryzen-9-5900x-32gb", "model": "gpt-oss-20b", "quant": "MXFP4", "backend": "rocm"}
DENSE = {"hardware": "rtx-3060-12gb", "model": "llama-3.1-8b", "quant": "Q4_K_M"}


def memory(request: dict) -> dict:
    """The memory report without the flags that state it (those differ by design)."""
    return {k: v for k, v in estimate(request)["memory"].items() if k not in ("placement_flags", "n_gpu_layers")}


def test_override_parser_reads_llama_cpp_syntax():
    assert parse_overrides("exps=CPU") == (Override("exps", True),)
    assert parse_overrides(r"blk\.(0|1)\.ffn_.*_exps\.=CPU, attn=CUDA0") == (
        Override(r"blk\.(0|1)\.ffn_.*_exps\.", True), Override("attn", False),
    )
    assert parse_overrides("ffn=ROCm1")[0].on_host is False
    assert parse_overrides("ffn=cpu")[0].on_host is True


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("exps", "PATTERN=BUFFER"),
        ("exps=DISK", "not CPU or a GPU buffer"),
        (r"(?<=blk\.1)\.ffn=CPU", "(?...)"),
        (r"(?i)EXPS=CPU", "(?...)"),
        (r"blk\.(1=CPU", "not a regular expression"),
    ],
)
def test_override_parser_refuses_what_it_cannot_read_alike(text, reason):
    with pytest.raises(EngineInputError) as error:
        parse_overrides(text)
    assert reason in error.value.message and error.value.field == "tensor_overrides"


def test_gguf_names_are_the_files():
    system = build_system(MOE)
    names = {gguf_name(t) for t in system.arch.tensors}
    assert {"blk.0.ffn_up_exps.weight", "blk.23.attn_q.weight", "blk.0.attn_q.bias", "output.weight", "token_embd.weight"} <= names


def test_ngl_counts_the_output_layer_first_as_current_builds_do():
    system = build_system(DENSE)
    layers, head_gb = system.arch.layers, system.profile.head / 1e9
    embedding_gb = system.profile.lookup_tables / 1e9
    everything = memory({**DENSE, "n_gpu_layers": 99})
    # Only the input layer (the token embedding) is in system RAM, and that is not an offload.
    assert everything["host_weights_gb"] == pytest.approx(embedding_gb) == everything["host_embedding_gb"]
    assert everything == memory(DENSE) and estimate(DENSE)["fit"] == "fits"
    # Current builds (PR 18148): -ngl N is the output layer and the last N-1 blocks, so -ngl equal
    # to the block count leaves block 0 in RAM and -ngl 1 holds the output layer alone.
    one_short = memory({**DENSE, "n_gpu_layers": layers})
    assert one_short["host_weights_gb"] == pytest.approx((system.profile.per_layer[0] + system.profile.lookup_tables) / 1e9)
    output_layer_gb = (system.profile.outside_layers - system.profile.lookup_tables) / 1e9
    assert memory({**DENSE, "n_gpu_layers": 1})["gpu_weights_gb"] == pytest.approx(output_layer_gb)
    # Builds before it: the last N blocks; the output layer only above the count. A count and the
    # page's fraction are one rule (offload.ngl_for_fraction).
    old = {**DENSE, "llama_cpp_build": 7000}
    blocks_only = memory({**old, "n_gpu_layers": layers})
    assert blocks_only["gpu_layer_fraction"] == 1 and blocks_only["host_weights_gb"] > head_gb
    assert memory({**old, "n_gpu_layers": layers // 2}) == memory({**old, "gpu_layers": 0.5})
    with pytest.raises(EngineInputError, match="not both"):
        estimate({**DENSE, "n_gpu_layers": 10, "gpu_layers": 0.5})


def test_the_page_share_of_layers_is_the_ngl_it_prints():
    """gpu_layers (the page's share) and n_gpu_layers (-ngl) are one option through one conversion:
    the engine places by -ngl round(share x blocks), the memory report and the check commands say
    that -ngl, and every block is everything (the output layer too)."""
    layers = build_system(DENSE).arch.layers
    for share in (0.0, 0.25, 0.5, 0.9, 1.0):
        ngl = ngl_for_fraction(layers, share)
        assert ngl == (layers + 1 if share == 1 else round(share * layers))
        for build in (None, 7000):
            base = {**DENSE, **({"llama_cpp_build": build} if build else {})}
            by_share, by_count = estimate({**base, "gpu_layers": share}), estimate({**base, "n_gpu_layers": ngl})
            assert by_share["memory"]["n_gpu_layers"] == ngl
            assert {k: v for k, v in by_share["memory"].items() if k != "placement_flags"} == {
                k: v for k, v in by_count["memory"].items() if k != "placement_flags"
            }
            assert by_share["decode_tps"] == by_count["decode_tps"]
            request = {**base, "prompt_tokens": 512, "gen_tokens": 128, "gpu_layers": share}
            for command in check_commands(request, by_share):
                words = command["command"].split()
                assert words[words.index("-ngl") + 1] == str(ngl)
    # The CLI's text names the same -ngl.
    assert f"llama.cpp -ngl {ngl_for_fraction(layers, 0.5)}" in describe(estimate({**DENSE, "gpu_layers": 0.5}))
    # A current build reads -ngl 16 of 32 as the output layer and 15 blocks.
    half = estimate({**DENSE, "gpu_layers": 0.5})["memory"]
    assert half["gpu_layer_fraction"] == pytest.approx((layers // 2 - 1) / layers)
    # The automatic split states its -ngl too: the largest count that fits.
    big = {"hardware": "rtx-3060-12gb", "model": "llama-3.1-70b", "quant": "Q4_K_M"}
    auto = estimate(big)["memory"]
    assert auto["n_gpu_layers"] is not None and 0 < auto["n_gpu_layers"] < 80
    assert memory(big) == memory({**big, "n_gpu_layers": auto["n_gpu_layers"]})
    assert memory({**big, "n_gpu_layers": auto["n_gpu_layers"] + 1})["device_need_gb"] > auto["usable_gb"]


def test_n_cpu_moe_moves_the_experts_of_the_first_layers():
    layers = build_system(MOE).arch.layers
    all_experts = estimate({**MOE, "expert_offload": True})
    assert estimate({**MOE, "n_cpu_moe": layers})["memory"]["host_weights_gb"] == pytest.approx(all_experts["memory"]["host_weights_gb"])
    assert estimate({**MOE, "n_cpu_moe": 999})["decode_tps"] == pytest.approx(all_experts["decode_tps"])
    previous = estimate(MOE)
    for n in (4, 12, layers):
        now = estimate({**MOE, "n_cpu_moe": n})
        # Each expert layer sent to RAM: less VRAM, slower decode (read at system-RAM bandwidth).
        assert now["memory"]["gpu_weights_gb"] < previous["memory"]["gpu_weights_gb"]
        assert now["decode_tps"] < previous["decode_tps"]
        m = now["memory"]
        assert m["host_expert_weights_gb"] + m["host_embedding_gb"] == pytest.approx(m["host_weights_gb"])
        previous = now
    with pytest.raises(EngineInputError, match="mixture-of-experts"):
        estimate({**DENSE, "n_cpu_moe": 4})


def test_tensor_overrides_move_what_they_match():
    system = build_system(MOE)
    sizes = dict(zip((gguf_name(t) for t in system.arch.tensors), tensor_bytes(system.arch, system.quant)))
    # exps=CPU: every routed-expert tensor (weights and biases: llama.cpp's regex_search matches both).
    expected = sum(size for name, size in sizes.items() if "exps" in name)
    # ... beside the token embedding, which llama.cpp keeps in system RAM anyway.
    expected += sizes["token_embd.weight"]
    assert memory({**MOE, "tensor_overrides": "exps=CPU"})["host_weights_gb"] == pytest.approx(expected / 1e9)
    # Two blocks' feed-forward tensors, experts and router.
    pattern = r"blk\.(0|1)\.ffn_.*"
    expected = sum(size for name, size in sizes.items() if re.search(pattern, name)) + sizes["token_embd.weight"]
    m = memory({**MOE, "tensor_overrides": pattern + "=CPU"})
    assert m["host_weights_gb"] == pytest.approx(expected / 1e9) and m["gpu_layer_fraction"] == 1
    # An override to the GPU wins over -ngl: blocks in RAM by -ngl 0, brought back by the pattern.
    back = memory({**MOE, "n_gpu_layers": 0, "tensor_overrides": r"blk\..*=ROCm0"})
    assert back["host_weights_gb"] == pytest.approx(system.profile.outside_layers / 1e9)
    # The explain panel's words: the flags as stated.
    assert estimate({**MOE, "n_cpu_moe": 4, "tensor_overrides": "attn=CPU"})["memory"]["placement_flags"] == "--n-cpu-moe 4 -ot attn=CPU"
    assert estimate(MOE)["memory"]["placement_flags"] == ""


@pytest.mark.parametrize(
    ("request_patch", "field"),
    [
        ({"tensor_overrides": r"blk\.99\.ffn=CPU"}, "tensor_overrides"),
        ({"hardware": "apple-m4-max-40c-64gb", "tensor_overrides": "exps=CPU", "host": None, "backend": None}, "tensor_overrides"),
        ({"tensor_overrides": "x" * 201}, "tensor_overrides"),
    ],
)
def test_placement_that_cannot_apply_is_refused_with_a_reason(request_patch, field):
    with pytest.raises(EngineInputError) as error:
        estimate({**MOE, "quant": "MXFP4", **request_patch})
    assert error.value.field == field and error.value.message


def test_prefill_copies_host_weights_from_the_op_offload_batch_and_computes_smaller_ones_on_the_host():
    system = build_system({**MOE, "expert_offload": True})
    placement, pcie = system.placement, pcie_link(system)[2] * PCIE_EFFICIENCY
    # From 32 tokens the experts are copied over PCIe, only those the micro-batch routes to
    # (gpt-oss-20b: 4 of 32 a token, so 32 tokens touch 1 - (28/32)^32 = 98.6% of them, 512 all);
    # the token embedding in system RAM is looked up, never copied.
    experts = placement.host_expert_bytes
    assert placement.host_bytes - placement.host_lookup_bytes == pytest.approx(experts)
    touched_32 = 1 - (28 / 32) ** 32
    assert prefill_features(system, OP_OFFLOAD_MIN_BATCH, 0).transfer_s == pytest.approx(experts * touched_32 / pcie)
    assert prefill_features(system, 512, 0).transfer_s == pytest.approx(experts / pcie)
    # Below the batch the host's cores read only the experts the tokens touch, at system-RAM
    # bandwidth: one token touches top-k of n (4 of 32 for gpt-oss-20b); its multiply-adds add little.
    one = prefill_features(system, 1, 0).transfer_s
    read_s = experts * 4 / 32 / bandwidth_bytes_s(system.host, "cpu")
    assert read_s <= one < 1.3 * read_s and one < experts / pcie / 4


def test_rows_state_their_placement_beside_discrete_cards_only():
    assert row_placement("RTX 4090", "ngl=99; fa=1") == {"n_gpu_layers": 99}
    assert row_placement("RTX 4090", "llama-server -ngl 999 --n-cpu-moe 20 -ot exps=CPU") == {
        "n_gpu_layers": 999, "n_cpu_moe": 20, "tensor_overrides": "exps=CPU",
    }
    assert row_placement("RTX 4090", "-cmoe; build 6194") == {"expert_offload": True}
    # Old Metal builds took -ngl 1 to mean "use the GPU"; a CPU row's n_gpu_layers 0 says nothing.
    assert row_placement("Apple M2 Ultra 76-core GPU 192GB", "-ngl 1") == {}
    assert row_placement("Intel Xeon Gold 6138", "n_gpu_layers 0") == {}


def test_check_commands_carry_the_stated_flags():
    request = {**MOE, "prompt_tokens": 512, "gen_tokens": 128, "n_gpu_layers": 20, "n_cpu_moe": 6, "tensor_overrides": r"blk\.3\.ffn_.*=CPU"}
    commands = {c["tool"]: c["command"] for c in check_commands(request, estimate(request))}
    for tool in ("llama-bench", "llama-server"):
        assert "-ngl 20" in commands[tool] and "-ncmoe 6" in commands[tool]
        assert "-ot 'blk\\.3\\.ffn_.*=CPU'" in commands[tool]


def test_expert_offload_pinned_to_a_published_run():
    """ggml-org/llama.cpp discussion 15396 ("guide : running gpt-oss with llama.cpp"), a reply
    measuring an RX 7900 XT (20 GB) + Ryzen 9 5900X with 32 GB of dual-channel DDR4-3200, llama.cpp
    build 6194 on ROCm 6.4.1, gpt-oss-20b: ~94 tok/s with everything on the card (-ngl 99 -fa) and
    ~20 tok/s with every MoE layer's experts in system RAM (-cmoe), "an 80% hit". The engine puts
    the slow part where the run did: the experts read at the host's bandwidth."""
    on_card = estimate({**MOE, "n_gpu_layers": 99, "llama_cpp_build": 6194})["decode_tps"]
    offloaded = estimate({**MOE, "n_gpu_layers": 99, "expert_offload": True, "llama_cpp_build": 6194})["decode_tps"]
    # The published figures are read off the web UI ("~94", "~20"): the absolute rate within 35%,
    # the ratio (what offload costs, the mechanism under test) within 20%.
    assert offloaded == pytest.approx(20, rel=0.35)
    assert offloaded / on_card == pytest.approx(20 / 94, rel=0.20)


def test_decode_pays_the_op_offload_copy_from_32_tokens_a_step_and_computes_on_the_host_below():
    """llama.cpp's op offload looks at the tokens of a step, not the phase (offload.OP_OFFLOAD_MIN_BATCH):
    31 concurrent sequences decode with the experts in system RAM read by the host's cores, 32 pay
    a PCIe copy of the experts they route to, and so do 8 sequences verifying 3 drafted tokens each."""
    system = build_system({**MOE, "expert_offload": True})
    placement, pcie = system.placement, pcie_link(system)[2] * PCIE_EFFICIENCY
    context = kv_read_elements(system.arch, 512)

    def step(batch, per_sequence=1):
        features = step_features(system, context, batch, 512, per_sequence)
        return features, step_time_from(features, system.params.params, system.host_params.params)

    below, below_time = step(31)
    assert below.transfer_s == 0 and below.host_expert_bytes == placement.host_expert_bytes and below_time.host_s > 0
    at, at_time = step(32)
    touched = 1 - (28 / 32) ** 32  # gpt-oss-20b routes 4 of 32 experts a token
    assert at.transfer_s == pytest.approx(placement.host_expert_bytes * touched / pcie)
    assert at.host_expert_bytes == 0 and at_time.host_s == 0 and at_time.transfer_s == at.transfer_s
    # 10.2 GB of experts over PCIe 4.0 x16 at 80% (25.2 GB/s): ~0.40 s a step, the whole step's
    # bound; the host's DDR4 read 98% of them in ~0.27 s at 31 sequences.
    assert 0.35 < at.transfer_s < 0.45 and below_time.total_s < at_time.total_s
    # Speculative verification: 8 sequences x (3 drafted + 1) tokens = 32 tokens in one step.
    assert step(8, 4)[0].transfer_s > 0 and step(7, 4)[0].transfer_s == 0
    # A step beyond the batch copies the same weights once: the total rate grows with the batch.
    assert 64 / step(64)[1].total_s > 1.8 * 32 / at_time.total_s
    # Without weights in system RAM nothing is copied at any batch.
    resident = build_system(MOE)
    assert step_features(resident, context, 64, 512).transfer_s == 0


def test_llama_cpp_keeps_the_token_embedding_in_system_ram_and_a_tied_head_on_the_card():
    """Gemma 3 27B: a 262,144 x 5,376 token embedding (1.41 B weights), tied to the output head.
    llama.cpp keeps the input layer in system RAM (llama-model.cpp dev_input) and, with the output
    layer on the GPU, loads the tied head there as its own copy (TENSOR_DUPLICATED): the card holds
    every weight of the file, system RAM the embedding once more. Other engines keep it on the card."""
    request = {"hardware": "rtx-4090", "model": "gemma-3-27b", "quant": "Q4_K_M"}
    system = build_system(request)
    sizes = dict(zip((gguf_name(t) for t in system.arch.tensors), tensor_bytes(system.arch, system.quant)))
    embedding = sizes["token_embd.weight"]
    assert system.profile.tied and "output.weight" not in sizes
    assert 262_144 * 5_376 * 4.5 / 8 < embedding < 262_144 * 5_376 * 6.6 / 8  # a 4.5-6.6 bit type
    m = estimate(request)["memory"]
    assert m["host_weights_gb"] == pytest.approx(embedding / 1e9) == m["host_embedding_gb"]
    assert m["gpu_weights_gb"] == pytest.approx(m["weights_gb"]) and estimate(request)["fit"] == "fits"
    # Not an offload: decode reads one row of it per token, so the speed is the card's.
    assert not system.placement.offloaded and estimate(request)["breakdown"]["host_s"] == 0
    # With the output layer in system RAM too (-ngl 0) the tied head is that same tensor: no copy
    # on the card, and the head's matmul reads it there.
    none = build_system({**request, "n_gpu_layers": 0}).placement
    assert none.gpu_bytes == 0 and none.host_bytes == pytest.approx(system.profile.total)
    assert none.host_dense_bytes >= embedding and none.host_lookup_bytes == 0
    # A model whose embedding is a third of it (Gemma 3 1B): the card's share drops by that third
    # only on engines that pin it; an untied model (Llama 3.1 8B) keeps no second copy.
    small = build_system({**request, "model": "gemma-3-1b"})
    assert small.placement.host_lookup_bytes > 0.3 * small.profile.total
    llama = build_system(DENSE).placement
    assert llama.gpu_bytes + llama.host_bytes == pytest.approx(build_system(DENSE).profile.total)
    assert estimate({**request, "engine": "vllm", "quant": "AWQ"})["memory"]["host_weights_gb"] == 0
    # A unified-memory device has nothing to pin it away from.
    mac = build_system({**request, "hardware": "apple-m4-max-40c-64gb"}).placement
    assert mac.host_bytes == 0
