// "Where the numbers come from" (site/templates/panels/explain.j2): every number of the estimate
// with the terms that make it, the memory need against capacity, the confidence tier, and the
// commands that check it.

import { $, el, fillList } from "../dom.js";
import * as fmt from "../format.js";

const MEMORY_PARTS = [
  ["weights_gb", "Weights", "weights"],
  ["kv_gb", "KV cache", "kv"],
  ["compute_buffer_gb", "Compute buffers", "compute"],
  ["runtime_gb", "Runtime", "runtime"],
];

export function tierText(e) {
  const range = `likely ${fmt.rate(e.decode_tps_low)}–${fmt.rate(e.decode_tps_high)} tok/s`;
  if (e.tier === "measured") return `Measured: a benchmark of exactly this set-up exists; ${range}.`;
  if (e.tier === "calibrated") {
    return `Calibrated: the physics' few free parameters (bandwidth efficiency, fixed overhead per token, compute efficiency) are fitted to real llama-bench measurements of ${e.engine} on ${e.backend}; ${range} is where 80% of those measurements fell around the prediction.`;
  }
  const why = e.tier_reason || `there are no measurements of ${e.engine} on ${e.backend} yet, so this is the physics with efficiencies borrowed from the nearest calibrated back-end`;
  return `Projected: ${why}; ${range}, wide on purpose.`;
}

