"""The session flags shared by bench, compare, profile, iobinding, tune and diagnose.

`--config FILE` loads a preset first; every flag given on top of it wins."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.jobs.params import LARGEST
from app.core.session.config import OPT_LEVELS
from app.core.session.input_spec import IMAGE_LAYOUTS, IMAGE_PRESETS, MAX_ELEMENTS, MAX_VOCAB


def _key_value(text: str, flag: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise UserError("bad-option", f"{flag} expects KEY=VALUE, not {text!r}")
    return key.strip(), value.strip()


def whole_number(text: str, flag: str, minimum: int = 0, maximum: int = LARGEST, why: str = "") -> int:
    """A flag's whole-number value, or a UserError naming the flag (and `why` a value
    past `maximum` is refused)."""
    try:
        value = int(text)
    except ValueError:
        raise UserError("bad-option", f"{flag} expects a whole number, not {text!r}") from None
    if value < minimum:
        raise UserError("bad-option", f"{flag} must be at least {minimum}, not {value}")
    if value > maximum:
        raise UserError("bad-option", f"{flag} must be at most {maximum:,}, not {value:,}" + (f": {why}" if why else ""))
    return value


def _threads(text: str, flag: str) -> int:
    from app.core.session.config import THREADS_PER_CORE_LIMIT, thread_limit

    return whole_number(text, flag, maximum=thread_limit(),
                        why=f"that is {THREADS_PER_CORE_LIMIT} threads for each core of this machine, and ONNX "
                            "Runtime would start every one")


OPT_LEVEL_NAMES = list(OPT_LEVELS)      # the session's table (app.core.session.config imports nothing heavy)


def add_session_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("session")
    group.add_argument("--provider", action="append", metavar="P",
                       help="execution provider, repeatable in priority order: cpu, cuda, tensorrt, dml, openvino")
    group.add_argument("--provider-option", action="append", default=[], metavar="KEY=VALUE",
                       help="an option of the last --provider (e.g. device_id=0)")
    group.add_argument("--config", metavar="FILE.json", help="a saved session preset to start from")
    group.add_argument("--opt-level", choices=OPT_LEVEL_NAMES, help="graph optimisation level")
    group.add_argument("--execution-mode", choices=["sequential", "parallel"])
    group.add_argument("--threads", metavar="N", help="intra-op threads (0: ORT's default)")
    group.add_argument("--inter-threads", metavar="N", help="inter-op threads (parallel mode)")
    group.add_argument("--session-config", action="append", default=[], metavar="KEY=VALUE",
                       help="a session config entry, e.g. session.intra_op.allow_spinning=0")
    group.add_argument("--free-dim", action="append", default=[], metavar="NAME=VALUE",
                       help="fix a symbolic dimension inside ORT (free dimension override)")
    add_memory_argument(parser)
    inputs = parser.add_argument_group("inputs")
    inputs.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                        help="value of a named symbolic dimension in the generated inputs")
    inputs.add_argument("--shape", action="append", default=[], metavar="INPUT=D1,D2,...",
                        help="one input's whole shape")
    inputs.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="use this array for an input (an .npz may hold several: --input FILE.npz)")
    inputs.add_argument("--value", action="append", default=[], metavar="NAME=V",
                        help="one value for every element of an input (a sample rate, a step count, a flag)")
    inputs.add_argument("--zeros", action="store_true", help="feed zeros instead of seeded random values")
    inputs.add_argument("--seed", metavar="N", help="seed of the random inputs (default 0)")
    inputs.add_argument("--vocab-size", metavar="N", help="integer inputs are drawn below this (default 1000)")
    inputs.add_argument("--data", metavar="FOLDER",
                        help="your own samples: .npz files (one array per input, by name), .npy files (one-input "
                             "models) or images; optional labels.csv (sample,label) and expected/<sample>.npy|npz "
                             "(the outputs it should give). Single runs take the first sample; compare measures "
                             "accuracy over all of them; int8-static calibrates on them")
    inputs.add_argument("--image-preset", choices=IMAGE_PRESETS,
                        help="how --data images are normalised: imagenet (0–1, ImageNet mean/std; the default), "
                             "unit (0–1), raw (0–255); they are resized to the input's size")
    inputs.add_argument("--image-layout", choices=IMAGE_LAYOUTS[1:],
                        help="where images' channels go (default: read from the input's shape)")


def add_memory_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", metavar="NAME",
                        help="run on this remote target (see `ortune targets`); default: this machine")
    parser.add_argument("--memory-limit", metavar="SIZE",
                        help="the job's memory budget, e.g. 4G, 512M or 50%% of the memory available "
                             "(default: the settings', 75%%); past it the job stops and says so")


def add_run_arguments(parser: argparse.ArgumentParser, iterations: int = 200) -> None:
    group = parser.add_argument_group("measurement")
    group.add_argument("--warmup", metavar="N", default="10", help="runs before measuring (default 10)")
    group.add_argument("--iterations", metavar="N", help=f"measured runs (default {iterations})")
    group.add_argument("--duration", metavar="SECONDS", help="measure for this long instead of a count")
    group.add_argument("--io-binding", action="store_true", help="bind inputs and outputs (IO binding)")
    group.add_argument("--concurrency", metavar="K", default="1", help="K threads sharing the session")


def run_settings_from_args(args, iterations: int = 200) -> dict:
    """The measurement flags as run settings, checked once, by RunSettings itself."""
    from app.core.bench.bench import RunSettings

    given = {"warmup": args.warmup, "iterations": args.iterations or iterations, "concurrency": args.concurrency}
    if args.duration:
        given["duration_s"] = args.duration
    return RunSettings.from_dict(given, text=True).to_dict()


def session_config_from_args(args):
    from app.core.session.config import ProviderSpec, SessionConfig

    config = SessionConfig.load(args.config) if args.config else SessionConfig()
    if args.provider:
        providers = []
        for name in args.provider:
            from app.core.session.providers import provider_name
            providers.append(ProviderSpec(provider_name(name)))
        config.providers = providers
    for text in args.provider_option:
        key, value = _key_value(text, "--provider-option")
        config.providers[-1].options[key] = value
    if args.opt_level:
        config.graph_optimization_level = args.opt_level
    if args.execution_mode:
        config.execution_mode = args.execution_mode
    if args.threads is not None:
        config.intra_op_num_threads = _threads(args.threads, "--threads")
    if args.inter_threads is not None:
        config.inter_op_num_threads = _threads(args.inter_threads, "--inter-threads")
    for text in args.session_config:
        key, value = _key_value(text, "--session-config")
        config.config_entries[key] = value
    for text in args.free_dim:
        key, value = _key_value(text, "--free-dim")
        config.free_dimension_overrides[key] = whole_number(value, "--free-dim", 1)
    if getattr(args, "memory_limit", None):
        from app.core.jobs.memory import parse_memory_limit
        parse_memory_limit(args.memory_limit)
        config.memory_limit = args.memory_limit
    if getattr(args, "io_binding", False):
        config.io_binding = True
    feeds = config.inputs
    for text in args.dim:
        key, value = _key_value(text, "--dim")
        feeds.dims[key] = whole_number(value, "--dim", maximum=MAX_ELEMENTS)
    for text in args.shape:
        key, value = _key_value(text, "--shape")
        feeds.shapes[key] = [whole_number(d, "--shape", maximum=MAX_ELEMENTS) for d in value.split(",") if d.strip()]
    for text in args.input:
        key, sep, value = text.partition("=")
        feeds.files[key if sep else "*"] = value if sep else key
        feeds.mode = "files"
    for text in args.value:
        key, value = _key_value(text, "--value")
        try:
            feeds.values[key] = float(value)
        except ValueError:
            raise UserError("bad-option", f"--value expects NAME=NUMBER, not {text!r}") from None
    if args.zeros:
        feeds.mode = "zeros"
    if args.seed is not None:
        feeds.seed = whole_number(args.seed, "--seed")
    if args.vocab_size is not None:
        feeds.vocab_size = whole_number(args.vocab_size, "--vocab-size", 1, MAX_VOCAB)
    if args.data:
        feeds.data = str(Path(args.data).expanduser().absolute())
    if args.image_preset:
        feeds.image_preset = args.image_preset
    if args.image_layout:
        feeds.image_layout = args.image_layout
    config.validate()
    _check_input_files(feeds.files)
    return config


def _check_input_files(files: dict[str, str]) -> None:
    """Input files are read in the job's process; a missing one is found before it starts."""
    from pathlib import Path

    for file in files.values():
        path = Path(file)
        if not path.is_file():
            what = "not found" if not path.exists() else "not a regular file"
            raise UserError("not-found", f"{path}: input file {what}")
