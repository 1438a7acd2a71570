"""Every session setting described once: its label, help, default, range or choices, the
Session tab's widget and box, and the command-line flag that sets it.

SessionConfig and FeedSpec take their fields from this table (`described`), so the check
of a preset, of a flag and of the form is one check with one message; the Session tab makes
its widgets and tooltips from it and the command line its flags (app.cli.session_args).

Imports nothing heavy: the command line builds its parser from it at every start."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from app.core.jobs.memory import DEFAULT_LIMIT, parse_memory_limit
from app.core.jobs.params import setting

#: the graph optimisation levels: the name a preset, the form and --opt-level use -> (ORT's enum, in words)
OPT_LEVEL_TABLE = {"disable": ("ORT_DISABLE_ALL", "no graph optimisation"),
                   "basic": ("ORT_ENABLE_BASIC", "basic optimisation"),
                   "extended": ("ORT_ENABLE_EXTENDED", "extended optimisation"),
                   "all": ("ORT_ENABLE_ALL", "all optimisations")}
OPT_LEVELS = {name: enum for name, (enum, _) in OPT_LEVEL_TABLE.items()}
LEVEL_WORDS = {name: words for name, (_, words) in OPT_LEVEL_TABLE.items()}
EXECUTION_MODES = {"sequential": "ORT_SEQUENTIAL", "parallel": "ORT_PARALLEL"}
#: device policies: the name a preset, the form and --device-policy use -> ORT's OrtExecutionProviderDevicePolicy
DEVICE_POLICIES = {"prefer-cpu": "PREFER_CPU", "prefer-gpu": "PREFER_GPU", "prefer-npu": "PREFER_NPU",
                   "max-performance": "MAX_PERFORMANCE", "max-efficiency": "MAX_EFFICIENCY",
                   "min-power": "MIN_OVERALL_POWER"}
LOG_LEVELS = {"verbose": 0, "info": 1, "warning": 2, "error": 3, "fatal": 4}
FEED_MODES = ("random", "zeros", "files")
DEFAULT_VOCAB = 1000
IMAGE_PRESETS = ("imagenet", "unit", "raw")         # see app.core.session.data_folder.PRESETS
IMAGE_LAYOUTS = ("auto", "NCHW", "NHWC")
#: the most elements an input may have: past it, the size is a typo, not a model's input
MAX_ELEMENTS = 2 ** 40
#: the longest context a decoder's step may ask for
MAX_CONTEXT = 1 << 24
#: integer ids are drawn below the vocabulary size as int64
MAX_VOCAB = 2 ** 62
#: thread counts past this many per core are a typo: ORT would start them all and stall the machine
THREADS_PER_CORE_LIMIT = 64
SPIN = (("default", None), ("on", True), ("off", False))
#: the largest value a spin box shows
BIG = 2 ** 31 - 1


def thread_limit() -> int:
    return THREADS_PER_CORE_LIMIT * (os.cpu_count() or 1)


def _memory_limit(value: str, label: str) -> None:
    if value.strip():
        parse_memory_limit(value.strip(), label)


@dataclass(frozen=True)
class SessionField:
    name: str                   # a SessionConfig field, or "inputs.<FeedSpec field>"
    group: str                  # the Session tab's box: providers | graph | threads | advanced | inputs
    widget: str                 # choice | number | check | text | pairs | providers | table (the Inputs table's)
    label: str
    help: str                   # the tooltip and the flag's help
    flag: str = ""              # the command-line flag
    default: Any = None
    factory: Any = None         # makes the default of a list or object
    choices: tuple = ()         # ((word, value), ...): the form shows and the flag takes the word
    minimum: int | None = None  # of the value, or of each number in it
    maximum: int | None = None
    why: str = ""               # said when a value is past the maximum
    check: Any = None           # check(value, label) of the field's own
    special: str = ""           # number: what the form shows at its lowest value
    unset_at: int | None = None  # number: the form's value for "unset" (None: ORT's default)
    placeholder: str = ""       # text and pairs
    metavar: str = ""           # the flag's value, as its help shows it
    const: str = ""             # the flag takes no value and sets this one
    whole: bool = False         # pairs: the values are whole numbers
    split: str = ""             # a flag's KEY=VALUE: the value is a list split on this
    bare_key: str = ""          # a flag's value without KEY= takes this key
    sets: tuple = ()            # ((name, value), ...) a flag sets too
    path: bool = False          # the text names a file or folder

    @property
    def words(self) -> tuple:
        return tuple(word for word, _ in self.choices)

    @property
    def values(self) -> tuple:
        return tuple(value for _, value in self.choices)

    @property
    def dest(self) -> str:
        """The flag's attribute on the parsed arguments."""
        return self.flag.lstrip("-").replace("-", "_")


