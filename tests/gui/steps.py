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


def narrow_model_list(qtbot, source_path, variants):
    """A model list 230 px wide holding the source at `source_path` and its `variants`
    ((file path, kind) each): (the list, the variants' OpenModels, the room a name has, the
    list's font metrics)."""
    from app.gui.shell.model_list import ModelList
    from app.gui.shell.open_model import OpenModel

    models_list = ModelList()
    qtbot.addWidget(models_list)
    models_list.resize(230, 300)
    models_list.show()
    source = OpenModel(str(source_path))
    made = [OpenModel(str(path), kind=kind, parent=source) for path, kind in variants]
    for model in (source, *made):
        models_list.add(model)
        models_list.refresh(model)
    room = models_list.header().sectionSize(0) - 2 * models_list.indentation()
    return models_list, made, room, models_list.fontMetrics()
