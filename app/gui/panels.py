"""The tabs of the window, in the order a user works: (title, module of app.gui,
Panel class). Titles are listed here so the window can show its tabs without importing
a single panel module."""

PANELS = [
    ("Overview", "app.gui.inspecting", "OverviewPanel"),
    ("Convert", "app.gui.conversions", "ConvertPanel"),
    ("Session", "app.gui.session_panel", "SessionPanel"),
    ("Benchmark", "app.gui.benchmarking", "BenchmarkPanel"),
    ("Compare", "app.gui.comparing", "ComparePanel"),
    ("Profile", "app.gui.profiling", "ProfilePanel"),
    ("IO Binding", "app.gui.iobinding", "IOBindingPanel"),
    ("Tune", "app.gui.tuning", "TunePanel"),
    ("Diagnose", "app.gui.diagnosis", "DiagnosePanel"),
    ("History", "app.gui.history", "HistoryPanel"),
]

#: files that are not models, dropped on the window: suffix -> (tab title, panel method(path))
DROP_TARGETS = {
    ".json": ("Profile", "open_dropped_trace"),
}
