"""A sweep over a decoder's step (a past length, a prompt length, a batch): what one run of
each cell generates, so the sweep counts tokens, not runs scaled by a length. A decode step
at past 2,047 makes one token per sequence, as one at past 127 does: its tokens per second
are runs per second × batch × new tokens, whatever the past (app.core.session.decoder)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path


def decoder_steps(path: str, dim: str | None, values: list, spec) -> list[tuple[int, int]] | None:
    """Per swept value, (batch, new tokens) of the decoder's step the cell runs, or None for
    a model without a KV cache (or one whose graph cannot be read here)."""
    from app.core.jobs.errors import UserError
    from app.core.model.intake import sniff
    from app.core.model.ort_graph import ort_to_onnx
    from app.core.model.proto_scan import ScanError, load_structure
    from app.core.model.value_type import describe_value
    from app.core.session.decoder import choose_step, find_decoder
    from app.core.session.graph_hints import read_hints

    try:
        model = ort_to_onnx(Path(path)) if sniff(Path(path)) == "ort" else load_structure(Path(path))
    except (ScanError, OSError, ValueError, UserError):
        return None
    weights = {tensor.name for tensor in model.graph.initializer}
    inputs = [describe_value(value) for value in model.graph.input if value.name not in weights]
    decoder = find_decoder(inputs, read_hints(path))
    if decoder is None:
        return None
    steps = []
    for value in values:
        step = choose_step(decoder, inputs, replace(spec, dims={**spec.dims, dim: value}) if dim else spec)
        steps.append((step.batch, step.new))
    return steps
