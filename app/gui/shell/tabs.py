"""The tabs of the window, in the order a user works: (title, module of app.gui,
Panel class). Titles are listed here so the window can show its tabs without importing
a single panel module."""

PANELS = [
    ("Overview", "app.gui.panels.model.overview", "OverviewPanel"),
    ("Convert", "app.gui.panels.convert.panel", "ConvertPanel"),
    ("Graph", "app.gui.panels.graph.panel", "GraphPanel"),
    ("Session", "app.gui.panels.session.panel", "SessionPanel"),
    ("Benchmark", "app.gui.panels.bench.panel", "BenchmarkPanel"),
    ("Compare", "app.gui.panels.compare.panel", "ComparePanel"),
    ("Drift", "app.gui.panels.drift.panel", "DriftPanel"),
    ("Profile", "app.gui.panels.profile.panel", "ProfilePanel"),
    ("IO Binding", "app.gui.panels.iobinding.panel", "IOBindingPanel"),
    ("Generate", "app.gui.panels.generate.panel", "GeneratePanel"),
    ("Tune", "app.gui.panels.tune.panel", "TunePanel"),
    ("Optimize", "app.gui.panels.optimize.panel", "OptimizePanel"),
    ("Diagnose", "app.gui.panels.diagnose.panel", "DiagnosePanel"),
    ("History", "app.gui.panels.history.panel", "HistoryPanel"),
]

#: files that are not models, dropped on the window: suffix -> (tab title, panel method(path))
DROP_TARGETS = {
    ".json": ("Profile", "open_dropped_trace"),
}

#: where each kind of stored result is shown and run again: kind -> tab title (see PanelContext.show_result)
RESULT_TABS = {
    "bench": "Benchmark",
    "sweep": "Benchmark",
    "compare": "Compare",
    "gate": "Compare",               # a gate's result holds its comparison of the pair
    "node": "Graph",                 # {path, name}: a node shown in the drawing
    "drift": "Drift",           # run_again: a DriftPair (app.gui.shell.handover) finds that pair's drift
    "optimize": "Optimize",          # a stored search: its leaderboard and answer
}
