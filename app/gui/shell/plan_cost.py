"""A model's cost counted on the inputs it really runs on. A model is read (and its cost
counted) when it opens, on the inputs its own hints and the defaults give; once a job has run
it on an input plan with other shapes (the Session tab's sizes, a probe that found the
working ones), the cost is counted again on those, so Overview and Graph tell of the same
1×3×48×192 input that Session, Convert and Benchmark ran, not of a 1×3×224×224 guess."""

from __future__ import annotations


def planned_shapes(rows: list[dict]) -> dict[str, list[int]]:
    """Input name -> the concrete shape a plan's rows give (rows without one left out)."""
    return {row["name"]: [int(d) for d in row["shape"]] for row in rows or []
            if row.get("shape") is not None and all(isinstance(d, int) for d in row["shape"])}


def counted_on(summary: dict | None) -> dict[str, list[int]]:
    """The shapes a model's summary counted its cost on."""
    return planned_shapes(((summary or {}).get("cost") or {}).get("inputs") or [])


def recount(window, path: str, rows: list[dict]) -> None:
    """Count the model at `path` again when a job ran it on shapes (`rows`, its input plan)
    other than those its cost was counted on; the tabs hear of it as of the model read anew."""
    from app.core.graph.jobs import SUMMARY, CostParams
    from app.core.session.input_spec import FeedSpec

    model = window.model_list.find(path)
    planned = planned_shapes(rows)
    summary = model.summary if model is not None else None
    if summary is None or summary.get("format") != "onnx" or not planned:
        return
    counted = counted_on(summary)
    if all(counted.get(name) == shape for name, shape in planned.items()):
        return

    def done(result: dict) -> None:
        model.summary = result
        window.model_list.refresh(model)
        if window.current_model() is model:
            window.context.model_changed.emit(model)

    window.jobs.start(f"Count {model.label} on its input plan", SUMMARY,
                      CostParams(path=model.path, inputs=FeedSpec(mode="zeros", shapes=planned)), on_result=done)