function decodeRows(e, request) {
  // Bytes moved per token are in GB, like the bandwidth (GB/s) they divide by; memory sizes
  // (what fits) are in GiB like every capacity on the page (fmt.memory).
  const b = e.breakdown;
  const rows = [
    ["Weights read per token", `${fmt.gigabytes(b.weights_read_gb)}: every active weight, once per token`],
    ["Bandwidth", `${fmt.bandwidth(b.bandwidth_gbs)} ${b.bandwidth_measured ? "measured" : "on paper"} × ${fmt.percent(b.eta_bw)} realised (fitted efficiency)${b.cpu_threads ? ` on ${fmt.count(b.cpu_threads)} threads` : ""} → ${fmt.duration(b.weights_s - b.unpack_s)} for the weights`],
  ];
  if (b.weight_stream_factor > 1 && b.weight_stream_kernel === "sycl-bf16-gemm") {
    rows.push(["BF16 GEMM fallback", `llama.cpp's SYCL backend had no matrix-vector kernel for BF16 weights before PR 21580 (build ${b.weight_stream_fixed_build}): it converts them to FP32 and runs a full matrix multiply, about 4× slower (the PR's measurement on an Arc Pro B70): ${fmt.number(b.weight_stream_factor, 2)}× the weights' time (included above)`]);
  } else if (b.weight_stream_factor > 1) {
    rows.push(["Integer-dot kernel", `llama.cpp's Vulkan backend multiplies these quantised weights on Intel with its integer-dot matrix-vector kernel, which streams them at about 60% of its float kernel's rate (Linux/Windows pairs, llama.cpp PR 19988): ${fmt.number(b.weight_stream_factor, 2)}× the weights' time (included above)`]);
  }
  if (b.latency_bound_gbs) {
    rows.push(["Memory latency", `the decode kernels keep about ${fmt.number(b.inflight_kib_per_sm, 1)} KiB in flight per SM and the memory answers in ${fmt.count(b.memory_latency_ns)} ns, so the SMs pull at most ${fmt.bandwidth(b.latency_bound_gbs)} (Little's law; fitted bytes in flight, measured latency): the weights stream at that rate`]);
  }
  if (b.cpu_kernel) {
    rows.push(["CPU threads", `${fmt.count(b.cpu_threads)} threads can draw ${fmt.bandwidth(b.cpu_bandwidth_gbs)} (each core streams only so fast; extra threads on a core add none)`]);
    rows.push(["Kernel", `${b.cpu_kernel} for the multiply-adds`]);
  }
  if (b.unpack_s > 0) rows.push(["Unpacking the weights", `${fmt.duration(b.unpack_s)} on the vector units (scales and packed bits${b.codebook_weights ? "; IQ1–IQ3 weights look up a codebook" : ""})${b.unpack_overlaps ? ", with the multiply-adds while the weights stream in: the longer of the two counts" : ""}`]);
  if (b.expert_tile_s > 0) rows.push(["BF16 experts, matrix-matrix shader", `${fmt.duration(b.expert_tile_s)} per token after the weight stream: llama.cpp's Vulkan backend multiplies BF16 routed experts in its matrix-matrix shader even for one token (its mat-vec rule lists F32, F16 and quantised types only), each touched expert as a whole 32-column tile at the prompt-processing rate`]);
  rows.push(
    ["KV cache read per token", `${fmt.gigabytes(b.kv_read_gb)} of keys and values of the context so far → ${fmt.duration(b.kv_s)}`],
  );
  if (b.kv_unfused_factor > 1) {
    rows.push(["Flash attention off", `the attention runs as separate kernels that read each KV head once per query head and pass the scores through memory: ${fmt.number(b.kv_unfused_factor, 1)}× the cache's bytes (included above)`]);
  }
  rows.push(["Fixed overhead per token", `${fmt.duration(b.fixed_s)} (kernel launches, synchronisation, sampling)`]);
  if (b.recurrent_s > 0) rows.push(["Recurrent layers", `${fmt.duration(b.recurrent_s)} of that: the gated-DeltaNet or Mamba layers update their state with a chain of small kernels of their own`]);
  if (b.vlm_sync_s > 0) rows.push(["Vision-language path", `${fmt.duration(b.vlm_sync_s)} of that: this engine version reads every layer's cache position back to the CPU, a GPU-to-CPU synchronisation per layer and token (oMLX issue 687, fixed by PR 688)`]);
  if (b.batched_s > 0 && b.hip_graphs_off) rows.push(["No HIP graphs", `${fmt.duration(b.batched_s)} of that: llama.cpp b${request.llama_cpp_build}'s ROCm build launches every kernel from the host (HIP graphs were off by default until PR 22254, April 2026), a host cost that a faster GPU does not shrink`]);
  else if (b.batched_s > 0 && b.graphs_off && !(request.batch > 1)) rows.push(["No graph replay", `${fmt.duration(b.batched_s)} of that: this build or model launches every kernel from the host instead of replaying a captured CUDA or HIP graph (llama.cpp: any expert matmul before PR 13014, 16-bit MoE experts between PR 19645 and PR 26802), a host cost that a faster GPU does not shrink`]);
  else if (b.batched_s > 0) rows.push(["Batched step", `${fmt.duration(b.batched_s)} of that: a step carrying several sequences launches its kernels one by one (no graph replay), a host cost that a faster GPU does not shrink`]);
  if (b.host_s > 0) rows.push(["Weights in system RAM", `${fmt.duration(b.host_s)} per token to read the offloaded part`]);
  if (b.transfer_s > 0) rows.push(["Op offload", `${fmt.duration(b.transfer_s)} per step copying the weights in system RAM to the GPU over PCIe: llama.cpp runs a step of 32 or more tokens there`]);
  if (b.sync_s > 0) rows.push(["Between devices", `${fmt.duration(b.sync_s)} per token over ${b.interconnect}`]);
  rows.push(["One decode step", `${fmt.duration(b.step_s)} → ${fmt.rate(e.decode_tps)} tok/s, ${b.memory_bound ? "limited by memory bandwidth" : "limited by compute"}`]);
  rows.push(["Ceiling", `${fmt.rate(e.decode_ceiling_tps)} tok/s if only the weights were read, at full bandwidth`]);
  rows.push(["At an empty context", `${fmt.rate(b.empty_context_tps)} tok/s (it slows as the chat grows)`]);
  if (e.speculative) {
    const s = e.speculative;
    rows.push([
      "Speculative decoding",
      `${s.method === "mtp" ? "the MTP head" : s.draft_model} drafts ${s.draft_tokens} tokens, ${fmt.percent(s.acceptance)} accepted each → ${fmt.number(s.tokens_per_cycle, 2)} tokens per ${fmt.duration(s.cycle_s)} cycle, ${fmt.factor(s.speedup)}`,
    ]);
  }
  return rows;
}

