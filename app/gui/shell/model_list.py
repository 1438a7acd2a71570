"""The open models: each source model with its variants (fp16, int8, .ort …) under it."""

from __future__ import annotations

from pathlib import Path

from app.core.formatting import human_bytes
from app.gui.shell.open_model import OpenModel
from app.gui.widgets.plain_text import plain

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QStyledItemDelegate, QTreeWidget, QTreeWidgetItem

ROLE = Qt.ItemDataRole.UserRole


def elide_mode(variant: bool) -> Qt.TextElideMode:
    """Where a name too long for the list is cut: a source's in its middle, a variant's at its
    start. A variant's name begins with its source's, shown just above it; its end says what
    it is ("….int8-dynamic.onnx", where the middle cut left "nudenet_…mic.onnx")."""
    return Qt.TextElideMode.ElideLeft if variant else Qt.TextElideMode.ElideMiddle


class NameDelegate(QStyledItemDelegate):
    def initStyleOption(self, option, index) -> None:  # noqa: N802  (Qt's naming)
        super().initStyleOption(option, index)
        option.textElideMode = elide_mode(index.parent().isValid())


def list_text(model: OpenModel) -> str:
    """A model's line in the list: its name, and its kind where the name does not say it
    ("x.fp16.repaired.onnx", not "x.fp16.repaired.onnx [fp16]": cut in the middle to fit, the
    name's end is what tells two variants apart)."""
    if model.kind == "source" or model.kind in model.label:
        return model.label
    return f"{model.label} [{model.kind}]"


class ModelList(QTreeWidget):
    current_changed = Signal(object)     # OpenModel or None

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setHeaderLabels(["Model", "Size"])
        header = self.header()      # the size always shows; a long name is cut (its tooltip is the path)
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setUniformRowHeights(True)
        # a name is cut where its start and end both matter (elide_mode): variants differ at their ends
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.setItemDelegateForColumn(0, NameDelegate(self))
        self.currentItemChanged.connect(lambda item, _old: self.current_changed.emit(self.model_of(item)))

    @staticmethod
    def model_of(item: QTreeWidgetItem | None) -> OpenModel | None:
        return item.data(0, ROLE) if item is not None else None

    def _items(self):
        stack = [self.topLevelItem(i) for i in range(self.topLevelItemCount())]
        while stack:
            item = stack.pop(0)
            yield item
            stack[0:0] = [item.child(i) for i in range(item.childCount())]

    def models(self) -> list[OpenModel]:
        return [self.model_of(item) for item in self._items()]

    def item_for(self, model: OpenModel) -> QTreeWidgetItem | None:
        return next((item for item in self._items() if self.model_of(item) is model), None)

    def find(self, path: str) -> OpenModel | None:
        resolved = str(Path(path).resolve())
        return next((m for m in self.models() if m.path == resolved), None)

    def add(self, model: OpenModel) -> QTreeWidgetItem:
        item = QTreeWidgetItem([model.label, "reading…"])
        item.setData(0, ROLE, model)
        item.setToolTip(0, plain(model.path))
        parent_item = self.item_for(model.parent) if model.parent is not None else None
        if parent_item is not None:
            parent_item.addChild(item)
            parent_item.setExpanded(True)
        else:
            self.addTopLevelItem(item)
        return item

    def refresh(self, model: OpenModel) -> None:
        item = self.item_for(model)
        if item is None:
            return
        item.setText(0, list_text(model))
        item.setText(1, "reading…" if model.summary is None else human_bytes(model.summary.get("total_bytes")))

    def remove(self, model: OpenModel) -> None:
        item = self.item_for(model)
        if item is None:
            return
        parent = item.parent()
        if parent is not None:
            parent.removeChild(item)
        else:
            self.takeTopLevelItem(self.indexOfTopLevelItem(item))

    def select(self, model: OpenModel) -> None:
        item = self.item_for(model)
        if item is not None:
            self.setCurrentItem(item)

    def select_many(self, models: list[OpenModel]) -> None:
        """Select these models; the last becomes the current one."""
        items = [item for item in map(self.item_for, models) if item is not None]
        if items:
            self.setCurrentItem(items[-1])
            for item in items:
                item.setSelected(True)

    def current(self) -> OpenModel | None:
        return self.model_of(self.currentItem())

    def selected(self) -> list[OpenModel]:
        return [self.model_of(item) for item in self.selectedItems()]
