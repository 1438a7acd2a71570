"""Profiling traces written the way ONNX Runtime writes them (a `[` line, one event per line,
a `]` line), with numbers chosen by the test; also used by the parsing benchmark."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

THREAD_STATS = ('{"main_thread": {"thread_pool_name": "session-1-intra-op", "thread_id": "1401", '
                '"block_size": [1], "core": 1, "Distribution": 1, "DistributionEnqueue": 0, "Run": 61, '
                '"Wait": 0, "WaitRevoke": 0}, "sub_threads": {"1402": {"num_run": 0, "core": -1}}}')


@dataclass
class Node:
    name: str
    op_type: str
    durations: list[int]                 # µs, one per run (cycled when shorter)
    provider: str = "CPUExecutionProvider"
    tid: int = 100
    inputs: list = field(default_factory=lambda: [{"float": [1, 8]}])
    outputs: list = field(default_factory=lambda: [{"float": [1, 8]}])


def _session(name: str, ts: int, dur: int) -> str:
    return (f'{{"cat" : "Session","pid" :7,"tid" :100,"dur" :{dur},"ts" :{ts},"ph" : "X","name" :"{name}",'
            f'"args" : {{}}}}')


def _node_template(node: Node, index: int) -> str:
    """The node's event line with {ts} and {dur} left open."""
    # ORT keeps args in a hash map: the key order differs between nodes, so it does here too.
    args = [f'"op_name" : "{node.op_type}"', f'"provider" : "{node.provider}"',
            f'"input_type_shape" : {json.dumps(node.inputs)}', f'"output_type_shape" : {json.dumps(node.outputs)}',
            f'"node_index" : "{index}"', '"activation_size" : "32"', '"output_size" : "32"',
            '"parameter_size" : "0"', f'"thread_scheduling_stats" : {THREAD_STATS}']
    args = args[index % len(args):] + args[: index % len(args)]
    name = json.dumps(node.name + "_kernel_time")
    line = (f'{{"cat" : "Node","pid" :7,"tid" :{node.tid},"dur" :@DUR@,"ts" :@TS@,"ph" : "X",'
            f'"name" :{name},"args" : {{{",".join(args)}}}}}')
    return line.replace("{", "{{").replace("}", "}}").replace("@DUR@", "{dur}").replace("@TS@", "{ts}")


def iter_trace_lines(nodes: list[Node], runs: int, loading_us: int = 300, init_us: int = 5000,
                     gap_us: int = 2):
    """Events of `runs` sequential runs of `nodes`; each model_run spans its nodes exactly."""
    yield _session("model_loading_uri", 10, loading_us)
    yield _session("session_initialization", 400, init_us)
    ts = 400 + init_us + 100
    templates = [_node_template(node, index) for index, node in enumerate(nodes)]
    for run in range(runs):
        start = ts
        for node, template in zip(nodes, templates):
            dur = node.durations[run % len(node.durations)]
            yield template.format(ts=ts, dur=dur)
            ts += dur + gap_us
        yield _session("SequentialExecutor::Execute", start, ts - start)
        yield _session("model_run", start, ts - start)
        ts += 50


def write_trace(path: Path, nodes: list[Node], runs: int, **kwargs) -> Path:
    path = Path(path)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("[\n")
        first = True
        for line in iter_trace_lines(nodes, runs, **kwargs):
            handle.write(line if first else ",\n" + line)
            first = False
        handle.write("\n]\n")
    return path


def handmade_nodes() -> list[Node]:
    """Four nodes for three runs: the first run is a slow warm-up, one node runs on CUDA.
    The tests spell out the expected sums by hand."""
    return [
        Node("conv1", "Conv", [500, 100, 100], inputs=[{"float": [1, 3, 32, 32]}, {"float": [8, 3, 3, 3]}],
             outputs=[{"float": [1, 8, 32, 32]}]),
        Node("relu1", "Relu", [30, 10, 10]),
        Node("conv2", "Conv", [300, 50, 70]),
        Node("fc", "Gemm", [20, 20, 20], provider="CUDAExecutionProvider"),
    ]