function prefillRows(e, request, device) {
  const b = e.breakdown;
  const cached = request.prefix_cached || 0;
  const rows = [
    ["Prompt", `${fmt.count(request.prompt_tokens - cached)} tokens to process${request.depth ? `, after ${fmt.count(request.depth)} already in the cache` : ""}`],
    ["Work", `${fmt.number(b.prefill_flops / 1e12, 2)} TFLOP (2 per active weight per token, plus attention over the context)`],
    ["Compute time", `${fmt.duration(b.prefill_compute_s)} at a fitted share of ${fmt.tflops(device?.fp16_tflops)} FP16${e.hardware.gpus > 1 ? ` per device × ${e.hardware.gpus}` : ""}`],
  ];
  if (b.prefill_micro_batches > 0) {
    rows.push(["Micro-batches", `${fmt.count(b.prefill_micro_batches)} of up to ${fmt.count(b.prefill_micro_batch_tokens)} tokens (llama.cpp -ub, at most -b): each reads the weights once${b.prefill_transfer_s > 0 ? " and copies the offloaded ones to the GPU" : ""}`]);
  }
  if (b.prefill_memory_s > 0) rows.push(["Reading the weights", `${fmt.duration(b.prefill_memory_s)} (per batch of prompt tokens)`]);
  if (b.prefill_attention_slowdown > 1) {
    rows.push(["Attention kernel", `llama.cpp b${request.llama_cpp_build} runs flash attention on the shader units (its matrix-core kernel for this backend came later): attention ${fmt.number(b.prefill_attention_slowdown, 1)}x slower`]);
  }
  if (b.prefill_attention_tile_s > 0) {
    rows.push(["Attention kernel", `${fmt.duration(b.prefill_attention_tile_s)} of the compute time: HIP's tile flash-attention kernel on the shader ALUs (no WMMA kernel for this GPU at this build, or heads wider than 128 or without grouped queries), at 22% of their packed-FP16 rate (llama.cpp PR 26419's Radeon 8060S figure)`]);
  }
  if (b.prefill_cold_s > 0) {
    rows.push(["Cold start", `${fmt.duration(b.prefill_cold_s)} once: a fresh process's first large batch finds and loads its CUDA kernels (fitted on llama.cpp's 2023 ./main timings)`]);
  }
  if (b.prefill_dequant_s > 0) {
    rows.push(["Dequantising for cuBLAS", `${fmt.duration(b.prefill_dequant_s)}: llama.cpp before its int8 tensor-core kernels (mid-2024) converts every weight matrix to 16 bits (32 bits in a row split) for each micro-batch above 32 tokens, then multiplies it with cuBLAS`]);
  }
  if (b.prefill_gemm_slowdown > 1) {
    rows.push(["GEMM library", `rocBLAS's Tensile backend (ROCBLAS_USE_HIPBLASLT=0) has no matrix-core GEMMs for this GPU's 16-bit weights: they run on the shader ALUs, ${fmt.number(b.prefill_gemm_slowdown, 1)}x slower than hipBLASLt's`]);
  }
  if (b.prefill_experts_s > 0) {
    rows.push(["Routed experts", `${fmt.duration(b.prefill_experts_s)}: each expert multiplies only the tokens routed to it, so its weights are read for a few tokens at a time (added to the rest)`]);
    rows.push(["Routing", `${fmt.duration(b.prefill_dispatch_s)} moving every token's activations to its experts and back, at the memory bandwidth`]);
  }
  if (b.prefill_host_loop_s > 0) {
    rows.push(["Expert loop on the host", `${fmt.duration(b.prefill_host_loop_s)}: at every MoE layer the host copies the router's choices, waits for the GPU and launches each touched expert's matmuls one by one (ik_llama.cpp; llama.cpp with 16-bit weights); the experts take the longer of this and their GPU time, to which ik_llama.cpp's small per-expert kernels (memsets, gathers, scatters, quantisations) add their stream time`]);
  }
  if (b.prefill_pipeline) rows.push(["Across the cards", b.prefill_pipeline]);
  if (b.prefill_transfer_s > 0) rows.push(["Copying offloaded weights", `${fmt.duration(b.prefill_transfer_s)}`]);
  rows.push(["Prefill", `${fmt.duration(b.prefill_s)} → ${fmt.rate(e.prefill_tps)} tok/s`]);
  rows.push(["First token", `prefill + one decode step (${fmt.duration(b.first_step_s)}) = ${fmt.duration(e.ttft_s)}`]);
  return rows;
}

