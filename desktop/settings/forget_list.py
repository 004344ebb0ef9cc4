"""The list of what a forget takes, kind by kind, as the person reads it before confirming.

Memories (as the memory list shows them: a private one readable, a secret
masked; each with its tags, by which a private or secret memory was found),
the earlier versions of those that are current again after (they do not hold
the topic), memories agents deleted that wait in the trash, the thread handoffs (which
versions go and which is current after) and session handoffs; conversation
turns and claims are counted, as ``ambry forget`` counts them.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem, QWidget

from core.continuity.forget_preview import ForgetPreview
from core.model.entries import MemoryEntry, Privacy
from core.model.text import plural
from desktop.memories.duplicates import one_line
from desktop.memories.values import is_locked, is_masked, status_label
from desktop.widgets.times import short_time

_KIND, _TEXT, _TAGS = range(3)
FOUND_BY_TAGS = "Private and secret memories are found by their tags: their text is not searched."


def memory_kind(entry: MemoryEntry) -> str:
    """``fact``, or ``fact, superseded`` for an old version (``candidate`` in review)."""
    status = status_label(entry).split(" · ")[0]
    return entry.type.value if status in ("active", "stale") else f"{entry.type.value}, {status}"


class ForgetList(QTreeWidget):
    """A section per kind of thing a forget takes, its title counting them.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("forgetList")
        self.setHeaderHidden(True)
        self.setColumnCount(3)
        self.setRootIsDecorated(False)
        self.setItemsExpandable(False)
        self.setUniformRowHeights(True)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(_TEXT, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(_KIND, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(_TAGS, QHeaderView.ResizeMode.Interactive)
        self.setColumnWidth(_TAGS, 140)

    def show_preview(self, found: ForgetPreview) -> None:
        plan = found.plan
        self.clear()
        if plan.entries:
            head = self._section(plural(len(plan.entries), "memory", "memories"))
            for entry in plan.entries:
                self._memory_row(head, entry)
        if found.current_again:
            head = self._section(
                plural(len(found.current_again), "earlier version", "earlier versions")
                + " without the topic, current again after"
            )
            for entry in found.current_again:
                self._memory_row(head, entry)
        if found.trashed:
            head = self._section(
                plural(len(found.trashed), "memory", "memories") + " agents deleted, in the trash"
            )
            for item in found.trashed:
                text = f"a secret {item.type}" if item.privacy == Privacy.SECRET else item.preview
                row = self._row(head, item.type, text, ", ".join(item.tags))
                if item.privacy != Privacy.PUBLIC:
                    row.setToolTip(_TAGS, FOUND_BY_TAGS)
        if found.handoffs:
            versions = plural(len(plan.handoff_versions), "version")
            head = self._section(f"{versions} of {plural(len(found.handoffs), 'thread handoff')}")
            for fate in found.handoffs:
                go = "goes" if len(fate.versions) == 1 else "go"
                self._row(head, "handoff", f"{fate.title}: {fate.gone} {go}; {fate.outcome}")
        if found.session_notes:
            head = self._section(plural(len(found.session_notes), "session handoff"))
            for going in found.session_notes:
                note, where = going.note, going.thread_title or "no thread"
                said = " ".join(note.markdown.split())
                text = f"{where}, {short_time(note.created_at)}: {said}"
                self._row(head, "session handoff", text)
        if plan.thread_titles:
            head = self._section(plural(len(plan.thread_titles), "thread title") + " retitled")
            for thread_id, title in plan.thread_titles:
                self._row(head, "thread", f"{title} becomes Untitled {thread_id}")
        if plan.speaker_names:
            head = self._section(
                plural(len(plan.speaker_names), "speaker name") + " taken off the turns that stay"
            )
            for name in plan.speaker_names:
                self._row(head, "speaker", name)
        if plan.turn_labels:
            self._section(plural(len(plan.turn_labels), "turn label") + " taken off")
        if plan.exchange_ids:
            head = self._section(plural(len(plan.exchange_ids), "conversation turn"))
            for turn in found.turns:
                where = turn.thread_title or "no thread"
                said = " ".join(turn.text.split())
                self._row(head, "turn", f"{where}, {turn.name or turn.speaker}: {said}")
            if len(plan.exchange_ids) > len(found.turns):
                more = plural(len(plan.exchange_ids) - len(found.turns), "more turn")
                self._row(head, "", f"and {more}")
        if plan.claim_ids:
            self._section(plural(len(plan.claim_ids), "claim") + " stating it or quoting what goes")
        self.expandAll()

    def _section(self, title: str) -> QTreeWidgetItem:
        head = QTreeWidgetItem(self)
        head.setText(0, title)
        head.setFirstColumnSpanned(True)
        head.setFlags(Qt.ItemFlag.ItemIsEnabled)
        bold = head.font(0)
        bold.setBold(True)
        head.setFont(0, bold)
        return head

    def _row(self, head: QTreeWidgetItem, kind: str, text: str, tags: str = "") -> QTreeWidgetItem:
        row = QTreeWidgetItem(head)
        row.setText(_KIND, kind)
        row.setText(_TEXT, text)
        row.setToolTip(_TEXT, text)
        row.setText(_TAGS, tags)
        row.setToolTip(_TAGS, tags)
        return row

    def _memory_row(self, head: QTreeWidgetItem, entry: MemoryEntry) -> None:
        row = self._row(head, memory_kind(entry), one_line(entry), ", ".join(entry.tags))
        if not (is_masked(entry) or is_locked(entry)):
            row.setToolTip(_TEXT, entry.content)
        if entry.privacy is not Privacy.PUBLIC:
            row.setToolTip(_TAGS, FOUND_BY_TAGS)

    def listed(self) -> dict[str, list[list[str]]]:
        """What is on screen: each section's title, and its rows' columns."""
        heads = (self.topLevelItem(n) for n in range(self.topLevelItemCount()))
        return {
            head.text(0): [
                [row.text(c) for c in range(3)]
                for row in (head.child(k) for k in range(head.childCount()))
                if row is not None
            ]
            for head in heads
            if head is not None
        }
