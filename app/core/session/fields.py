"""Every session setting described once: its label, help, type, default, range or choices,
the Session tab's widget and box, the command-line flag that sets it, what ONNX Runtime calls
it (a SessionOptions attribute or a session config key) and how it reads in words.

SessionConfig and FeedSpec are made from this table (`from_table`), so the check of a
preset, of a flag and of the form is one check with one message; the Session tab makes its
widgets and tooltips from it, the command line its flags (app.cli.session_args), and
app.core.session.create the SessionOptions and the plain-onnxruntime snippet, and
app.core.session.settings_text a preset's words, each by a loop over it.

Imports nothing heavy: the command line builds its parser from it at every start."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from app.core.jobs.memory import DEFAULT_LIMIT, parse_memory_limit
from app.core.jobs.params import setting

#: the graph optimisation levels: the name a preset, the form and --opt-level use -> (ORT's enum member, in words)
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


PROVIDER_WORDS = {"CPUExecutionProvider": "CPU", "CUDAExecutionProvider": "CUDA",
                  "TensorrtExecutionProvider": "TensorRT", "DmlExecutionProvider": "DirectML",
                  "OpenVINOExecutionProvider": "OpenVINO", "CoreMLExecutionProvider": "Core ML",
                  "ROCMExecutionProvider": "ROCm", "XnnpackExecutionProvider": "XNNPACK"}


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
    kind: Any = None            # the field's type (None: the default's)
    # what ONNX Runtime calls it: a SessionOptions attribute (for an object, the method each pair
    # goes to), or a session config key, set as text where the value is not the default
    option: str = ""
    entry: str = ""
    enum: str = ""              # option: the ONNX Runtime enum its values name
    members: tuple = ()         # ((value, the enum's member), ...)
    reads: Callable | None = None   # reads(config) -> [(words, is ORT's default), ...]: the preset in words
    named: bool = False         # a whole preset in words names it even at its default

    @property
    def words(self) -> tuple:
        return tuple(word for word, _ in self.choices)

    @property
    def values(self) -> tuple:
        return tuple(value for _, value in self.choices)

    @property
    def type(self) -> Any:
        return self.kind if self.kind is not None else type(self.default)

    def member(self, value: Any) -> str:
        """The ONNX Runtime enum member of the value `value`."""
        return dict(self.members)[value]

    def entry_text(self, value: Any) -> str | None:
        """The session config entry's text for `value`; None at the default (the key left unset)."""
        if value == self.default:
            return None
        return str(int(value)) if isinstance(value, bool) else str(value)

    @property
    def dest(self) -> str:
        """The flag's attribute on the parsed arguments."""
        return self.flag.lstrip("-").replace("-", "_")


# how a preset reads: each takes the whole SessionConfig, since a setting without effect in it
# (the spinning of a pool of one thread) is left unsaid
def provider_words(name: str) -> str:
    return PROVIDER_WORDS.get(name, name.replace("ExecutionProvider", ""))


def _count(number: int, thing: str) -> str:
    return f"{number} {thing}" + ("" if number == 1 else "s")


def _threads(number: int) -> str:
    return "a thread per core" if number == 0 else _count(number, "thread")


def _on_off(words: str, name: str):
    return lambda config: [(f"{words} {'on' if getattr(config, name) else 'off'}", getattr(config, name))]


def _providers(config) -> list:
    named = []
    for spec in config.providers:
        options = {k: v for k, v in spec.options.items() if k != "enable_cuda_graph"}   # read with IO binding
        named.append(provider_words(spec.name) + (
            " (" + ", ".join(f"{k} {v}" for k, v in options.items()) + ")" if options else ""))
    return [(" then ".join(named), False)]


def _spinning(config) -> list:
    """Both pools' spinning, as one aspect: the inter-op pool is there only in parallel mode."""
    pools = ((config.intra_op_allow_spinning, config.intra_op_num_threads != 1),
             (config.inter_op_allow_spinning, config.execution_mode == "parallel" and config.inter_op_num_threads != 1))
    spins = [on is not False for on, pool in pools if pool]
    if not spins:
        return []
    text = "spinning " + ("on" if spins[0] else "off")
    if len(spins) == 2 and spins[0] != spins[1]:
        text += f" (inter-op {'on' if spins[1] else 'off'})"
    return [(text, all(spins))]


