"""The brief preview: exactly the markdown an agent receives, rendered or raw,
beside the memories behind its lines and the ones its limits left out.

The brief is built by the same service call the agent protocol uses (without
the audit row), so what is shown here is what an agent gets. Its limits are
the person's settings: changing them here saves them and applies them to the
agent socket at once.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.model.changes import Changes
from core.model.config import BOUNDS, Config
from core.model.errors import AmbryError
from core.recall.brief import BriefLimit, MemoryBrief
from desktop.brief.memory_list import BriefMemories
from desktop.memories.actions import MemoryActions
from desktop.widgets import messages
from desktop.widgets.flow import FlowLabel, FlowLayout
from desktop.widgets.lazy_page import LazyPage
from desktop.widgets.markdown import render_markdown
from desktop.widgets.watch import AppState

#: Spin box edits within this interval are saved once.
SAVE_DELAY_MS = 300

_DOCUMENT_CSS = """
h2 { font-size: 15pt; margin-bottom: 4px; }
h3 { font-size: 12pt; margin-top: 14px; margin-bottom: 4px; }
blockquote { color: #7a5a00; background: #fff7e0; margin: 4px 0; padding: 4px 8px; }
li { margin-bottom: 3px; }
p { margin: 4px 0; }
"""


def limit_name(limit: BriefLimit) -> str:
    match limit:
        case BriefLimit.MAX_ENTRIES:
            return "the entry limit"
        case BriefLimit.MAX_CHARS:
            return "the character limit"
        case BriefLimit.TOKEN_BUDGET:
            return "the token budget"


def counts_text(brief: MemoryBrief) -> str:
    text = (
        f"{brief.brief_count:,} of {brief.entry_count:,} memories  ·  "
        f"{brief.char_count:,} characters  ·  ~{brief.token_estimate:,} tokens"
    )
    if brief.truncated_by is not None:
        text += f"  ·  cut short by {limit_name(brief.truncated_by)}"
    return text


#: The brief limits this view edits in place: setting name, label.
LIMIT_FIELDS: tuple[tuple[str, str], ...] = (
    ("max_brief_entries", "Max entries"),
    ("max_brief_chars", "Max characters"),
    ("brief_token_budget", "Token budget"),
)


class BriefPage(LazyPage):
    """Shows the current group's brief with its counts and adjustable limits.

    Args:
        state: the shared app state.
        commands: the memory list's commands (pin, delete and their undo).
        parent: the parent widget.

    Signals:
        rendered(object): the :class:`MemoryBrief` now shown.
        open_requested(str, str): show an item on its page: ``("memory", id)``.
    """

    rendered = Signal(object)
    open_requested = Signal(str, str)

    def __init__(
        self, state: AppState, commands: MemoryActions, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._state = state
        self.brief: MemoryBrief | None = None
        # Wraps rather than widening the page past a small window.
        self.counts = FlowLabel(self)
        self.counts.setObjectName("counts")
        self.raw_toggle = QCheckBox("Raw markdown", self)
        self.copy_button = QPushButton("Copy", self)
        self.copy_button.setToolTip("Copy the brief's markdown")
        self.refresh_button = QPushButton("Refresh", self)

        self.spins: dict[str, QSpinBox] = {}
        # Each label stays with its box; a narrow page puts the pairs on more rows.
        limits = FlowLayout(spacing=12)
        for name, label in LIMIT_FIELDS:
            spin = QSpinBox(self)
            spin.setObjectName(name)
            low, high = BOUNDS[name]
            spin.setRange(int(low), int(high))
            spin.setSingleStep(1 if name == "max_brief_entries" else 100)
            spin.setGroupSeparatorShown(True)
            spin.setAccessibleName(label)
            self.spins[name] = spin
            pair = QHBoxLayout()
            pair.addWidget(QLabel(label, self))
            pair.addWidget(spin)
            limits.addLayout(pair)

        actions = QHBoxLayout()
        actions.addWidget(self.raw_toggle)
        actions.addWidget(self.copy_button)
        actions.addWidget(self.refresh_button)
        # The buttons go under the counts, together, when both do not fit on one row.
        top = FlowLayout()
        top.addWidget(self.counts)
        top.addStretch()
        top.addLayout(actions)

        self.rendered_view = QTextBrowser(self)
        self.rendered_view.setObjectName("briefRendered")
        self.rendered_view.setAccessibleName("Brief")
        self.rendered_view.setOpenLinks(False)
        self.rendered_view.document().setDefaultStyleSheet(_DOCUMENT_CSS)
        self.raw_view = QPlainTextEdit(self)
        self.raw_view.setObjectName("briefRaw")
        self.raw_view.setAccessibleName("Brief as Markdown")
        self.raw_view.setReadOnly(True)
        self.raw_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.rendered_view)
        self.stack.addWidget(self.raw_view)

        self.memory_list = BriefMemories(commands, self)
        self.memory_list.open_requested.connect(lambda i: self.open_requested.emit("memory", i))
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.stack)
        self.splitter.addWidget(self.memory_list)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(limits)
        layout.addWidget(self.splitter, 1)

        self._save_timer = QTimer(self)
        self._save_timer.setSingleShot(True)
        self._save_timer.setInterval(SAVE_DELAY_MS)
        self._save_timer.timeout.connect(self._save_limits)
        self._show_limits(state.config)
        for spin in self.spins.values():
            spin.valueChanged.connect(lambda _v: self._save_timer.start())
        self.raw_toggle.toggled.connect(lambda raw: self.stack.setCurrentIndex(int(raw)))
        self.copy_button.clicked.connect(self.copy)
        self.refresh_button.clicked.connect(self.refresh)
        state.changed.connect(self._on_changes)
        state.config_changed.connect(self._on_config)
        state.group_changed.connect(lambda _g: self._invalidate())

    def _show_limits(self, config: Config) -> None:
        for name, spin in self.spins.items():
            spin.blockSignals(True)
            spin.setValue(int(getattr(config, name)))
            spin.blockSignals(False)

    def _save_limits(self) -> None:
        values = {name: spin.value() for name, spin in self.spins.items()}
        try:
            self._state.update_config(self._state.config.with_changes(**values))
        except AmbryError as exc:
            messages.report(exc)
            self._show_limits(self._state.config)

    def _on_config(self, config: Config) -> None:
        self._show_limits(config)
        self._invalidate()

    def _on_changes(self, changes: Changes) -> None:
        if changes.group == self._state.group and (
            changes.entries or changes.threads or changes.attachments
        ):
            self._invalidate()

    def refresh(self) -> None:
        self._begin_refresh()
        brief = self._state.service.build_brief(self._state.group, list_left_out=True)
        self.brief = brief
        self.counts.setText(counts_text(brief))
        self.raw_view.setPlainText(brief.markdown)
        bar = self.rendered_view.verticalScrollBar()
        position = bar.value()
        self.rendered_view.setHtml(render_markdown(brief.markdown))
        bar.setValue(position)
        self.memory_list.show_brief(brief)
        self.rendered.emit(brief)

    def copy(self) -> None:
        if self.brief is not None:
            QGuiApplication.clipboard().setText(self.brief.markdown)
            messages.info("Brief copied to the clipboard.")