def _same(values) -> tuple:
    return tuple((value, value) for value in values)


def _spin_fields(pool: str, name: str) -> list[SessionField]:
    return [
        SessionField(f"{pool}_op_allow_spinning", "threads", "choice", f"{name} spinning",
                     "Idle threads can keep polling for work (spinning) instead of sleeping: lower latency between "
                     "nodes, more CPU burnt. Turning it off helps when other work shares the machine. Default: "
                     "ONNX Runtime's (spin).", f"--{pool}-spinning", choices=SPIN),
        SessionField(f"{pool}_op_spin_duration_us", "threads", "number", f"{name} spin time (µs)",
                     "How long an idle thread spins before it sleeps, in µs (unset: ONNX Runtime's default).",
                     f"--{pool}-spin-us", minimum=0, maximum=10_000_000, special="ORT default", unset_at=-1,
                     metavar="µS"),
        SessionField(f"{pool}_op_spin_backoff_max", "threads", "number", f"{name} spin back-off",
                     "Spin more gently: each spin step doubles its pause up to this power of two, for less power "
                     "use over the same spin time (unset: ONNX Runtime's default).", f"--{pool}-spin-backoff",
                     minimum=1, maximum=1024, special="ORT default", unset_at=0, metavar="N"),
    ]


_THREADS_WHY = (f"that is {THREADS_PER_CORE_LIMIT} threads for each core of this machine, and ONNX Runtime would "
                "start every one")

