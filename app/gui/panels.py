"""The tabs of the window, in the order a user works. Each entry names a module of
app.gui and the Panel class in it."""

PANELS = [
    ("app.gui.inspecting", "OverviewPanel"),
    ("app.gui.session_panel", "SessionPanel"),
    ("app.gui.benchmarking", "BenchmarkPanel"),
    ("app.gui.comparing", "ComparePanel"),
    ("app.gui.profiling", "ProfilePanel"),
    ("app.gui.iobinding", "IOBindingPanel"),
    ("app.gui.tuning", "TunePanel"),
    ("app.gui.history", "HistoryPanel"),
]
