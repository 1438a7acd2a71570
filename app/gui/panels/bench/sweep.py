"""Sweep page of the Benchmark tab: a symbolic dimension's values × concurrency levels,
each cell in a fresh process; a table, a throughput heat map and line charts, with
the best throughput under a latency limit outlined. A caption says which model ran on
which inputs when, and how to read a ratio; a cancelled sweep keeps the cells it measured,
marked partial."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QLineEdit, QWidget

from app.gui.shell.job_control import JobControl, RunOf
from app.gui.widgets.captioned import CaptionedResults, settings_beside
from app.gui.widgets.run_caption import inputs_text
from app.core.bench.jobs import SWEEP, SweepParams
from app.core.bench.sweep import items_unit
from app.core.verdict import verdict_words
from app.core.formatting import interval_text, ratio_text, ratio_with_interval

NO_DIM = "(none: concurrency only)"


class SweepView(QWidget):
    def __init__(self, panel):
        from app.gui.widgets.run_form import RunSettingsForm
        from app.gui.widgets.charts import HeatMap, LineChart
        from app.gui.widgets.table import DataTable

        super().__init__()
        self.panel = panel
        self.result: dict | None = None
        self.cells: list[dict] = []
        self.planned: list[dict] = []          # the running sweep's first cell's inputs
        self.grid: dict | None = None          # the running (or last) sweep's grid
        grid_box = QGroupBox("Grid")
        form = QFormLayout(grid_box)
        self.dim = QComboBox()
        self.dim.setEditable(True)
        self.dim.setToolTip("A symbolic dimension of the model's inputs, e.g. batch.")
        self.dim_values = QLineEdit("1,2,4,8")
        self.concurrency_values = QLineEdit("1")
        self.concurrency_values.setToolTip("Threads sharing the session, e.g. 1,2,4 (like streams in other tools).")
        self.limit = QDoubleSpinBox()
        self.limit.setRange(0, 1e6)
        self.limit.setDecimals(3)
        self.limit.setSpecialValueText("none")
        self.limit.setSuffix(" ms")
        self.limit.setToolTip("The highest latency you can accept; the best throughput within it is outlined.")
        self.percentile = QComboBox()
        self.percentile.addItems(["p99", "p95", "p90", "p50"])
        form.addRow("Dimension:", self.dim)
        form.addRow("Its values:", self.dim_values)
        form.addRow("Concurrency:", self.concurrency_values)
        form.addRow("Latency limit:", self.limit)
        form.addRow("Limit applies to:", self.percentile)
        self.run_form = RunSettingsForm("Each cell")

        self.table = DataTable()
        self.table.decimals = 4
        self.heat = HeatMap("Throughput (runs/s)", placeholder="No sweep yet.")
        self.latency_chart = LineChart("Latency", durations=True, placeholder="No sweep yet.")
        self.throughput_chart = LineChart("Throughput", placeholder="No sweep yet.")
        charts = ((self.heat, "Heat map"), (self.latency_chart, "Latency"), (self.throughput_chart, "Throughput"))
        results = CaptionedResults("No sweep yet: the table and the charts will say which model and inputs they "
                                   "measured.", self.table, charts, (200, 400))
        self.caption, self.charts = results.caption, results.charts
        self.control = JobControl(panel.context.jobs, self.start, "Start sweep", caption=self.caption, parent=self)
        self.control.stopped.connect(self._stopped)
        self.setLayout(settings_beside([grid_box, self.run_form, self.control.buttons, self.control.progress,
                                        self.control.status], results))

    @property
    def job(self):
        """The sweep running now (None when none does)."""
        return self.control.job

    def model_changed(self, model) -> None:
        self.caption.model_changed(model)
        names = []
        if model is not None and model.summary is not None:
            for item in model.summary["inputs"]:
                names += [d for d in (item["shape"] or []) if isinstance(d, str) and d not in ("", "?")]
        current = self.dim.currentText()
        self.dim.clear()
        self.dim.addItems(list(dict.fromkeys(names)) + [NO_DIM])
        if current and current in names:
            self.dim.setCurrentText(current)

    # running -------------------------------------------------------------------
    def params(self, path: str, config) -> SweepParams:
        """The sweep the form describes, of `path` with `config` (raises UserError on bad values)."""
        from app.core.bench.sweep import parse_values

        dim = self.dim.currentText().strip()
        dim = None if dim in ("", NO_DIM) else dim
        return SweepParams(path=path, session=config, run=self.run_form.settings(), dim=dim,
                           dim_values=parse_values(self.dim_values.text(), dim) if dim else [],
                           concurrency_values=parse_values(self.concurrency_values.text(), "concurrency"),
                           latency_limit_ms=self.limit.value() or None, limit_percentile=self.percentile.currentText())

    def start(self, params: SweepParams | None = None) -> None:
        """Sweep as `params` say (run again), or as the form says of the current model."""
        from app.core.jobs.errors import UserError

        context = self.panel.context
        model = context.current_model()
        if params is None and model is None:
            context.show_error("Sweep", "Open a model first.")
            return
        try:
            params = params or self.params(model.path, context.session.config())
        except UserError as exc:
            context.show_error("Sweep", exc.message)
            return
        self.run_form.set_settings(params.run)
        path = params.path
        self.cells, self.result, self.planned = [], None, []     # the last sweep stays, greyed, until cells come
        self.grid = params.to_dict()
        self.control.run(f"Sweep {Path(path).name}", SWEEP, params,
                         lambda result, _run: self.show_result(result), subject=RunOf(path, Path(path).name),
                         on_data=self.receive)

    def receive(self, kind: str, payload) -> None:
        """What the running sweep sends: the inputs it planned, then each cell as it is measured."""
        run = self.control.subject
        if self.job is None:
            return
        if kind == "inputs":
            self.planned = payload["inputs"]
            self.caption.running(f"{run.label} on {inputs_text(self.planned)}")
        elif kind == "sweep-cell":
            if not self.cells:
                self.caption.show_run(run.path, run.label, self.planned, run.started, note="measuring…",
                                      detail=_definition(self.grid))
            self.cells.append(payload)
            self.show_cells()

    def _stopped(self, exc, run: RunOf) -> None:
        """A cancelled sweep keeps the cells it measured, marked partial."""
        from app.core.jobs.errors import JobCancelled

        if not isinstance(exc, JobCancelled) or not self.cells:
            self.caption.stopped()
            return
        total = len(self.grid["dim_values"] or [None]) * len(self.grid["concurrency_values"])
        note = f"partial — cancelled with {len(self.cells)} of {total} cells measured; not stored"
        self.caption.show_run(run.path, run.label, self.planned, run.started, note=note, detail=_definition(self.grid))
        self.control.say(f"Cancelled: {len(self.cells)} of {total} cells measured, shown as partial.")

    # showing -------------------------------------------------------------------
    def show_result(self, result: dict, note: str = "") -> None:
        self.result = result
        self.cells = list(result["cells"])
        path = (result.get("model") or {}).get("path", "")
        self.caption.show_run(path, Path(path).name, result.get("inputs"), result.get("created"), note=note,
                              detail=_definition(result))
        self.show_cells(result.get("dim"), result["best"])
        best = result["best"]
        if result["latency_limit_ms"] is not None and best is None:
            self.control.say(f"No cell keeps {result['limit_percentile']} within {result['latency_limit_ms']} ms.")
        elif best is not None:
            where = (f"{result['dim']}={best['dim_value']}, " if result["dim"] else "") + f"concurrency {best['concurrency']}"
            unit = items_unit(result["dim"], result["cells"])
            text = (f"Best throughput{' within the limit' if result['latency_limit_ms'] else ''}: "
                    f"{best['items_per_s']:,.1f} {unit} at {where}.")
            margin = result.get("best_vs_runner_up")
            if margin:
                text += (f" Against the runner-up: {ratio_with_interval(margin['ratio'], margin['ci'])}, "
                         + ("a measurable lead." if margin["measurable"]
                            else "not a measurable lead: either could be the best."))
            self.control.say(text)

    def show_cells(self, dim: str | None = None, best: dict | None = None) -> None:
        import math

        dim = dim if dim is not None else (self.result or {}).get("dim") or self._current_dim()
        unit = items_unit(dim, self.cells)
        headers = ([dim] if dim else []) + ["concurrency", "p50 ms", "p90 ms", "p99 ms", "runs/s"] + (
            [unit] if dim else []) + ["vs first", "95 % interval", "verdict", "best"]
        self.table.set_rows([([c["dim_value"]] if dim else []) + [
            c["concurrency"], c["latency_ms"]["p50"], c["latency_ms"]["p90"], c["latency_ms"]["p99"],
            c["throughput_per_s"]] + ([c["items_per_s"]] if dim else []) + _ratio_columns(c) + [c == best]
            for c in self.cells], headers)
        dim_values = list(dict.fromkeys(c["dim_value"] for c in self.cells))
        levels = list(dict.fromkeys(c["concurrency"] for c in self.cells))
        self._show_heat_map(len(dim_values) > 1 and len(levels) > 1)
        if not self.cells:
            for chart in (self.heat, self.latency_chart, self.throughput_chart):
                chart.show_placeholder()
            return
        lookup = {(c["dim_value"], c["concurrency"]): c for c in self.cells}
        grid = [[lookup[(v, k)]["items_per_s"] if (v, k) in lookup else math.nan for k in levels]
                for v in dim_values]
        highlight = (dim_values.index(best["dim_value"]), levels.index(best["concurrency"])) if best else None
        self.heat.set_title(f"Throughput ({unit})")
        self.heat.set_grid([v if dim else "–" for v in dim_values], levels, grid, highlight,
                           row_title=dim or "", column_title="concurrency")
        if dim:
            x, key_of, series_names = dim_values, (lambda k, v: (v, k)), [f"concurrency {k}" for k in levels]
            groups = levels
        else:
            x, key_of, series_names, groups = levels, (lambda _g, k: (None, k)), ["all"], [None]
        latency, throughput = [], []
        for name, group in zip(series_names, groups):
            cells = [lookup.get(key_of(group, value)) for value in x]
            latency.append((f"p50, {name}", [c["latency_ms"]["p50"] if c else math.nan for c in cells]))
            latency.append((f"p99, {name}", [c["latency_ms"]["p99"] if c else math.nan for c in cells]))
            throughput.append((name, [c["items_per_s"] if c else math.nan for c in cells]))
        x_label = dim or "concurrency"
        self.latency_chart.set_lines(x, latency, x_label, "latency")
        self.throughput_chart.set_lines(x, throughput, x_label, unit)

    def _show_heat_map(self, two_dimensional: bool) -> None:
        """A heat map only for a grid of two dimensions: one row or column of cells reads
        better as a line, so the throughput line is shown instead."""
        on_heat_map = self.charts.currentIndex() == 0
        self.charts.setTabVisible(0, two_dimensional)
        if not two_dimensional and on_heat_map:
            self.charts.setCurrentWidget(self.throughput_chart)

    def _current_dim(self) -> str | None:
        text = self.dim.currentText().strip()
        return None if text in ("", NO_DIM) else text


def _ratio_columns(cell: dict) -> list:
    """A cell's items per second against the first cell's, measured in alternation (none for
    cells timed one after the other: their verdict says so)."""
    return [ratio_text(cell["ratio"]), interval_text(cell["ratio_ci"]) or "–", verdict_words(cell["verdict"])]


def _definition(grid: dict) -> str:
    """What the sweep measured and how to read its ratios (`grid`: the sweep's parameters or result)."""
    dim = grid.get("dim")
    cells = (f"{dim} = {', '.join(map(str, grid.get('dim_values') or []))} × " if dim else "") + (
        f"concurrency {', '.join(map(str, grid.get('concurrency_values') or []))}")
    rule = (grid.get("alternation") or {}).get("verdict_rule")
    counted = "tokens" if grid.get("unit") == "tokens/s" else dim + " items" if dim else "runs"
    return (f"{cells}, each cell in a process of its own. Ratio = {counted} per second "
            "of the cell / of the first cell, the median over rounds of alternating blocks, with its 95 % interval"
            + (f". Verdict: {rule}." if rule else "."))
