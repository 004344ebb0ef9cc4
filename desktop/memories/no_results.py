"""What the memory list says when a search or a filter finds nothing."""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QLabel, QTableView

from desktop.memories.filters import FilterBar
from desktop.memories.model import IdListModel


class NoResults(QLabel):
    """A centred note over an empty memory list, with a link that clears the search.

    A list that is empty with no search and no filter is the group's empty state
    (another page), so this note shows only while a search or a filter is set.

    Args:
        table: the memory table; the note sits on its viewport.
        filters: the filter bar whose search and filters it describes and clears.
    """

    def __init__(self, table: QTableView, filters: FilterBar) -> None:
        super().__init__(table.viewport())
        self.setObjectName("noResults")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self._table = table
        self._filters = filters
        model = table.model()
        assert isinstance(model, IdListModel)
        self._model = model
        self._pending = False
        for signal in (model.modelReset, model.rowsInserted, model.rowsRemoved):
            signal.connect(self.update_shown)
        self.linkActivated.connect(lambda _link: filters.clear_all())
        table.viewport().installEventFilter(self)
        self.hide()

    def set_pending(self, pending: bool) -> None:
        """Whether a ranking by meaning is still looking (the note says so meanwhile)."""
        self._pending = pending
        self.update_shown()

    def update_shown(self, *_args: object) -> None:
        query = self._filters.query()
        if self._model.rowCount() or query.is_default:
            self.hide()
            return
        if self._pending:
            self.setText(
                "<p style='font-size: 15px; font-weight: 600'>No memories share these words</p>"
                "<p>Looking for memories close in meaning…</p>"
            )
            self._place()
            self.show()
            return
        # One word that matches nothing is more often misspelt than too narrow.
        hint = "Check the spelling" if len(query.text.split()) == 1 else "Try fewer words"
        self.setText(
            f"<p style='font-size: 15px; font-weight: 600'>No memories match "
            f"{html.escape(query.describe())}</p>"
            f"<p>{hint}, another filter, or "
            "<a href='clear'>clear the search and filters</a>.</p>"
        )
        self._place()
        self.show()

    def _place(self) -> None:
        self.setGeometry(self._table.viewport().rect().adjusted(24, 24, -24, -24))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self._place()
        return super().eventFilter(watched, event)