def _block(config) -> list:
    block = config.dynamic_block_base
    if config.intra_op_num_threads == 1:          # no pool to hand the pieces to
        return []
    return [(f"dynamic block base {block}" if block else "no dynamic block base", block == 0)]


def _mode(config) -> list:
    if config.execution_mode != "parallel":
        return [("sequential", True)]
    return [(f"parallel with {_threads(config.inter_op_num_threads).replace('thread', 'inter-op thread')}", False)]


def _binding(config) -> list:
    """IO binding, and the CUDA graph (a provider option) that needs it."""
    graph = any(str(s.options.get("enable_cuda_graph", "0")).lower() in ("1", "true") for s in config.providers)
    return [("IO binding" if config.io_binding else "no IO binding", not config.io_binding),
            ("CUDA graph" if graph else "no CUDA graph", not graph)]


def _pairs(empty: str, name: str):
    def read(config) -> list:
        text = ", ".join(f"{k} = {v}" for k, v in getattr(config, name).items())
        return [(text or empty, not text)]
    return read


def _same(values) -> tuple:
    return tuple((value, value) for value in values)


def _spin_fields(pool: str, name: str) -> list[SessionField]:
    return [
        SessionField(f"{pool}_op_allow_spinning", "threads", "choice", f"{name} spinning",
                     "Idle threads can keep polling for work (spinning) instead of sleeping: lower latency between "
                     "nodes, more CPU burnt. Turning it off helps when other work shares the machine. Default: "
                     "ONNX Runtime's (spin).", f"--{pool}-spinning", choices=SPIN, kind=bool | None,
                     entry=f"session.{pool}_op.allow_spinning",
                     reads=_spinning if pool == "intra" else None),
        SessionField(f"{pool}_op_spin_duration_us", "threads", "number", f"{name} spin time (µs)",
                     "How long an idle thread spins before it sleeps, in µs (unset: ONNX Runtime's default).",
                     f"--{pool}-spin-us", minimum=0, maximum=10_000_000, special="ORT default", unset_at=-1,
                     metavar="µS", kind=int | None, entry=f"session.{pool}_op.spin_duration_us"),
        SessionField(f"{pool}_op_spin_backoff_max", "threads", "number", f"{name} spin back-off",
                     "Spin more gently: each spin step doubles its pause up to this power of two, for less power "
                     "use over the same spin time (unset: ONNX Runtime's default).", f"--{pool}-spin-backoff",
                     minimum=1, maximum=1024, special="ORT default", unset_at=0, metavar="N", kind=int | None,
                     entry=f"session.{pool}_op.spin_backoff_max"),
    ]


_THREADS_WHY = (f"that is {THREADS_PER_CORE_LIMIT} threads for each core of this machine, and ONNX Runtime would "
                "start every one")

