"""The version chain of a memory: every edit is a new entry that supersedes the last.

The dialog lists the versions, shows what any of them changed (or how it
differs from the current one) word by word, and restores one. A restore never
rewrites history: the old version's type, text, tags and privacy are saved as a
new version on top, so a restore is itself one more step in the chain.

A forget or a clear (in the app, or ``ambry forget`` in a terminal) that takes any
version of the chain empties the dialog: no word of a forgotten version stays on
screen, and it says why.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Callable, Sequence

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.model.entries import MemoryEntry
from desktop.memories.actions import MemoryActions
from desktop.memories.values import (
    Draft,
    is_locked,
    is_masked,
    local_time,
    source_name,
    source_text,
)
from desktop.widgets import messages
from desktop.widgets.version_diff import Compare, VersionDiffPane
from desktop.widgets.watch import Forgetting

_WORDS = re.compile(r"\s+|[^\s]+")


def word_diff_html(old: str, new: str) -> str:
    """``new`` with the words it added and the words of ``old`` it dropped marked (escaped)."""
    a, b = _WORDS.findall(old), _WORDS.findall(new)
    parts: list[str] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op in ("delete", "replace"):
            parts.append(f"<span class='del'><s>{html.escape(''.join(a[i1:i2]))}</s></span>")
        if op in ("insert", "replace"):
            parts.append(f"<span class='add'>{html.escape(''.join(b[j1:j2]))}</span>")
        if op == "equal":
            parts.append(html.escape("".join(a[i1:i2])))
    return "".join(parts).replace("\n", "<br/>")


def field_changes(old: MemoryEntry, new: MemoryEntry) -> list[str]:
    """What changed besides the text, in words: type, privacy, tags added and removed."""
    changes = []
    if old.type is not new.type:
        changes.append(f"type {old.type.value} → {new.type.value}")
    if old.privacy is not new.privacy:
        changes.append(f"privacy {old.privacy.value} → {new.privacy.value}")
    added = [t for t in new.tags if t not in old.tags]
    removed = [t for t in old.tags if t not in new.tags]
    if added:
        changes.append("tags added: " + ", ".join(added))
    if removed:
        changes.append("tags removed: " + ", ".join(removed))
    return changes


def hidden(entry: MemoryEntry) -> bool:
    return is_masked(entry) or is_locked(entry)


def version_html(entry: MemoryEntry, number: int) -> str:
    """The header of one version: type, when, state, source, tags, id (escaped)."""
    state = (
        "current" if entry.superseded_by is None else f"replaced {local_time(entry.superseded_at)}"
    )
    tags = ", ".join(entry.tags) or "no tags"
    return (
        f"<h3>Version {number}</h3>"
        f"<p class='meta'><b>{html.escape(entry.type.value)}</b> · "
        f"{html.escape(local_time(entry.provenance.created_at))} · {html.escape(state)}<br/>"
        f"<small>{html.escape(source_text(entry))} · {html.escape(tags)} · "
        f"{html.escape(entry.id)}</small></p>"
    )


def compare_html(old: MemoryEntry | None, new: MemoryEntry, label: str) -> str:
    """How ``new`` differs from ``old`` (or ``new``'s text alone when there is no ``old``)."""
    if old is None:
        if hidden(new):
            return f"<p class='hint'>{html.escape(new.content)}</p>"
        return "<p>" + html.escape(new.content).replace("\n", "<br/>") + "</p>"
    parts = [f"<p class='hint'>{html.escape(label)}</p>"]
    changes = field_changes(old, new)
    if changes:
        parts.append("<p>" + html.escape("; ".join(changes)) + "</p>")
    if hidden(old) or hidden(new):
        parts.append(
            "<p class='hint'>The text of a secret version is not compared here; "
            "reveal the memory to read it.</p>"
        )
    elif old.content == new.content:
        parts.append("<p class='hint'>Same text.</p>")
        parts.append("<p>" + html.escape(new.content).replace("\n", "<br/>") + "</p>")
    else:
        parts.append("<p>" + word_diff_html(old.content, new.content) + "</p>")
    return "".join(parts)


class HistoryDialog(QDialog):
    """Every version through one entry, newest first, with a diff and restore.

    Args:
        group: the group the memory is in.
        chain: the versions, oldest first (``MemoryService.history``).
        selected: the id the person opened it from (selected first).
        commands: reads a secret version's text for a restore, without showing it.
        save: stores a draft as a new version on top of an entry (the page's save).
        parent: the parent widget.
    """

    def __init__(
        self,
        group: str,
        chain: Sequence[MemoryEntry],
        selected: str,
        commands: MemoryActions,
        save: Callable[[MemoryEntry | None, Draft], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._group = group
        self._chain = list(chain)
        self._commands = commands
        self._save = save
        count = len(self._chain)
        self.setWindowTitle(f"History: {count} version" + ("s" if count != 1 else ""))
        self.resize(760, 480)
        self.versions = QListWidget(self)
        self.versions.setAccessibleName("Versions")
        self.versions.setSpacing(3)
        for number, entry in reversed(list(enumerate(self._chain, start=1))):
            state = "current" if entry.superseded_by is None else "replaced"
            when = local_time(entry.provenance.created_at)
            who = source_name(entry.source.type)  # who wrote it: you, an agent, the web…
            item = QListWidgetItem(
                f"Version {number} · {state}\n{entry.type.value} · {who} · {when}"
            )
            item.setData(Qt.ItemDataRole.UserRole, number - 1)
            self.versions.addItem(item)
        self.pane = VersionDiffPane(
            "memoryDiff", "Save this version again as the newest (asks first)", self
        )
        self.compare_box = self.pane.compare_box
        self.restore_button = self.pane.restore_button
        self.view = self.pane.view
        # As wide as its longest line ("instruction · an agent · 2026-11-25 07:08"),
        # never scrolled sideways; the diff takes the rest.
        self.versions.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        lines = (
            self.versions.sizeHintForColumn(0)
            + 2 * (self.versions.spacing() + self.versions.frameWidth())
            + self.versions.verticalScrollBar().sizeHint().width()
        )
        self.versions.setMinimumWidth(lines)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(self.versions)
        splitter.addWidget(self.pane)
        splitter.setChildrenCollapsible(False)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([lines, 760 - lines])
        #: Says why the dialog is empty once a forget took versions of the memory.
        self.gone = QLabel(self)
        self.gone.setObjectName("warningLabel")
        self.gone.setWordWrap(True)
        self.gone.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.gone)
        layout.addWidget(splitter, 1)
        layout.addWidget(buttons)

        self.versions.currentRowChanged.connect(self._show)
        self.compare_box.currentIndexChanged.connect(self._show)
        self.restore_button.clicked.connect(self.restore)
        start = next((i for i, e in enumerate(self._chain) if e.id == selected), count - 1)
        self.select_version(start + 1)

    def select_version(self, number: int) -> None:
        """Show version ``number`` (1 is the oldest)."""
        self.versions.setCurrentRow(len(self._chain) - number)

    def chosen(self) -> MemoryEntry | None:
        item = self.versions.currentItem()
        return None if item is None else self._chain[int(item.data(Qt.ItemDataRole.UserRole))]

    def _head(self) -> MemoryEntry | None:
        return self._chain[-1] if self._chain else None

    def _show(self, *_args: object) -> None:
        chosen = self.chosen()
        if chosen is None:
            self.view.clear()
            self.restore_button.setEnabled(False)
            return
        index = self._chain.index(chosen)
        head = self._chain[-1]
        self.restore_button.setEnabled(chosen is not head and head.superseded_by is None)
        body = version_html(chosen, index + 1)
        if self.compare_box.currentData() == Compare.CURRENT and chosen is not head:
            body += compare_html(chosen, head, f"From this version to version {len(self._chain)}:")
        elif index > 0 and self.compare_box.currentData() == Compare.PREVIOUS:
            body += compare_html(self._chain[index - 1], chosen, f"Changed from version {index}:")
        else:
            body += compare_html(None, chosen, "")
        self.view.setHtml(body)

    def drop_forgotten(self, erased: Forgetting) -> None:
        """A forget or a clear took versions of this memory: drop every version's
        words from the dialog (the list, the diff, what a restore would save) and
        say so. Versions left are read again by opening History again."""
        if erased.group != self._group:
            return
        taken = sum(1 for entry in self._chain if erased.took(entry.id))
        if not taken:
            return
        count = len(self._chain)
        how = "cleared" if erased.cleared else "forgotten"
        if taken == count:
            text = f"This memory was {how}: its versions are no longer shown."
        else:
            text = (
                f"{taken} of the {count} versions of this memory were {how}: no version "
                "is shown any more. Open History again to see the versions left."
            )
        self._chain = []
        with QSignalBlocker(self.versions):
            self.versions.clear()
        self.view.clear()
        self.compare_box.setEnabled(False)
        self.restore_button.setEnabled(False)
        self.setWindowTitle(f"History: {how}")
        self.gone.setText(text)
        self.gone.show()

    def restore(self) -> None:
        """Save the chosen version again on top of the current one, after asking."""
        chosen, head = self.chosen(), self._head()
        if chosen is None or head is None or chosen is head or head.superseded_by is not None:
            return
        number, last = self._chain.index(chosen) + 1, len(self._chain)
        question = (
            f"Make version {number} the current memory again? It is saved as version "
            f"{last + 1}; version {last} stays in the history."
        )
        if not messages.confirm(self, "Restore memory version", question, "Restore"):
            return
        content = self._commands.stored_text(chosen) if hidden(chosen) else chosen.content
        if content is None:
            return
        self._save(head, Draft(chosen.type, content, chosen.tags, chosen.privacy))
        self.accept()