function memoryRows(e) {
  const m = e.memory;
  const rows = MEMORY_PARTS.map(([key, label]) => [label, fmt.memory(m[key])]);
  rows.push(["Total", `${fmt.memory(m.total_gb)} of ${fmt.memory(m.usable_gb)} usable (${fmt.memory(m.device_memory_gb)} on the device${e.hardware.gpus > 1 ? `s, ${e.hardware.gpus} of them` : ""})`]);
  if (m.file_gb) rows.push(["Weight file", `${fmt.memory(m.file_gb)} as stated (Advanced): the weights scaled to what the file holds (a MoE file smaller than its label's recipe: its routed experts)`]);
  if (m.context_allocated) rows.push(["KV cache allocated", `${fmt.count(m.context_tokens)} tokens per sequence (Advanced): reserved at load, whatever the chat uses`]);
  if (m.placement_flags) rows.push(["Placement", `${m.placement_flags} as stated (Advanced): ${fmt.memory(m.gpu_weights_gb)} of weights on the device, ${fmt.memory(m.host_weights_gb)} in system RAM${m.host_expert_weights_gb > 0 ? ` (${fmt.memory(m.host_expert_weights_gb)} of them routed experts)` : ""}`]);
  // The -ngl is the engine's (memory.n_gpu_layers: as stated, the share of layers converted, or what fits).
  const ngl = m.n_gpu_layers === null || m.n_gpu_layers === undefined ? "" : ` (-ngl ${m.n_gpu_layers})`;
  const embedding = m.host_embedding_gb > 0 ? `, ${fmt.memory(m.host_embedding_gb)} of them the token embedding, which llama.cpp always keeps there` : "";
  if (m.host_weights_gb > m.host_embedding_gb) rows.push(["In system RAM", `${fmt.memory(m.host_weights_gb)} of weights${m.experts_on_host ? " (the MoE experts)" : ""}${embedding}, ${fmt.percent(m.gpu_layer_fraction)} of the layers stay on the device${ngl}`]);
  else if (m.host_embedding_gb > 0) rows.push(["In system RAM", `the token embedding, ${fmt.memory(m.host_embedding_gb)}: llama.cpp keeps it there and reads one row per token`]);
  // Beside discrete cards the offloaded part lives in system RAM, whose size is an input (Advanced).
  if (m.system_ram_gib !== null && m.system_ram_gib !== undefined) {
    rows.push(["System RAM", `${fmt.gibibytes(m.system_ram_gib)} assumed (Advanced), ${fmt.memory(m.host_usable_gb)} usable for offloaded weights${m.host_need_gb > 0 ? `, ${fmt.memory(m.host_need_gb)} needed` : ""}`]);
  }
  return rows;
}

function renderStack(stack, m) {
  const capacity = Math.max(m.usable_gb, m.total_gb, 1e-9);
  const parts = MEMORY_PARTS.map(([key, label, css]) => {
    const part = el("span", { class: `stack-part part-${css}`, title: `${label}: ${fmt.memory(m[key])}` });
    part.style.width = `${(100 * m[key]) / capacity}%`;
    return part;
  });
  const limit = el("span", { class: "stack-limit", title: `usable: ${fmt.memory(m.usable_gb)}` });
  limit.style.left = `${(100 * m.usable_gb) / capacity}%`;
  const legend = el("div", { class: "stack-legend" }, MEMORY_PARTS.map(([key, label, css]) => el("span", {}, el("i", { class: `part-${css}` }), `${label} ${fmt.memory(m[key])}`)), el("span", {}, el("i", { class: "limit" }), `usable ${fmt.memory(m.usable_gb)}`));
  stack.replaceChildren(el("div", { class: "stack-bar", role: "img", "aria-label": `${fmt.memory(m.total_gb)} needed of ${fmt.memory(m.usable_gb)} usable` }, parts, limit), legend);
}

function commandBlock({ tool, command, compare }) {
  const pre = el("pre", { class: "cli", tabindex: "0" }, command);
  const button = el("button", { type: "button", class: "chip copy", "aria-label": `Copy the ${tool} command` }, "Copy");
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(command);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Select and copy";
    }
    setTimeout(() => (button.textContent = "Copy"), 1800);
  });
  return el("div", { class: "command", dataset: { tool } }, el("div", { class: "command-head" }, el("strong", {}, tool), el("span", {}, compare), button), pre);
}

export class ExplainPanel {
  constructor(root) {
    const q = (selector) => $(selector, root);
    this.ui = {
      breakdownDecode: q("#breakdown-decode"),
      breakdownPrefill: q("#breakdown-prefill"),
      breakdownMemory: q("#breakdown-memory"),
      memoryStack: q("#memory-stack"),
      tierNote: q("#tier-note"),
      commands: q("#commands"),
      cli: q("#cli-line"),
    };
  }

  /** `device` is the chosen device's catalog entry (or the custom specs). */
  render(result, device) {
    const { ui } = this;
    const e = result.estimate;
    fillList(ui.breakdownDecode, decodeRows(e, result.request));
    fillList(ui.breakdownPrefill, prefillRows(e, result.request, device));
    fillList(ui.breakdownMemory, memoryRows(e));
    renderStack(ui.memoryStack, e.memory);
    ui.tierNote.textContent = tierText(e);
    ui.commands.replaceChildren(...(result.commands || []).map(commandBlock));
    ui.cli.textContent = result.cli;
  }
}