SESSION_FIELDS: tuple[SessionField, ...] = (
    # how the session picks its providers: InferenceSession's providers, or the options' devices
    # (app.core.session.create and .plugins)
    SessionField("providers", "providers", "providers", "Execution providers",
                 "The execution providers in priority order: each node runs on the first that can run it. On the "
                 "command line, repeat --provider (cpu, cuda, tensorrt, dml, openvino), each followed by its "
                 "--provider-option KEY=VALUE.", "--provider", factory=lambda: ["CPUExecutionProvider"],
                 metavar="P", reads=_providers, named=True),
    SessionField("device_policy", "providers", "choice", "Device policy",
                 "Let ONNX Runtime pick the devices and providers by a policy (prefer the CPU, a GPU or an NPU, the "
                 "most performance, the most efficiency or the least power) instead of the list above; the result "
                 "names the devices it picked. None: the providers listed.", "--device-policy", "none",
                 choices=_same(("none", *DEVICE_POLICIES)), enum="OrtExecutionProviderDevicePolicy",
                 members=tuple(DEVICE_POLICIES.items())),
    SessionField("ep_libraries", "providers", "pairs", "Provider libraries",
                 "Execution provider plugin libraries to load, one NAME=PATH a line (on the command line, a flag "
                 "each). Installed onnxruntime-ep-* packages are found without this.", "--ep-library",
                 factory=dict, placeholder="my_ep=/path/to/libmy_ep.so", metavar="NAME=PATH", kind=dict[str, str]),
    # the rest in the order a preset reads in words
    SessionField("graph_optimization_level", "graph", "choice", "Optimisation level",
                 "How much ONNX Runtime rewrites the graph before running it. Basic folds constants and drops "
                 "redundant nodes; extended adds fusions specific to ONNX Runtime's kernels; all also changes memory "
                 "layouts for the CPU. More optimisation usually means faster runs and a slower start.",
                 "--opt-level", "all", choices=_same(OPT_LEVELS), option="graph_optimization_level",
                 enum="GraphOptimizationLevel", members=tuple(OPT_LEVELS.items()), named=True,
                 reads=lambda config: [(LEVEL_WORDS[config.graph_optimization_level],
                                        config.graph_optimization_level == "all")]),
    SessionField("intra_op_num_threads", "threads", "number", "Intra-op threads",
                 "Threads that split the work inside one node (a big MatMul or Conv). 0 lets ONNX Runtime use one "
                 "per physical core.", "--threads", 0, minimum=0, maximum=thread_limit(), why=_THREADS_WHY,
                 special="ORT default", metavar="N", option="intra_op_num_threads", named=True,
                 reads=lambda config: [(_threads(config.intra_op_num_threads), config.intra_op_num_threads == 0)]),
    SessionField("inter_op_num_threads", "threads", "number", "Inter-op threads",
                 "Threads that run independent nodes at once; used only in parallel execution mode (0: ONNX "
                 "Runtime's default).", "--inter-threads", 0, minimum=0, maximum=thread_limit(), why=_THREADS_WHY,
                 special="ORT default", metavar="N", option="inter_op_num_threads"),    # read with the mode
    SessionField("intra_op_thread_affinities", "threads", "text", "Intra-op affinities",
                 "Pin the intra-op threads to cores: one group per thread except the first, separated by ';' "
                 "(e.g. '1;2' or '3,4;5,6'). Usually best left empty; useful to keep sessions off each other's cores.",
                 "--affinities", "", placeholder="e.g. 1;2", metavar="GROUPS",
                 entry="session.intra_op_thread_affinities"),
    *_spin_fields("intra", "Intra-op"),
    *_spin_fields("inter", "Inter-op"),
    SessionField("dynamic_block_base", "threads", "number", "Dynamic block base",
                 "Hand out work in shrinking pieces so threads finish together; lowers latency variance on busy "
                 "machines (4 is a good start). 0 keeps the fixed split.", "--dynamic-block-base", 0, minimum=0,
                 maximum=64, special="off", metavar="N", entry="session.dynamic_block_base", reads=_block),
    SessionField("execution_mode", "graph", "choice", "Execution mode",
                 "Sequential runs one node at a time (each node may still use many threads). Parallel also runs "
                 "independent branches at the same time; it helps only graphs with wide, independent branches.",
                 "--execution-mode", "sequential", choices=_same(EXECUTION_MODES), option="execution_mode",
                 enum="ExecutionMode", members=tuple(EXECUTION_MODES.items()), reads=_mode, named=True),
    SessionField("enable_mem_pattern", "graph", "check", "Memory pattern",
                 "Plan the memory of all intermediate tensors once, from the first run, and reuse the plan. "
                 "Helps when input shapes stay the same.", "--mem-pattern", True, option="enable_mem_pattern",
                 reads=_on_off("memory pattern", "enable_mem_pattern")),
    SessionField("enable_cpu_mem_arena", "graph", "check", "CPU memory arena",
                 "Keep freed CPU memory in a pool for the next allocation instead of returning it to the system: "
                 "faster, but the process keeps the memory it once needed.", "--cpu-mem-arena", True,
                 option="enable_cpu_mem_arena", reads=_on_off("CPU arena", "enable_cpu_mem_arena")),
    SessionField("use_deterministic_compute", "graph", "check", "Deterministic compute",
                 "Prefer kernels that give bit-identical results run after run (some are slower).",
                 "--deterministic", False, option="use_deterministic_compute",
                 reads=lambda config: [("deterministic compute" if config.use_deterministic_compute
                                        else "non-deterministic compute", not config.use_deterministic_compute)]),
    # ORTune's own: how it runs the session (bound buffers) and the job around it (its memory)
    SessionField("io_binding", "graph", "check", "IO binding (inputs and outputs on the device)",
                 "Bind inputs and outputs to buffers on the provider's device so runs skip the copies and "
                 "allocations of plain run() calls.", "--io-binding", False, reads=_binding),
    SessionField("memory_limit", "graph", "text", "Memory limit",
                 "The most memory each job's process may hold: a size (4G, 512M) or a share of the memory free when "
                 "it starts (50%). Past it the job stops and names the inputs that needed so much, before the "
                 f"system's out-of-memory killer ends something else. Empty: the settings' limit ({DEFAULT_LIMIT}).",
                 "--memory-limit", "", check=_memory_limit, placeholder=f"{DEFAULT_LIMIT} (the settings')",
                 metavar="SIZE"),
    SessionField("log_severity_level", "graph", "choice", "Log severity",
                 "How much ONNX Runtime writes to its log; verbose shows every node's provider.", "--log-severity",
                 3, choices=tuple(LOG_LEVELS.items()), option="log_severity_level"),
    SessionField("free_dimension_overrides", "advanced", "pairs", "Free dimension overrides",
                 "Fix a symbolic dimension to a number inside ONNX Runtime, so it can plan and optimise for that "
                 "exact shape. One NAME=VALUE a line (on the command line, a flag each).", "--free-dim",
                 factory=dict, minimum=1, placeholder="batch=1", metavar="NAME=VALUE", whole=True,
                 kind=dict[str, int], option="add_free_dimension_override_by_name",
                 reads=_pairs("no dimension overrides", "free_dimension_overrides")),
    # any other session config entry, by its key (app.core.session.config.all_config_entries)
    SessionField("config_entries", "advanced", "pairs", "Session config entries",
                 "Any other session setting ONNX Runtime knows, as KEY=VALUE lines (e.g. "
                 "session.disable_prepacking=1; on the command line, a flag each).", "--session-config",
                 factory=dict, placeholder="session.disable_prepacking=1", metavar="KEY=VALUE", kind=dict[str, str],
                 reads=_pairs("no further entries", "config_entries")),
    SessionField("inputs.mode", "inputs", "choice", "Values",
                 "What every input holds: seeded random values of the right type (integer inputs below the "
                 "vocabulary size, masks all ones), zeros (--zeros), or your own files (--input).", "--zeros",
                 "random", choices=_same(FEED_MODES), const="zeros"),
    SessionField("inputs.seed", "inputs", "number", "Seed",
                 "The seed of the random inputs: the same seed gives the same inputs.", "--seed", 0, minimum=0,
                 metavar="N"),
    SessionField("inputs.dims", "inputs", "table", "Dimensions",
                 "The value of a named symbolic dimension in the generated inputs.", "--dim", factory=dict, kind=dict[str, int],
                 minimum=0, maximum=MAX_ELEMENTS, metavar="NAME=VALUE"),
    SessionField("inputs.shapes", "inputs", "table", "Shapes", "One input's whole shape.", "--shape",
                 factory=dict, kind=dict[str, list[int]], minimum=0, maximum=MAX_ELEMENTS, metavar="INPUT=D1,D2,...", split=","),
    SessionField("inputs.files", "inputs", "table", "Files",
                 "Use this array for an input (an .npz may hold several: --input FILE.npz).", "--input",
                 factory=dict, kind=dict[str, str], metavar="NAME=FILE.npy", bare_key="*", sets=(("inputs.mode", "files"),)),
    SessionField("inputs.values", "inputs", "table", "Values",
                 "One value for every element of an input (a sample rate, a step count, a flag).", "--value",
                 factory=dict, kind=dict[str, float], metavar="NAME=V"),
    SessionField("inputs.probed", "inputs", "table", "Probed sizes",
                 "Sizes Find working inputs ran the model with, by dimension (found, not set).", factory=dict, kind=dict[str, int],
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


def from_table(prefix: str = ""):
    """A class decorator: the dataclass whose fields are the table's rows named `prefix` + a
    name without a dot, in the table's order, each typed and limited as its row says. A field
    the class declares itself (its default made there) keeps its place; the class's other
    fields follow."""
    def make(cls):
        own = dict(cls.__dict__.get("__annotations__", {}))
        fields = {}
        for row in SESSION_FIELDS:
            name = row.name[len(prefix):]
            if not row.name.startswith(prefix) or "." in name:
                continue
            if name in own:
                fields[name] = own.pop(name)
            else:
                fields[name] = row.type
                setattr(cls, name, described(row.name))
        cls.__annotations__ = {**fields, **own}
        return dataclass(cls)
    return make
