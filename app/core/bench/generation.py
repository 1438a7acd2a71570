"""Two decoders compared as they generate: the time to the first token (a prefill run: the
prompt, no cache yet) and tokens per second (a decode step: one new token after the past
tokens of cache), each measured in alternation (app.core.measure.alternate) and judged by the
one verdict rule. A comparison or a gate times its models on the input plan's phase; where
the reference has a KV cache, the other phase is timed in an alternation of its own, and
both are reported here side by side."""

from __future__ import annotations

from dataclasses import replace

from app.core.session.config import SessionConfig
from app.core.session.decoder import PHASES, model_has_cache

#: what each phase's figures mean, in the report
PHASE_MEANS = {"prefill": "time to the first token: one run on the prompt with an empty cache",
               "decode": "one new token after the past tokens of cache: per-token latency, tokens/s"}


def generation_phases(path: str, config: SessionConfig) -> tuple[str, str] | None:
    """(the phase the plan times, the other one) for a decoder with a KV cache; None else."""
    if not model_has_cache(path):
        return None
    timed = config.inputs.phase
    return timed, next(phase for phase in PHASES if phase != timed)


def in_phase(config: SessionConfig, phase: str) -> SessionConfig:
    """The session with its decoder step set to `phase` (the user's data and files left out:
    they hold one phase's inputs)."""
    copy = SessionConfig.from_dict(config.to_dict())
    copy.inputs = replace(copy.inputs, phase=phase, data="", files={}, shapes={})
    return copy


def _batch(inputs: list[dict]) -> int:
    ids = next((row for row in inputs if "input_ids" in row["name"] or row["name"] in ("ids", "tokens")), None)
    shape = (ids or {}).get("shape") or [1]
    return int(shape[0]) if shape else 1


def _tokens(inputs: list[dict]) -> int:
    ids = next((row for row in inputs if "input_ids" in row["name"] or row["name"] in ("ids", "tokens")), None)
    shape = (ids or {}).get("shape") or [1, 1]
    return int(shape[-1]) if shape else 1


def _phase_row(phase: str, row: dict, inputs: list[dict]) -> dict:
    """One model's figures of one phase, from its comparison row."""
    p50 = row["latency_ms"]["p50"]
    batch, tokens = _batch(inputs), _tokens(inputs)
    judged = {"speedup": row["speedup"], "speedup_ci": row["speedup_ci"], "verdict": row["verdict"],
              "why": row.get("why"), "rounds": row.get("rounds")}
    if phase == "prefill":
        return {"ttft_ms": p50, "prompt_tokens": tokens, "batch": batch, **judged}
    return {"per_token_ms": p50, "tokens_per_s": batch * 1000.0 / p50 if p50 else None, "batch": batch, **judged}


def generation_report(phases: dict[str, list[dict]], inputs: dict[str, list[dict]]) -> dict:
    """`phases`: phase -> the comparison rows of its alternation (the reference first);
    `inputs`: phase -> the reference's input rows. Per model, its TTFT and tokens/s with each
    one's speedup over the reference, interval and verdict."""
    labels = [row["label"] for row in next(iter(phases.values()))]
    models = []
    for index, label in enumerate(labels):
        entry = {"label": label}
        for phase, rows in phases.items():
            entry[phase] = _phase_row(phase, rows[index], inputs[phase])
        models.append(entry)
    return {"models": models, "phases": {phase: PHASE_MEANS[phase] for phase in phases},
            "inputs": {phase: rows for phase, rows in inputs.items()},
            "how": "each phase is timed in an alternation of its own, one block at a time, the models taking turns; "
                   "a speedup is the reference's median over the model's, judged by the one verdict rule"}


#: the generation table's columns, as the Compare tab shows them and the command line prints them
GENERATION_HEADERS = ["Model", "TTFT ms", "TTFT speedup", "TTFT 95 % interval", "TTFT verdict", "Tokens/s",
                      "ms a token", "Tokens/s speedup", "Tokens/s 95 % interval", "Tokens/s verdict"]


def generation_table(report: dict) -> tuple[list[str], list[list]]:
    """One row per model: its TTFT and tokens/s, each with its speedup over the reference,
    interval and verdict (figures as numbers)."""
    from app.core.formatting import interval_text
    from app.core.verdict import verdict_words

    def judged(phase: dict) -> list:
        return [phase.get("speedup"), interval_text(phase.get("speedup_ci")) or "",
                verdict_words(phase.get("verdict")) if phase else ""]

    rows = []
    for model in report["models"]:
        prefill, decode = model.get("prefill", {}), model.get("decode", {})
        rows.append([model["label"], prefill.get("ttft_ms"), *judged(prefill), decode.get("tokens_per_s"),
                     decode.get("per_token_ms"), *judged(decode)])
    return list(GENERATION_HEADERS), rows

