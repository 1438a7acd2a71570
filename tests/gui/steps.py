"""Steps window tests take again and again: bring up a tab, open a model and wait for it."""


def tab(window, title: str):
    """The tab called `title`, current and built."""
    panel = window.panel(title)
    window.tabs.setCurrentWidget(panel)
    panel.ensure_built()
    return panel


def open_and_wait(qtbot, window, path, timeout: int = 60000):
    """Open the model at `path` as the user would, and wait until the window has read it."""
    with qtbot.waitSignal(window.model_opened, timeout=timeout):
        window.open_model(path)