SESSION_FIELDS: tuple[SessionField, ...] = (
    SessionField("providers", "providers", "providers", "Execution providers",
                 "The execution providers in priority order: each node runs on the first that can run it. On the "
                 "command line, repeat --provider (cpu, cuda, tensorrt, dml, openvino), each followed by its "
                 "--provider-option KEY=VALUE.", "--provider", factory=lambda: ["CPUExecutionProvider"],
                 metavar="P"),
    SessionField("device_policy", "providers", "choice", "Device policy",
                 "Let ONNX Runtime pick the devices and providers by a policy (prefer the CPU, a GPU or an NPU, the "
                 "most performance, the most efficiency or the least power) instead of the list above; the result "
                 "names the devices it picked. None: the providers listed.", "--device-policy", "none",
                 choices=_same(("none", *DEVICE_POLICIES))),
    SessionField("ep_libraries", "providers", "pairs", "Provider libraries",
                 "Execution provider plugin libraries to load, one NAME=PATH a line (on the command line, a flag "
                 "each). Installed onnxruntime-ep-* packages are found without this.", "--ep-library",
                 factory=dict, placeholder="my_ep=/path/to/libmy_ep.so", metavar="NAME=PATH"),
    SessionField("graph_optimization_level", "graph", "choice", "Optimisation level",
                 "How much ONNX Runtime rewrites the graph before running it. Basic folds constants and drops "
                 "redundant nodes; extended adds fusions specific to ONNX Runtime's kernels; all also changes memory "
                 "layouts for the CPU. More optimisation usually means faster runs and a slower start.",
                 "--opt-level", "all", choices=_same(OPT_LEVELS)),
    SessionField("execution_mode", "graph", "choice", "Execution mode",
                 "Sequential runs one node at a time (each node may still use many threads). Parallel also runs "
                 "independent branches at the same time; it helps only graphs with wide, independent branches.",
                 "--execution-mode", "sequential", choices=_same(EXECUTION_MODES)),
    SessionField("enable_mem_pattern", "graph", "check", "Memory pattern",
                 "Plan the memory of all intermediate tensors once, from the first run, and reuse the plan. "
                 "Helps when input shapes stay the same.", "--mem-pattern", True),
    SessionField("enable_cpu_mem_arena", "graph", "check", "CPU memory arena",
                 "Keep freed CPU memory in a pool for the next allocation instead of returning it to the system: "
                 "faster, but the process keeps the memory it once needed.", "--cpu-mem-arena", True),
    SessionField("use_deterministic_compute", "graph", "check", "Deterministic compute",
                 "Prefer kernels that give bit-identical results run after run (some are slower).",
                 "--deterministic", False),
    SessionField("io_binding", "graph", "check", "IO binding (inputs and outputs on the device)",
                 "Bind inputs and outputs to buffers on the provider's device so runs skip the copies and "
                 "allocations of plain run() calls.", "--io-binding", False),
    SessionField("memory_limit", "graph", "text", "Memory limit",
                 "The most memory each job's process may hold: a size (4G, 512M) or a share of the memory free when "
                 "it starts (50%). Past it the job stops and names the inputs that needed so much, before the "
                 f"system's out-of-memory killer ends something else. Empty: the settings' limit ({DEFAULT_LIMIT}).",
                 "--memory-limit", "", check=_memory_limit, placeholder=f"{DEFAULT_LIMIT} (the settings')",
                 metavar="SIZE"),
    SessionField("log_severity_level", "graph", "choice", "Log severity",
                 "How much ONNX Runtime writes to its log; verbose shows every node's provider.", "--log-severity",
                 3, choices=tuple(LOG_LEVELS.items())),
    SessionField("intra_op_num_threads", "threads", "number", "Intra-op threads",
                 "Threads that split the work inside one node (a big MatMul or Conv). 0 lets ONNX Runtime use one "
                 "per physical core.", "--threads", 0, minimum=0, maximum=thread_limit(), why=_THREADS_WHY,
                 special="ORT default", metavar="N"),
    SessionField("inter_op_num_threads", "threads", "number", "Inter-op threads",
                 "Threads that run independent nodes at once; used only in parallel execution mode (0: ONNX "
                 "Runtime's default).", "--inter-threads", 0, minimum=0, maximum=thread_limit(), why=_THREADS_WHY,
                 special="ORT default", metavar="N"),
    SessionField("intra_op_thread_affinities", "threads", "text", "Intra-op affinities",
                 "Pin the intra-op threads to cores: one group per thread except the first, separated by ';' "
                 "(e.g. '1;2' or '3,4;5,6'). Usually best left empty; useful to keep sessions off each other's cores.",
                 "--affinities", "", placeholder="e.g. 1;2", metavar="GROUPS"),
    *_spin_fields("intra", "Intra-op"),
    *_spin_fields("inter", "Inter-op"),
    SessionField("dynamic_block_base", "threads", "number", "Dynamic block base",
                 "Hand out work in shrinking pieces so threads finish together; lowers latency variance on busy "
                 "machines (4 is a good start). 0 keeps the fixed split.", "--dynamic-block-base", 0, minimum=0,
                 maximum=64, special="off", metavar="N"),
    SessionField("free_dimension_overrides", "advanced", "pairs", "Free dimension overrides",
                 "Fix a symbolic dimension to a number inside ONNX Runtime, so it can plan and optimise for that "
                 "exact shape. One NAME=VALUE a line (on the command line, a flag each).", "--free-dim",
                 factory=dict, minimum=1, placeholder="batch=1", metavar="NAME=VALUE", whole=True),
    SessionField("config_entries", "advanced", "pairs", "Session config entries",
                 "Any other session setting ONNX Runtime knows, as KEY=VALUE lines (e.g. "
                 "session.disable_prepacking=1; on the command line, a flag each).", "--session-config",
                 factory=dict, placeholder="session.disable_prepacking=1", metavar="KEY=VALUE"),
    SessionField("inputs.mode", "inputs", "choice", "Values",
                 "What every input holds: seeded random values of the right type (integer inputs below the "
                 "vocabulary size, masks all ones), zeros (--zeros), or your own files (--input).", "--zeros",
                 "random", choices=_same(FEED_MODES), const="zeros"),
    SessionField("inputs.seed", "inputs", "number", "Seed",
                 "The seed of the random inputs: the same seed gives the same inputs.", "--seed", 0, minimum=0,
                 metavar="N"),
    SessionField("inputs.dims", "inputs", "table", "Dimensions",
                 "The value of a named symbolic dimension in the generated inputs.", "--dim", factory=dict,
                 minimum=0, maximum=MAX_ELEMENTS, metavar="NAME=VALUE"),
    SessionField("inputs.shapes", "inputs", "table", "Shapes", "One input's whole shape.", "--shape",
                 factory=dict, minimum=0, maximum=MAX_ELEMENTS, metavar="INPUT=D1,D2,...", split=","),
    SessionField("inputs.files", "inputs", "table", "Files",
                 "Use this array for an input (an .npz may hold several: --input FILE.npz).", "--input",
                 factory=dict, metavar="NAME=FILE.npy", bare_key="*", sets=(("inputs.mode", "files"),)),
    SessionField("inputs.values", "inputs", "table", "Values",
                 "One value for every element of an input (a sample rate, a step count, a flag).", "--value",
                 factory=dict, metavar="NAME=V"),
    SessionField("inputs.probed", "inputs", "table", "Probed sizes",
                 "Sizes Find working inputs ran the model with, by dimension (found, not set).", factory=dict,
                 minimum=0, maximum=MAX_ELEMENTS),
    SessionField("inputs.vocab_size", "inputs", "number", "Vocabulary size",
                 "Integer inputs (token ids) are drawn below this number.", "--vocab-size", DEFAULT_VOCAB, minimum=1,
                 maximum=MAX_VOCAB, metavar="N"),
    SessionField("inputs.data", "inputs", "text", "Data folder",
                 "Your own samples: .npz files (one array per input, by name), .npy files (one-input models) or "
                 "images (resized to the input's size). Beside them, optionally, labels.csv (sample,label) and "
                 "expected/<sample>.npy or .npz (the outputs it should give). A single run takes the first sample; "
                 "Compare scores every model on all of them; int8-static calibrates on them.", "--data", "",
                 placeholder="a folder of .npz/.npy files or images", metavar="FOLDER", path=True),
    SessionField("inputs.sample", "inputs", "number", "Sample",
                 "The sample of the data folder a single run is fed (0: the first, in name order).", "--sample", 0,
                 minimum=0, metavar="N"),
    SessionField("inputs.image_preset", "inputs", "choice", "Image preset",
                 "How the data folder's images are normalised: imagenet (0–1, ImageNet mean and std), unit (0–1), "
                 "raw (0–255).", "--image-preset", "imagenet", choices=_same(IMAGE_PRESETS)),
    SessionField("inputs.image_layout", "inputs", "choice", "Image layout",
                 "Where the images' colour channels go; auto reads it from the input's shape.", "--image-layout",
                 "auto", choices=_same(IMAGE_LAYOUTS)),
    SessionField("inputs.phase", "inputs", "choice", "Decoder step",
                 "What one run of a decoder with a KV cache is: decode (one new token after the past tokens "
                 "of cache, as every token after the first) or prefill (the prompt, with no cache yet: the time "
                 "to the first token). Other models ignore it.", "--phase", "decode",
                 choices=_same(("decode", "prefill"))),
    SessionField("inputs.past_length", "inputs", "number", "Past tokens",
                 "Decode: the tokens already in a decoder's KV cache; the attention mask covers them and the "
                 "new token, the positions go on from them.", "--past-length", 127, minimum=0,
                 maximum=MAX_CONTEXT, metavar="N"),
    SessionField("inputs.prompt_length", "inputs", "number", "Prompt tokens",
                 "Prefill: the prompt's length in tokens.", "--prompt-length", 128, minimum=1,
                 maximum=MAX_CONTEXT, metavar="N"),
)
FIELD = {row.name: row for row in SESSION_FIELDS}


def described(name: str, factory: Any = None) -> Any:
    """The dataclass field of the setting `name`, as its table row says (`factory` makes the
    default where the row's is the plain form of it, as provider names are of ProviderSpecs)."""
    row = FIELD[name]
    limits = {"minimum": row.minimum, "maximum": row.maximum, "why": row.why, "check": row.check,
              "choices": row.values, "flag": row.flag, "about": row}
    if factory or row.factory:
        return setting(factory=factory or row.factory, **limits)
    return setting(row.default, **limits)
