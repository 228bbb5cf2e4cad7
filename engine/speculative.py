"""Speculative decoding: a small draft model (or the model's own MTP head) proposes k tokens, the
target checks them all in one forward pass (docs/physics.md section 8).

Per cycle the draft runs k decode steps and the target one verification pass over k+1 tokens of
the same sequence: memory bound, so about the cost of one ordinary step plus the extra matmul
work. With per-token acceptance a, a cycle emits on average (1 - a^(k+1)) / (1 - a) tokens
(Leviathan et al., 2023, "Fast Inference from Transformers via Speculative Decoding", eq. 1):
the accepted drafted tokens plus the target's own next token. Output arrives in bursts.

MTP (DeepSeek-V3, GLM-4.5, Qwen3.5 ...): the draft is the model's multi-token-prediction block,
which reads one extra layer and the shared output head per drafted token.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .catalog import GB
from .decode import step_features, step_time_from
from .parallel import parallel_cards
from .errors import EngineInputError
from .kvcache import kv_read_elements
from .roofline import bandwidth_bytes_s, realised_bandwidth, soc_memory
from .system import System
from .weights import distinct_expert_fraction

#: Per-token acceptance of drafted tokens by workload. Near-greedy work (code, JSON,
#: extraction) accepts most drafts; high-temperature creative text the fewest. Draft models:
#: Leviathan et al. (2023) report alpha 0.6-0.9 across tasks and pairs; MTP: the DeepSeek-V3
#: technical report (arXiv 2412.19437, section 5.4.3) measures 85-90% acceptance of the second
#: token.
ACCEPTANCE = {
    "draft": {"code": 0.85, "chat": 0.70, "creative": 0.55},
    "mtp": {"code": 0.90, "chat": 0.82, "creative": 0.70},
}
#: Seed of the simulated acceptances of the stream schedule (same request, same bursts).
SCHEDULE_SEED = 20231011


def expected_tokens_per_cycle(acceptance: float, drafted: int) -> float:
    """(1 - a^(k+1)) / (1 - a): accepted drafts plus the target's own token, on average."""
    if acceptance >= 1.0:
        return drafted + 1.0
    return (1 - acceptance ** (drafted + 1)) / (1 - acceptance)


@dataclass(frozen=True)
class SpeculativePlan:
    method: str  # "draft" or "mtp"
    drafted: int  # k, tokens proposed per cycle
    acceptance: float
    draft_step_s: float  # one drafted token
    verify_s: float  # the target's pass over k+1 tokens
    draft_model: str
    draft_memory_bytes: float  # draft weights and cache

    @property
    def cycle_s(self) -> float:
        return self.drafted * self.draft_step_s + self.verify_s

    @property
    def tokens_per_cycle(self) -> float:
        return expected_tokens_per_cycle(self.acceptance, self.drafted)

    @property
    def tps(self) -> float:
        return self.tokens_per_cycle / self.cycle_s

    def as_dict(self, plain_tps: float) -> dict:
        return {
            "method": self.method,
            "draft_model": self.draft_model,
            "draft_tokens": self.drafted,
            "acceptance": self.acceptance,
            "tokens_per_cycle": self.tokens_per_cycle,
            "cycle_s": self.cycle_s,
            "draft_step_s": self.draft_step_s,
            "verify_s": self.verify_s,
            "speedup": self.tps / plain_tps if plain_tps else 0.0,
            "draft_memory_gb": self.draft_memory_bytes / GB,
        }


def _verify_seconds(system: System, context: int, drafted: int) -> float:
    features = step_features(system, kv_read_elements(system.arch, context), 1, context, tokens_per_sequence=drafted + 1)
    return step_time_from(features, system.params.params, system.host_params.params).total_s


def _mtp_step_seconds(system: System) -> float:
    """One MTP draft token: its block and the shared head at the streaming rate, one layer of
    fixed overhead."""
    p = system.params.params
    profile = system.profile
    if not profile.mtp:
        raise EngineInputError(f"{system.model.name} has no multi-token-prediction head", field="mtp")
    bytes_read = profile.mtp_read_per_token(distinct_expert_fraction(system.arch, 1))
    peak = bandwidth_bytes_s(system.device, system.backend) * parallel_cards(system)
    return bytes_read / realised_bandwidth(peak, p, soc_memory(system.device)) + p.t_layer_s + p.t_token_s


def plan(system: System, draft: System | None, context: int) -> SpeculativePlan:
    """The speculative cycle at ``context`` cached tokens."""
    o = system.options
    method = "mtp" if o.mtp else "draft"
    acceptance = o.acceptance if o.acceptance is not None else ACCEPTANCE[method][o.workload]
    drafted = o.draft_tokens
    if method == "mtp":
        draft_step = _mtp_step_seconds(system)
        draft_name = f"{system.model.name} MTP head"
        draft_memory = system.profile.mtp
    else:
        from .decode import step_at

        draft_step = step_at(draft, context, 1).total_s
        draft_name = draft.model.name
        draft_memory = draft.weight_bytes + draft.kv_bytes
    return SpeculativePlan(
        method=method,
        drafted=drafted,
        acceptance=acceptance,
        draft_step_s=draft_step,
        verify_s=_verify_seconds(system, context, drafted),
        draft_model=draft_name,
        draft_memory_bytes=draft_memory,
    )


def check_draft(system: System, draft: System) -> None:
    """A draft must share the target's tokenizer and be smaller than it."""
    target_model, draft_model = system.model, draft.model
    if target_model.catalog is None or draft_model.catalog is None:
        return
    if target_model.catalog.tokenizer != draft_model.catalog.tokenizer:
        raise EngineInputError(
            f"{draft_model.name} cannot draft for {target_model.name}: different tokenizers "
            f"({draft_model.catalog.tokenizer} vs {target_model.catalog.tokenizer})",
            field="draft",
        )
    if draft_model.active_params_b >= target_model.active_params_b:
        raise EngineInputError(f"the draft {draft_model.name} is not smaller than {target_model.name}", field="draft")


def burst_sizes(acceptance: float, drafted: int, total: int, seed: int = SCHEDULE_SEED) -> list[int]:
    """Tokens emitted by each cycle until ``total`` tokens: 1 + accepted drafts, drawn with the
    acceptance probability from a fixed seed (the same request always bursts the same way)."""
    rng = random.Random(seed)
    sizes = []
    emitted = 0
    while emitted < total:
        accepted = 0
        while accepted < drafted and rng.random() < acceptance:
            accepted += 1
        size = min(accepted + 1, total - emitted)
        sizes.append(size)
        emitted += size
    return sizes
