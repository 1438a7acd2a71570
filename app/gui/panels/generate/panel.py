"""Generate tab: the current model, a decoder with a KV cache, timed as it generates — the
prompt's run (time to first token), then token by token — with each step's latency drawn as
it comes, and the figures of `ortune generate` when it ends. The session (provider, threads,
IO binding) is the Session tab's."""

from __future__ import annotations

import html
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QSpinBox, QSplitter

from app.core.bench.sweep import parse_values
from app.core.generate.jobs import GENERATE, MAX_TOKENS, GenerateParams
from app.core.jobs.errors import UserError
from app.core.formatting import human_bytes
from app.gui.shell.job_control import JobControl, RunOf
from app.gui.shell.panel import Panel

#: the engines the Engine box offers (app.core.generate.genai_engine.ENGINES), in words
ENGINE_NAMES = {"ort": "ORTune's loop", "genai": "onnxruntime-genai"}
COLUMNS = ["Prompt", "Context", "TTFT ms", "Token p50 ms", "Token p90 ms", "Token p99 ms", "Tokens/s decode",
           "Tokens/s end to end", "Growth ms/1k tokens", "KV cache MB"]


class GeneratePanel(Panel):
    title = "Generate"

    def build(self) -> None:
        from app.gui.panels.generate.chart import TokenLatencyChart
        from app.gui.widgets.run_caption import RunCaption
        from app.gui.widgets.table import DataTable

        self.results: dict[str, dict] = {}
        self.heading = QLabel()
        self.heading.setTextFormat(Qt.TextFormat.RichText)      # the model's name escaped
        self.heading.setWordWrap(True)
        self.layout_.addWidget(self.heading)

        controls, more = QHBoxLayout(), QHBoxLayout()
        self.prompts = QLineEdit("128")
        self.prompts.setToolTip("Prompt length(s) in tokens, separated by commas: each is generated from.")
        self.prompts.setMinimumWidth(90)
        self.new_tokens = QSpinBox(minimum=1, maximum=MAX_TOKENS, value=64)
        self.batch = QSpinBox(minimum=1, maximum=4096, value=1)
        self.repeats = QSpinBox(minimum=1, maximum=1000, value=3)
        self.repeats.setToolTip("Timed generations per prompt length, after the warm-up ones.")
        self.warmup = QSpinBox(minimum=0, maximum=1000, value=1)
        self.against = QComboBox()
        self.against.setToolTip("Another open decoder (the source of this variant, say): how often this model's next "
                                "token is that one's, over the same greedy steps.")
        self.against.setMinimumContentsLength(12)
        self.against.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.engine = QComboBox()
        for engine, text in ENGINE_NAMES.items():
            self.engine.addItem(text, engine)
        self.engine.setToolTip("Who runs the generation loop: ORTune's present→past loop on an ONNX Runtime "
                               "session, or onnxruntime-genai's generator on a genai model folder, timed alike so "
                               "the two sit side by side.")
        for widget in (QLabel("Prompt tokens:"), self.prompts, QLabel("New tokens:"), self.new_tokens,
                       QLabel("Engine:"), self.engine):
            controls.addWidget(widget)
        controls.addStretch(1)
        for widget in (QLabel("Batch:"), self.batch, QLabel("Timed generations:"), self.repeats,
                       QLabel("Warm-up generations:"), self.warmup, QLabel("Next tokens against:"), self.against):
            more.addWidget(widget)
        more.addStretch(1)
        self.caption = RunCaption("No generation of this model yet.")
        self.control = JobControl(self.jobs, self.start, "Generate", caption=self.caption, parent=self)
        controls.addLayout(self.control.buttons)
        self.layout_.addLayout(controls)
        self.layout_.addLayout(more)
        self.layout_.addWidget(self.control.progress)
        self.layout_.addWidget(self.control.status)
        self.layout_.addWidget(self.caption)

        self.table = DataTable(COLUMNS)
        self.table.decimals = 3
        self.chart = TokenLatencyChart()
        self.details = QPlainTextEdit()                              # plain text: token ids, names from the model
        self.details.setReadOnly(True)
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.table)
        bottom.addWidget(self.details)
        bottom.setSizes([650, 350])
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.chart)
        body.addWidget(bottom)
        body.setSizes([360, 220])
        self.layout_.addWidget(body, 1)
        self.caption.follow(bottom)          # the live chart stays lit while it draws

    def remembered(self) -> dict:
        return {"prompts": self.prompts, "new_tokens": self.new_tokens, "batch": self.batch,
                "repeats": self.repeats, "warmup": self.warmup}

    def _fill_against(self, model) -> None:
        """The other open models, to agree with; none by default."""
        chosen = self.against.currentData()
        self.against.clear()
        self.against.addItem("none", "")
        for other in self.context.open_models():
            if model is None or other.path != model.path:
                self.against.addItem(other.label, other.path)
        self.against.setCurrentIndex(max(0, self.against.findData(chosen)))

    def _offer_engines(self, model) -> None:
        """genai where it can run the model; otherwise greyed, saying why, and ORTune's loop chosen."""
        from app.core.generate.genai_engine import genai_unusable

        why = genai_unusable(model.path) if model is not None else "no model is open"
        item = self.engine.model().item(self.engine.findData("genai"))
        item.setEnabled(not why)
        item.setToolTip(why or "onnxruntime-genai's generator on this folder")
        if why and self.engine.currentData() == "genai":
            self.engine.setCurrentIndex(self.engine.findData("ort"))

    def model_changed(self, model) -> None:
        self._fill_against(model)
        self._offer_engines(model)
        self.caption.model_changed(model)
        self.control.set_ready(model is not None and model.summary is not None)
        if model is None:
            self.heading.setText("Open a decoder with a KV cache (past/present inputs and outputs) to time it as it "
                                 "generates: the prompt, then token by token.")
        else:
            self.heading.setText(f"<b>{html.escape(model.label)}</b> — greedy generation: the prompt's run (time "
                                 "to first token), then one run per token with the cache fed back, in a separate "
                                 "process.")
        if self.job is None:
            self.show_result(self.results.get(model.path) if model is not None else None)

    # running ---------------------------------------------------------------------
    def start(self) -> None:
        model = self.context.current_model()
        if model is None or self.job is not None:
            return
        config = self.context.session_config("Generate", model.path)
        if config is None:
            return
        try:
            prompts = parse_values(self.prompts.text(), "Prompt tokens")
        except UserError as exc:
            self.control.say(exc.message, failed=True)
            return
        params = GenerateParams(path=model.path, session=config, prompt_lengths=prompts,
                                new_tokens=self.new_tokens.value(), batch=self.batch.value(),
                                repeats=self.repeats.value(), warmup=self.warmup.value(),
                                against=self.against.currentData() or "", engine=self.engine.currentData())
        self.chart.clear()
        self.control.run(f"Generate: {model.label}", GENERATE, params, self._generated,
                         subject=RunOf(model.path, model.label), on_data=self._on_data)

    def _on_data(self, kind: str, payload) -> None:
        if kind == "generate-tokens":
            self.chart.add(payload["prompt_length"], payload["repeat"], payload["context"], payload["ms"])
        elif kind == "generate-prefill":
            self.control.say(f"prompt {payload['prompt_length']}: first token after "
                                f"{payload['ms']:.3f} ms (generation {payload['repeat'] + 1})")

    def _generated(self, result: dict, run: RunOf) -> None:
        """Kept for `run`'s model, and shown while it is the current one."""
        model = self.context.current_model()
        result.setdefault("created", time.time())
        result["model_path"] = run.path
        self.results[run.path] = result
        self.show_result(self.results.get(model.path) if model is not None else None)

    # showing ---------------------------------------------------------------------
    def show_result(self, result: dict | None) -> None:
        if result is None:
            self.caption.clear()
            self.table.set_rows([], COLUMNS)
            self.chart.clear()
            self.details.setPlainText("")
            return
        cache = {row["past"] for row in result["decoder"]["cache"]}
        shown = [row for row in result["inputs"] if row["name"] not in cache]
        sizes = sorted({"×".join(map(str, row["shape"])) for row in result["inputs"] if row["name"] in cache})
        self.caption.show_run(result["model_path"], Path(result["model"]["path"]).name, shown, result["created"],
                              detail=f"and {len(cache)} cache inputs, {' / '.join(sizes)}: the first prompt's, "
                                     "empty; each step then feeds back the cache the last one gave")
        rows = []
        for run in result["runs"]:
            latency = run["decode_latency_ms"] or {}
            rows.append([run["prompt_length"], run["context"], run["ttft_ms"], latency.get("p50"), latency.get("p90"),
                         latency.get("p99"), run["tokens_per_s"]["decode"], run["tokens_per_s"]["end_to_end"],
                         run["growth"]["ms_per_1k_tokens"], run["kv_cache_bytes"] / 2 ** 20])
        self.table.set_rows(rows, COLUMNS)
        self.chart.show_medians(result["runs"])
        self.details.setPlainText(self.details_text(result))

    @staticmethod
    def details_text(result: dict) -> str:
        memory = result["memory"]
        engine = result.get("engine") or {}
        through = f" through onnxruntime-genai {engine['genai_version']}" if engine.get("engine") == "genai" else ""
        lines = [f"On {', '.join(result['providers'])}{through}: batch {result['batch']}, {result['new_tokens']} new tokens, "
                 f"{result['repeats']} timed generation(s) per prompt after {result['warmup']} warm-up.",
                 f"Loop: {result['loop']['how']}.",
                 f"KV cache: {human_bytes(result['kv_cache_bytes_per_token'])} a token, "
                 f"{human_bytes(result['kv_cache_bytes'])} at the longest context.",
                 f"Memory: peak {human_bytes(memory['peak_rss_bytes'])}, after the prompt "
                 f"{human_bytes(memory['after_prefill_rss_bytes'])}, after decoding "
                 f"{human_bytes(memory['after_decode_rss_bytes'])}"
                 + (f", GPU {human_bytes(memory['gpu_memory_bytes'])}." if memory.get("gpu_memory_bytes") else "."), ""]
        agreement = result.get("next_token_agreement")
        if agreement:
            lines.append(f"Next-token agreement with {Path(agreement['against']).name}: {agreement['rate']:.1%} of "
                         f"{agreement['steps']:,} tokens ({agreement['how']}).")
        for run in result["runs"]:
            if run["growth"].get("why"):
                lines.append(f"Prompt {run['prompt_length']}, no growth per 1k tokens: {run['growth']['why']}.")
            ids = run["token_ids"][0]
            lines.append(f"Prompt {run['prompt_length']}, next tokens: " + " ".join(map(str, ids[:24]))
                         + (" …" if len(ids) > 24 else ""))
        return "\n".join(lines)
