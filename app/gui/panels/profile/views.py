"""The views of one profile (operator types, nodes, providers, runs, timeline) and of the
comparison of two. Each takes the plain dict a profiling job returns; none starts a job."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QFormLayout, QHBoxLayout, QLabel, QLineEdit, QSpinBox, QSplitter, QVBoxLayout,
                               QWidget)

from app.core.verdict import verdict_words
from app.core.profile.tables import SHARE, node_table, operator_table, short_provider as _short
from app.core.formatting import interval_text, ratio_text
from app.gui.widgets.chart_base import TOP_BARS, BarChart
from app.gui.widgets.table import DataTable

RUN_TICKS = 12
TABLE_ROWS = 5           # the least a table of operators or nodes shows at once


def _ms(us: float | None) -> float | None:
    return None if us is None else us / 1000.0


def _vbox(*widgets, stretch_last: bool = True) -> QWidget:
    holder = QWidget()
    layout = QVBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget)
    if stretch_last:
        layout.setStretch(len(widgets) - 1, 1)
    return holder


class OperatorsView(QSplitter):
    """Per operator type: a sortable table and bar charts of time, calls and share."""

    def __init__(self):
        super().__init__(Qt.Orientation.Vertical)
        self.table = DataTable()
        self.table.keep_rows(TABLE_ROWS)
        self.table.fixed_decimals = {SHARE: 1}
        self.table.key_columns = (SHARE,)
        charts = QSplitter(Qt.Orientation.Horizontal)
        self.time_chart = BarChart("Total time", durations=True, placeholder="No profile yet.")
        self.count_chart = BarChart("Calls", placeholder="No profile yet.")
        self.share_chart = BarChart("Share of total node time (%)", placeholder="No profile yet.", decimals=1)
        for chart in (self.time_chart, self.count_chart, self.share_chart):
            charts.addWidget(chart)
        self.addWidget(self.table)
        self.addWidget(charts)
        self.setSizes([300, 320])

    def show_profile(self, info: dict, include_first_run: bool) -> None:
        headers, rows = operator_table(info, include_first_run)
        self.table.set_rows(rows, headers=headers)
        rows = info["by_op_type"]
        labels, rank = [r["op_type"] for r in rows], [r["total_us"] for r in rows]
        # the same operators in all three: the ones taking the most time, the rest as "other"
        for chart, values, name in ((self.time_chart, [r["total_us"] / 1000 for r in rows], "total_ms"),
                                    (self.count_chart, [r["count"] for r in rows], "calls"),
                                    (self.share_chart, [r["percent"] for r in rows], "percent_of_node_time")):
            chart.set_bars(labels, values, name, top=TOP_BARS, rank=rank)


class NodesView(QWidget):
    """The nodes taking the most time, with shapes and provider; search by name."""

    def __init__(self):
        super().__init__()
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search node names…")
        self.search.setClearButtonEnabled(True)
        self.top = QSpinBox()
        self.top.setRange(1, 1_000_000)
        self.top.setValue(50)
        self.top.setPrefix("Top ")
        self.top.setSuffix(" nodes")
        bar = QHBoxLayout()
        bar.addWidget(self.search, 1)
        bar.addWidget(self.top)
        self.table = DataTable()
        self.table.keep_rows(TABLE_ROWS)
        self.table.fixed_decimals = {SHARE: 1}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.table, 1)
        self.nodes: list[dict] = []
        self.include_first_run = False
        self.search.textChanged.connect(self.refresh)
        self.top.valueChanged.connect(self.refresh)

    def show_profile(self, info: dict, include_first_run: bool) -> None:
        self.nodes = info["by_node"]
        self.include_first_run = include_first_run
        self.refresh()

    def refresh(self) -> None:
        headers, rows = node_table(self.nodes, self.include_first_run, self.search.text(), self.top.value())
        self.table.set_rows(rows, headers=headers)


class ProvidersView(QSplitter):
    """Time and nodes per execution provider, so a CPU fallback is plain to see."""

    def __init__(self):
        super().__init__(Qt.Orientation.Horizontal)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.table = DataTable()
        self.table.fixed_decimals = {SHARE: 1}
        self.chart = BarChart("Node time per provider", durations=True, placeholder="No profile yet.")
        self.addWidget(_vbox(self.note, self.table))
        self.addWidget(self.chart)
        self.setSizes([450, 450])

    def show_profile(self, info: dict, include_first_run: bool) -> None:
        rows = info["providers"]
        self.table.set_rows([[r["provider"], _ms(r["total_us"]), r["percent"], r["nodes"], r["count"]]
                             for r in rows], headers=["Provider", "Total ms", SHARE, "Nodes", "Calls"])
        self.chart.set_bars([_short(r["provider"]) for r in rows], [r["total_us"] / 1000 for r in rows], "total_ms")
        cpu = next((r for r in rows if r["provider"] == "CPUExecutionProvider"), None)
        if cpu is not None and len(rows) > 1:
            self.note.setText(f"<b>{cpu['nodes']} node(s) ran on the CPU</b> ({cpu['percent']:.1f}% of the node "
                              "time) although another provider was used: each one costs copies between devices.")
        else:
            self.note.setText("All node time on " + ", ".join(_short(r["provider"]) for r in rows) + ".")


class RunsView(QSplitter):
    """The session's phases, and each run's time (a slow run stands out in colour)."""

    def __init__(self):
        super().__init__(Qt.Orientation.Horizontal)
        self.phases = DataTable(["Phase", "ms"])
        self.chart = BarChart("Time per run", horizontal=False, durations=True, show_values=False,
                              placeholder="No profile yet.")
        self.addWidget(self.phases)
        self.addWidget(self.chart)
        self.setSizes([300, 600])

    def show_profile(self, info: dict, include_first_run: bool) -> None:
        from app.gui.widgets.theme import plot_colors

        phases = info["phases"]
        steady = phases["steady_run_us"] or {}
        label = "all runs" if not info["warmup_excluded"] else "steady runs"
        rows = [["Model loading", _ms(phases["model_loading_us"])],
                ["Session initialisation", _ms(phases["session_initialization_us"])],
                ["First run", _ms(phases["first_run_us"])],
                [f"Mean of {label}", _ms(steady.get("mean"))], [f"Median of {label}", _ms(steady.get("median"))],
                [f"Fastest of {label}", _ms(steady.get("min"))], [f"Slowest of {label}", _ms(steady.get("max"))]]
        rows += [[f"Slow run #{i + 1}", _ms(phases["run_us"][i])] for i in phases["slow_runs"]]
        self.phases.set_rows(rows)
        colors = plot_colors()
        slow = set(phases["slow_runs"])
        brushes = [colors["bad"] if i in slow else colors["muted"] if i == 0 and info["warmup_excluded"]
                   else colors["accent"] for i in range(len(phases["run_us"]))]
        count = len(phases["run_us"])
        self.chart.set_bars([str(i + 1) for i in range(count)], [us / 1000 for us in phases["run_us"]], "run_ms",
                            brushes=brushes)
        step = max(1, count // RUN_TICKS)      # a label on every bar would pile up past a few dozen runs
        self.chart.category_axis.set_categories([str(i + 1) for i in range(count)], every=step)


class TimelineTab(QWidget):
    """One run at a time on the timeline."""

    def __init__(self):
        super().__init__()
        from app.gui.widgets.timeline import TimelineView

        self.run = QSpinBox()
        self.run.setPrefix("Run ")
        self.run.setMinimum(1)
        self.caption = QLabel()
        bar = QHBoxLayout()
        bar.addWidget(self.run)
        bar.addWidget(self.caption, 1)
        self.view = TimelineView()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.view, 1)
        self.info: dict | None = None
        self.run.valueChanged.connect(lambda _: self.show_run())

    def show_profile(self, info: dict, include_first_run: bool) -> None:
        first_time = self.info is not info
        self.info = info
        if not first_time:
            return
        runs = info["runs"]
        self.run.blockSignals(True)
        self.run.setEnabled(runs > 1)
        self.run.setMaximum(max(1, runs))
        self.run.setValue(self._typical_run(info) + 1)
        self.run.blockSignals(False)
        self.show_run()

    @staticmethod
    def _typical_run(info: dict) -> int:
        """The steady run closest to the median: what a run usually looks like."""
        steady = info["phases"]["steady_run_us"]
        runs = info["phases"]["run_us"]
        if not steady or not runs:
            return 0
        first = 1 if info["warmup_excluded"] else 0
        return min(range(first, len(runs)), key=lambda i: (abs(runs[i] - steady["median"]), i))

    def show_run(self) -> None:
        import numpy as np

        info, timeline = self.info, (self.info or {}).get("timeline")
        if timeline is None:
            self.view.clear()
            self.caption.setText("No timeline for this profile.")
            return
        number = self.run.value() - 1
        if info["runs"]:
            mask = timeline["run"] == number
            origin = int(timeline["run_start"][number])
            what = f"run {number + 1} of {info['runs']}: {int(timeline['run_dur'][number]) / 1000:,.3f} ms"
        else:
            mask = np.ones(timeline["ts"].size, bool)
            origin = int(timeline["ts"].min()) if timeline["ts"].size else 0
            what = "the whole trace (it has no model_run events)"
        tids = [t["tid"] for t in info["threads"]]
        lane = np.searchsorted(np.array(tids), timeline["tid"][mask])
        op_index = {r["op_type"]: i for i, r in enumerate(info["by_op_type"])}
        node_colour = np.array([op_index[n["op_type"]] for n in info["by_node"]] or [0])
        nodes, durations = timeline["node"][mask], timeline["dur"][mask]

        def describe(index: int) -> str:
            node = info["by_node"][int(nodes[index])]
            shapes = " ".join(node["input_shapes"]) + " → " + " ".join(node["output_shapes"])
            return (f"{node['name']}  ·  {node['op_type']}  ·  {int(durations[index]):,} µs  ·  "
                    f"{_short(node['provider'])}  ·  {shapes}")

        self.view.set_events([f"thread {t}" for t in tids], lane, (timeline["ts"][mask] - origin) / 1000.0,
                             durations / 1000.0, node_colour[nodes], describe)
        self.caption.setText(f"{what}, {int(mask.sum()):,} node events on {len(tids)} thread(s). "
                             "Wheel zooms, drag pans, hover names a node.")


class CompareView(QSplitter):
    """Before/after per operator type: time and calls per run, and a diverging bar chart."""

    def __init__(self):
        super().__init__(Qt.Orientation.Vertical)
        from PySide6.QtWidgets import QComboBox

        self.before = QComboBox()
        self.after = QComboBox()
        from PySide6.QtWidgets import QPushButton

        self.summary = QLabel("Load two profiles (run or open traces) to compare them.")
        self.summary.setWordWrap(True)
        self.measure_button = QPushButton("Time both models in alternation")
        self.measure_button.setToolTip("Run the two profiles' models as Compare does, each in its own process, one "
                                       "block at a time, and say where the profile disagrees with that timing.")
        self.measure_button.setEnabled(False)
        form = QFormLayout()
        form.addRow("Before:", self.before)
        form.addRow("After:", self.after)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addLayout(form)
        top_layout.addWidget(self.measure_button)
        top_layout.addWidget(self.summary)
        self.table = DataTable()
        self.table.column_formats = {"Speedup": ratio_text}
        self.chart = BarChart("Change per run (after − before)", durations=True,
                              placeholder="Load two profiles to compare them.")
        self.addWidget(_vbox(top, self.table))
        self.addWidget(self.chart)
        self.setSizes([360, 300])
        self.result: dict | None = None

    def set_choices(self, labels: list[str]) -> None:
        """New profiles: compare the newest with the one before it."""
        for combo, index in ((self.before, len(labels) - 2), (self.after, len(labels) - 1)):
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(labels)
            combo.setCurrentIndex(max(0, index))
            combo.blockSignals(False)

    def show_diff(self, result: dict | None) -> None:
        from app.gui.widgets.theme import plot_colors

        self.result = result
        models = (result or {}).get("models") or {}
        self.measure_button.setEnabled(bool(models.get("before") and models.get("after")
                                            and models["before"] != models["after"]))
        if result is None:
            self.table.set_rows([])
            self.chart.set_bars([], [])
            return
        total = result["total"]
        speedup = total["ratio"]
        text = (f"Node time per run: {result['node_us_per_run']['before'] / 1000:,.3f} ms → "
                f"{result['node_us_per_run']['after'] / 1000:,.3f} ms"
                + (f" — <b>{ratio_text(speedup)}</b> {_interval(total['ci'])} {verdict_words(total['verdict'])}" if speedup else ""))
        if result["run_speedup"]:
            text += (f"<br>Whole run (steady mean): {result['run_us']['before'] / 1000:,.3f} ms → "
                     f"{result['run_us']['after'] / 1000:,.3f} ms ({ratio_text(result['run_speedup'])})")
        measured = result.get("measured")
        if measured:
            text += (f"<br>Timed in alternation: <b>{ratio_text(measured['speedup'])}</b> "
                     f"{_interval(measured['speedup_ci'])} {verdict_words(measured['verdict'])} — "
                     + ("<b>the profile disagrees</b>: trust the timing; the profiler's cost per node distorts "
                        "small operators" if result["disagrees"] else "the profile agrees"))
        else:
            text += f"<br><small>{result['note']}</small>"
        self.summary.setText(text)
        only = {"before": "only before (removed or fused)", "after": "only after (added, e.g. fused)"}
        rows = result["by_op_type"]
        self.table.set_rows(
            [[r["op_type"], _ms(r["before_us"]), _ms(r["after_us"]), _ms(r["delta_us"]), r["before_count"],
              r["after_count"], r["speedup"], _interval(r["ratio_ci"]) or "–", verdict_words(r["verdict"]),
              only.get(r["only_in"], "")] for r in rows],
            headers=["Op type", "Before ms/run", "After ms/run", "Change ms", "Calls before", "Calls after",
                     "Speedup", "95 % interval", "Verdict", "Note"])
        colors = plot_colors()
        self.chart.set_bars([r["op_type"] for r in rows], [r["delta_us"] / 1000 for r in rows], "change_ms",
                            brushes=[colors["good"] if r["delta_us"] <= 0 else colors["bad"] for r in rows],
                            top=TOP_BARS)


def _interval(interval: list | None) -> str:
    """A 95 % interval as [low–high], as every tab writes one; "" without one (too few runs)."""
    return f"[{interval_text(interval)}]" if interval else ""
