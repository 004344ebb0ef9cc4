"""Settings: where the data lives, export and import, limits, rates, search, forgetting,
the token.

Every field of :class:`core.model.config.Config` gets an editor here (the model
folder its own row, :mod:`desktop.settings.model_folder`); the values are
checked by ``core.model.config`` (the one place that knows the bounds), saved to
``config.json`` and applied to the running service, so the agent socket uses
them from its next call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import cast

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence, QResizeEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.agent import auth
from core.model.config import BOUNDS, Config
from core.model.errors import AmbryError
from core.service import MemoryService
from desktop.memories.action_texts import memories
from desktop.memories.state import BrowserQuery
from desktop.settings.appearance import WindowBox
from desktop.settings.data_view import DataPanel
from desktop.settings.model_folder import ModelFolderRow
from desktop.widgets import messages
from desktop.widgets.files import open_folder
from desktop.widgets.flow import FlowLayout
from desktop.widgets.keys import add_key
from desktop.widgets.ops import Executor
from desktop.widgets.watch import AppState

#: The brief's limits, also adjustable on the Brief page.
#: Sections of the form: title, then (field, label, help) rows.
SECTIONS: tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...] = (
    (
        "Brief",
        (
            ("max_brief_entries", "Max entries", "Most memories in one brief."),
            ("max_brief_chars", "Max characters", "Longest brief, in characters."),
            ("brief_token_budget", "Token budget", "Longest brief, in estimated tokens."),
            (
                "flash_token_budget",
                "Recent turns (tokens)",
                "Room in the brief for the last 48 hours' turns, verbatim (0: none).",
            ),
            (
                "warm_token_budget",
                "Recent sessions (tokens)",
                "Room in the brief for the summaries of the last 2 to 7 days (0: none).",
            ),
            (
                "include_private_in_brief",
                "Include private memories",
                "Secret memories never go in the brief.",
            ),
        ),
    ),
    (
        "Agent writes",
        (
            *(
                (
                    f"rate_{action}_per_{window}",
                    f"{action.capitalize()} per {window}",
                    "Most an agent (its token and client) may make in any rolling "
                    f"{window}, across its sessions.",
                )
                for action in (
                    "stores",
                    "supersedes",
                    "deletes",
                    "exchanges",
                    "handoffs",
                    "threads",
                )
                for window in ("hour", "day")
            ),
            (
                "trash_days",
                "Keep agent deletes in the trash (days)",
                "Restore them from the trash.",
            ),
            (
                "review_agent_writes",
                "Review every agent write",
                "Hold all agent writes in Review until you accept them.",
            ),
        ),
    ),
    (
        "Search",
        (
            (
                "recency_weight",
                "Recency weight",
                "How much being seen or said lately lifts a result (0: not at all).",
            ),
            (
                "recency_half_life_days",
                "Recency half-life (days)",
                "At this age a result gets half of the recency lift.",
            ),
        ),
    ),
    (
        "Forgetting",
        (
            ("purge_superseded_days", "Purge replaced versions after (days)", ""),
            (
                "decay_grace_days",
                "Decay starts after (days)",
                "Unseen this long, confidence drops.",
            ),
            ("decay_per_week", "Decay per week", "Confidence lost per unseen week."),
            ("stale_threshold", "Stale below confidence", "Stale memories leave the brief."),
            ("episodic_ttl_days", "Keep conversation turns (days)", ""),
        ),
    ),
)


Editor = QSpinBox | QDoubleSpinBox | QCheckBox


def _editor_value(editor: Editor) -> object:
    if isinstance(editor, QCheckBox):
        return editor.isChecked()
    if isinstance(editor, QDoubleSpinBox):
        return round(editor.value(), editor.decimals())
    return editor.value()


def _rounded_to(editor: Editor, value: object) -> object:
    """``value`` as ``editor`` can show it: a value it cannot show is not an edit."""
    if isinstance(editor, QCheckBox):
        return bool(value)
    if isinstance(editor, QDoubleSpinBox):
        return round(float(value), editor.decimals())  # type: ignore[arg-type]
    return value


class SettingsPage(QWidget):
    """Edits the person's settings and manages the agent token.

    Args:
        state: the shared app state.
        executor: background thread for slow maintenance (index rebuild).
        socket_path: the agent socket shown to the person.
        parent: the parent widget.
    """

    def __init__(
        self,
        state: AppState,
        executor: Executor,
        socket_path: Path,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._state = state
        self._executor = executor
        #: The settings last shown: what an edit is measured against.
        self._shown: Config = state.config
        #: Opening a folder goes through here so tests need no file manager.
        self.open_folder: Callable[[Path], None] = open_folder
        self.editors: dict[str, QSpinBox | QDoubleSpinBox | QCheckBox] = {}

        body = QWidget(self)
        grid = QGridLayout(body)
        grid.addWidget(self._data_box(body), 0, 0, 1, 2)
        self.data_panel = DataPanel(state, executor, body)
        grid.addWidget(self.data_panel, 1, 0, 1, 2)
        boxes = [self._config_box(title, rows, body) for title, rows in SECTIONS]
        search_box = boxes[[title for title, _ in SECTIONS].index("Search")]
        self.model_folder = ModelFolderRow(executor, lambda: state.group, search_box)
        cast(QFormLayout, search_box.layout()).addRow("Model folder", self.model_folder)
        boxes.append(self._token_box(socket_path, body))
        self.window_box = WindowBox(state.data_dir, body)
        boxes.append(self.window_box)
        self._grid, self._boxes, self._columns = grid, boxes, 0
        self._place_boxes(2)
        grid.setColumnStretch(0, 1)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        scroll.setObjectName("settingsScroll")
        scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # no empty Tab stop around the boxes

        self.save_button = QPushButton("Save settings", self)
        self.save_button.setObjectName("primary")
        self.revert_button = QPushButton("Revert", self)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.revert_button)
        buttons.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addWidget(scroll, 1)
        layout.addLayout(buttons)

        self.show_config(state.config)
        self.save_button.setToolTip("Save and apply the settings (Ctrl+S)")
        self.save_button.clicked.connect(self.save)
        add_key(self, QKeySequence.StandardKey.Save, self.save, "Save settings")
        self.revert_button.clicked.connect(lambda: self.show_config(self._state.config))
        state.config_changed.connect(lambda config: self.show_config(config, keep_edits=True))
        state.group_changed.connect(lambda _g: self._show_paths())

    # -- building ----------------------------------------------------------------

    def _data_box(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Data", parent)
        self.data_dir = QLineEdit(str(self._state.data_dir.root), box)
        self.data_dir.setReadOnly(True)
        self.data_dir.setAccessibleName("Data folder")
        self.group_file = QLabel(box)
        self.group_file.setObjectName("hint")
        self.open_button = QPushButton("Open folder", box)
        self.open_button.clicked.connect(lambda: self.open_folder(self._state.data_dir.root))
        self.rebuild_button = QPushButton("Rebuild search index", box)
        self.rebuild_button.setToolTip("Rebuild the derived search index from the memories")
        self.rebuild_button.clicked.connect(self.rebuild_index)
        self.group_file.setWordWrap(True)
        self.data_dir.setMinimumWidth(self.data_dir.fontMetrics().averageCharWidth() * 28)
        # Open folder goes under the path in a narrow window instead of off its edge.
        row = FlowLayout()
        row.addWidget(self.data_dir)
        row.addWidget(self.open_button)
        form = QFormLayout(box)
        form.addRow("Data folder", row)
        form.addRow("", self.group_file)
        form.addRow("", self.rebuild_button)
        self._show_paths()
        return box

    def _place_boxes(self, columns: int) -> None:
        """The settings boxes in ``columns`` columns, under the data boxes."""
        if columns == self._columns:
            return
        self._columns = columns
        grid = self._grid
        for box in self._boxes:
            grid.removeWidget(box)
        for row in range(grid.rowCount()):
            grid.setRowStretch(row, 0)
        for i, box in enumerate(self._boxes):
            grid.addWidget(box, 2 + i // columns, i % columns)
        grid.setRowStretch(2 + (len(self._boxes) - 1) // columns + 1, 1)
        grid.setColumnStretch(1, 1 if columns == 2 else 0)

    def resizeEvent(self, event: QResizeEvent) -> None:
        # Two columns of boxes where they fit side by side, else one: a small
        # screen scrolls down, never sideways.
        widest = max(box.minimumSizeHint().width() for box in self._boxes)
        room = event.size().width() - 60  # the page's and the scroll area's margins
        self._place_boxes(2 if room >= 2 * widest + self._grid.horizontalSpacing() else 1)
        super().resizeEvent(event)

    def _config_box(
        self, title: str, rows: tuple[tuple[str, str, str], ...], parent: QWidget
    ) -> QGroupBox:
        box = QGroupBox(title, parent)
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        defaults = Config()
        for name, label, help_text in rows:
            default = getattr(defaults, name)
            editor: QSpinBox | QDoubleSpinBox | QCheckBox
            if isinstance(default, bool):
                editor = QCheckBox(label, box)
                form.addRow("", editor)
            else:
                low, high = BOUNDS[name]
                if isinstance(default, float):
                    editor = QDoubleSpinBox(box)
                    editor.setDecimals(2)
                    editor.setSingleStep(0.05)
                    editor.setRange(low, high)
                else:
                    editor = QSpinBox(box)
                    editor.setRange(int(low), int(high))
                    editor.setGroupSeparatorShown(True)
                editor.setMinimumWidth(130)
                form.addRow(label, editor)
            editor.setObjectName(name)
            editor.setAccessibleName(label)
            if help_text:
                editor.setToolTip(help_text)
            self.editors[name] = editor
        return box

    def _token_box(self, socket_path: Path, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Agent socket", parent)
        socket_label = QLineEdit(str(socket_path), box)
        socket_label.setReadOnly(True)
        token_label = QLineEdit(str(self._state.data_dir.token_file), box)
        token_label.setReadOnly(True)
        copy_button = QPushButton("Copy token", box)
        copy_button.clicked.connect(self.copy_token)
        regenerate = QPushButton("Regenerate token…", box)
        regenerate.setObjectName("danger")
        regenerate.clicked.connect(self.regenerate_token)
        self.regenerate_button = regenerate
        row = QHBoxLayout()
        row.addWidget(copy_button)
        row.addWidget(regenerate)
        row.addStretch(1)
        form = QFormLayout(box)
        form.addRow("Socket", socket_label)
        form.addRow("Token file", token_label)
        form.addRow("", row)
        return box

    def _show_paths(self) -> None:
        path = self._state.data_dir.group_db(self._state.group)
        self.group_file.setText(f"Group {self._state.group!r}: {path}")

    # -- settings ----------------------------------------------------------------

    def show_config(self, config: Config, *, keep_edits: bool = False) -> None:
        """Show ``config``; with ``keep_edits`` (settings changed elsewhere), a value the
        person has edited and not saved stays as they left it."""
        edited = self._differing(self._shown) if keep_edits else set()
        if "embedding_model_dir" not in edited:
            self.model_folder.set_value(config.embedding_model_dir)
        for name, editor in self.editors.items():
            if name in edited:
                continue
            value = getattr(config, name)
            if isinstance(editor, QCheckBox):
                editor.setChecked(bool(value))
            else:
                editor.setValue(value)
        self._shown = config

    def _differing(self, config: Config) -> set[str]:
        """The settings whose editor holds another value than ``config``."""
        differing = {
            name
            for name, editor in self.editors.items()
            if _editor_value(editor) != _rounded_to(editor, getattr(config, name))
        }
        if self.model_folder.value() != config.embedding_model_dir:
            differing.add("embedding_model_dir")
        return differing

    def is_dirty(self) -> bool:
        """Whether an editor holds a value that is not the saved setting."""
        return bool(self._differing(self._state.config))

    def edited_config(self) -> Config:
        """The settings as edited, checked by core.model.config (raises InvalidParams)."""
        values: dict[str, object] = {"embedding_model_dir": self.model_folder.value()}
        values.update((name, _editor_value(editor)) for name, editor in self.editors.items())
        known = {f.name for f in dataclasses.fields(Config)}
        return self._state.config.with_changes(**{k: v for k, v in values.items() if k in known})

    def save(self) -> None:
        model_was = self._state.config.embedding_model_dir
        try:
            self._state.update_config(self.edited_config())
        except AmbryError as exc:
            messages.report(exc)
            return
        if self._state.config.embedding_model_dir != model_was:
            messages.info("Settings saved; embedding every memory with the new model.")
        else:
            messages.info("Settings saved; agents use them from their next call.")

    # -- token and maintenance ---------------------------------------------------

    def copy_token(self) -> None:
        try:
            token = auth.load_or_create_token(self._state.data_dir.token_file)
        except AmbryError as exc:
            messages.report(exc)
            return
        QGuiApplication.clipboard().setText(token)
        messages.info("Agent token copied to the clipboard.")

    def regenerate_token(self) -> None:
        if not messages.confirm(
            self,
            "Regenerate token",
            "Make a new agent token? Agents that connect later need the new one; "
            "sessions already open keep working.",
            "Regenerate",
        ):
            return
        try:
            auth.regenerate_token(self._state.data_dir.token_file)
        except AmbryError as exc:
            messages.report(exc)
            return
        messages.info("New agent token written; give it to your agents.")

    def rebuild_index(self) -> None:
        group = self._state.group
        self.rebuild_button.setEnabled(False)
        messages.info(f"Rebuilding the search index of {group!r}…")

        def done(counts: tuple[int, int]) -> None:
            self.rebuild_button.setEnabled(True)
            total, current = counts
            old = total - current
            kept = f", plus {old:,} old {'version' if old == 1 else 'versions'}" if old else ""
            messages.info(f"Search index rebuilt: {memories(current)} listed{kept}.")

        def failed(exc: BaseException) -> None:
            self.rebuild_button.setEnabled(True)
            if not isinstance(exc, AmbryError):
                raise exc
            messages.report(exc)

        def rebuild(service: MemoryService) -> tuple[int, int]:
            store = service.store_for(group)
            # Counted as the Memories list counts: old versions are not listed.
            return store.rebuild_index(), store.count(BrowserQuery().entry_filter())

        self._executor.submit(group, rebuild, done, failed)
