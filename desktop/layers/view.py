"""Layers: a thread's conversation as the agent sees it today, and what faded.

The tree lists the thread's history by layer (Flash turns verbatim; Warm,
Recent weeks 1-4 and Archive day summaries; the week and month rollups). The
pane beside it shows the selected summary with the points its layer still
shows and those that faded, its source turns, and its links: one click on a
link opens its target (a summary here, a memory's text in the pane).
"""

from __future__ import annotations

import html
import json
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.continuity.threads import list_threads
from core.layers.links import describe, edges_from
from core.layers.timeline import Timeline, timeline
from core.model.changes import Changes
from core.model.entries import utc_now
from core.model.text import plural
from desktop.widgets.lazy_page import LazyPage
from desktop.widgets.times import short_time
from desktop.widgets.watch import AppState

_ID = Qt.ItemDataRole.UserRole
_GROUPS = (
    ("flash", "Flash · last 48 hours, verbatim"),
    ("warm", "Warm · 2–7 days: summary and quotes"),
    ("recent-1", "Recent week 1 · hook and 3 points"),
    ("recent-2", "Recent week 2 · hook and 2 points"),
    ("recent-3", "Recent week 3 · hook and 1 point"),
    ("recent-4", "Recent week 4 · hook only"),
    ("archive", "Archive · hook and a pointer to the turns"),
    ("rollups", "Weeks and months"),
)
#: The pane beside the tree before anything is selected.
_HINT = (
    "<p style='color:gray'>Select a turn or a summary. For a summary this shows the "
    "points the agent is still shown at its age, those that faded, its key quotes and "
    "the turns it came from; its links to other summaries and memories are listed "
    "below, one click away.</p>"
)


class LayersPage(LazyPage):
    """One thread's layers, with links one click away.

    Args:
        state: the shared app state.
        parent: the parent widget.
    """

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self._items: dict[str, QTreeWidgetItem] = {}
        #: The person chose a thread in the box: a reload keeps it, whatever it holds.
        self._picked = False
        #: How many threads of the group hold turns (as the box was last filled).
        self._threads_with_turns = 0
        self.thread_box = QComboBox(self)
        self.thread_box.setAccessibleName("Thread")
        self.compress_button = QPushButton("Compress now", self)
        self.compress_button.setToolTip("Run a compression pass in the background")
        self.status = QLabel(self)
        self.status.setObjectName("muted")
        self.status.setWordWrap(True)  # the counts take two lines in a narrow window
        # Its height follows its width: all its lines, not one and a cut.
        self.status.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("layersTree")
        self.tree.setAccessibleName("Layers")
        self.tree.setHeaderLabels(["Layer", "When", "What"])
        # The columns share the tree's width, so "What" is never pushed past its edge
        # in a narrow window; a cut id or hook is whole in its tooltip.
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.detail = QTextBrowser(self)
        self.detail.setObjectName("layersDetail")
        self.detail.setAccessibleName("Layer details")
        self.links = QListWidget(self)
        self.links.setObjectName("layersLinks")
        self.links.setAccessibleName("Links")
        top = QHBoxLayout()
        top.addWidget(QLabel("Thread:", self))
        top.addWidget(self.thread_box, 1)
        top.addWidget(self.compress_button)
        side = QWidget(self)
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.addWidget(self.detail, 3)
        side_layout.addWidget(QLabel("Links (click to open)", side))
        side_layout.addWidget(self.links, 1)
        split = QSplitter(self)
        split.addWidget(self.tree)
        split.addWidget(side)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(split, 1)
        self.thread_box.activated.connect(self._on_pick)
        self.tree.currentItemChanged.connect(self._on_current)
        self.links.itemClicked.connect(self._on_link)
        self.compress_button.clicked.connect(self._compress)
        state.changed.connect(self._on_changes)
        state.group_changed.connect(self._on_group)

    # -- loading -----------------------------------------------------------------

    def _on_pick(self, _index: int) -> None:
        self._picked = True
        self._invalidate(reload=True)

    def _on_group(self, _group: str) -> None:
        self._picked = False
        self.thread_box.clear()  # the other group's threads are not this one's
        self._invalidate(reload=True)

    def _thread_id(self) -> str | None:
        value = self.thread_box.currentData()
        return value if isinstance(value, str) and value else None

    def _fill_threads(self) -> None:
        """The group's threads in the box, most recently active first.

        Until the person picks one, the box shows the most recently active thread
        that holds turns: "No thread" only when none does, rather than an empty
        view beside threads full of turns.
        """
        current = self._thread_id()
        self.thread_box.clear()
        self.thread_box.addItem("No thread (turns filed under none)", "")
        threads = list_threads(self._state.service, self._state.group, 200)
        for t in threads:
            self.thread_box.addItem(t.title, t.id)
        with_turns = [t.id for t in threads if t.exchange_count]
        self._threads_with_turns = len(with_turns)
        if not self._picked and current is None and with_turns:
            current = with_turns[0]
        index = self.thread_box.findData(current or "")
        self.thread_box.setCurrentIndex(max(0, index))

    def refresh(self) -> None:
        if self._begin_refresh():
            self._fill_threads()
        store = self._state.service.store_for(self._state.group)
        view = timeline(store, self._thread_id(), utc_now())
        selected = self.selected_id()
        self._fill_tree(view)
        counts = view.counts()
        last = short_time(view.last_pass) if view.last_pass else "never"
        if any(counts.values()):
            self.status.setText(
                f"{plural(counts['flash'], 'turn')} in Flash, "
                f"{plural(counts['warm'], 'summary', 'summaries')} in Warm, "
                f"{sum(counts[f'recent-{i}'] for i in range(1, 5))} in Recent, "
                f"{counts['archive']} in Archive. Last compression: {last}."
                + (
                    " Summaries wait to be drawn again (a rebuild stopped part way): "
                    "Compress now finishes it."
                    if view.redraw_pending
                    else ""
                )
            )
        else:
            held = self._threads_with_turns
            elsewhere = ""
            if self._thread_id() is None and held:
                which = "it" if held == 1 else "one"
                elsewhere = (
                    f" {plural(held, 'thread')} of this group "
                    f"{'holds' if held == 1 else 'hold'} turns: pick {which} above."
                )
            elif self._thread_id() is None and self.thread_box.count() > 1:
                elsewhere = " Turns of a thread are under its name: pick it above."
            self.status.setText(
                "No turns here yet. An agent's turns show in Flash, then each day is "
                f"summarised into the layers below as it ages.{elsewhere}"
            )
        self.compress_button.setEnabled(self._state.service.layers is not None)
        if selected in self._items:
            self.tree.setCurrentItem(self._items[selected])
        elif self.tree.currentItem() is None:
            self.detail.setHtml(_HINT)

    def _fill_tree(self, view: Timeline) -> None:
        self.tree.clear()
        self._items = {}
        groups: dict[str, QTreeWidgetItem] = {}
        for key, label in _GROUPS:
            groups[key] = QTreeWidgetItem(self.tree, [label])
            groups[key].setFlags(Qt.ItemFlag.ItemIsEnabled)
            # A layer's name and what it keeps takes the row's whole width.
            groups[key].setFirstColumnSpanned(True)
        for turn in view.flash_turns:
            who = turn["name"] or turn["speaker"]
            turn_item = QTreeWidgetItem(
                groups["flash"], [f"#{turn['id']} {who}", short_time(turn["at"]), turn["text"]]
            )
            turn_item.setToolTip(2, turn["text"])
        for day in view.days:
            if day["layer"] == "flash":
                continue
            self._add(groups[day["layer"]], day, day["period"])
        for rollup in view.rollups:
            self._add(groups["rollups"], rollup, f"{rollup['level']} {rollup['period']}")
        for key, item in groups.items():
            item.setText(0, f"{dict(_GROUPS)[key]} ({item.childCount()})")
            item.setExpanded(key != "rollups" and item.childCount() <= 30)

    def _add(self, parent: QTreeWidgetItem, summary: dict[str, Any], when: str) -> None:
        item = QTreeWidgetItem(parent, [summary["id"], when, summary["hook"]])
        item.setData(0, _ID, summary["id"])
        item.setToolTip(0, summary["id"])
        item.setToolTip(2, summary["hook"])
        self._items[summary["id"]] = item

    # -- the selected summary ----------------------------------------------------

    def selected_id(self) -> str | None:
        item = self.tree.currentItem()
        value = None if item is None else item.data(0, _ID)
        return value if isinstance(value, str) else None

    def select(self, node_id: str) -> bool:
        """Open ``node_id``: a summary is selected in the tree, a memory shown in the pane."""
        if node_id in self._items:
            self.tree.setCurrentItem(self._items[node_id])
            self.tree.scrollToItem(self._items[node_id])
            return True
        found = describe(self._state.service, self._state.group, [node_id]).get(node_id)
        if found is None:
            self.detail.setHtml(f"<p>{html.escape(node_id)} no longer exists.</p>")
            return False
        if found["kind"] == "memory":
            self.detail.setHtml(
                f"<h3>Memory {html.escape(node_id)}</h3><p>[{found['type']}] "
                f"{html.escape(found['content'])}</p>"
            )
        else:
            self.detail.setHtml(
                f"<h3>{html.escape(found['level'])} {html.escape(found['period'])}</h3>"
                f"<p>{html.escape(found['hook'])}</p><p>(in another thread)</p>"
            )
        self._fill_links(node_id)
        return True

    def _on_current(self, item: QTreeWidgetItem | None, _previous: object) -> None:
        node_id = None if item is None else item.data(0, _ID)
        if not isinstance(node_id, str):
            self.detail.setHtml(_HINT if item is None else f"<p>{html.escape(item.text(2))}</p>")
            self.links.clear()
            return
        self.detail.setHtml(self._summary_html(node_id))
        self._fill_links(node_id)

    def _summary_html(self, node_id: str) -> str:
        store = self._state.service.store_for(self._state.group)
        row = store.execute(
            "SELECT level, period, hook, points, quotes, keywords, turn_count, start_at, end_at "
            "FROM layer_summaries WHERE id = ?",
            (node_id,),
        ).fetchone()
        if row is None:
            return f"<p>{html.escape(node_id)} was rebuilt or removed; refresh.</p>"
        item = self._items.get(node_id)
        parent = item.parent() if item else None
        layer = parent.data(0, Qt.ItemDataRole.DisplayRole) if parent else ""
        shown = {"recent-1": 3, "recent-2": 2, "recent-3": 1}
        key = next((k for k, label in _GROUPS if layer.startswith(label)), "warm")
        keep = shown.get(key, 0 if key in ("recent-4", "archive") else 5)
        points = json.loads(row[3])
        parts = [
            f"<h3>{html.escape(row[0])} {html.escape(row[1])}</h3>",
            f"<p><b>{html.escape(row[2])}</b></p>",
            f"<p>{row[6]} turns, {html.escape(short_time(row[7]))} – "
            f"{html.escape(short_time(row[8]))}</p>",
        ]
        if points[:keep]:
            parts.append("<p>Shown to the agent:</p><ul>")
            parts += [f"<li>{html.escape(p)}</li>" for p in points[:keep]]
            parts.append("</ul>")
        if points[keep:]:
            parts.append("<p style='color:gray'>Faded (kept, not shown at this age):</p><ul>")
            parts += [f"<li style='color:gray'>{html.escape(p)}</li>" for p in points[keep:]]
            parts.append("</ul>")
        quotes = json.loads(row[4])
        if quotes:
            parts.append("<p>Key quotes:</p><ul>")
            parts += [f"<li>“{html.escape(q)}”</li>" for q in quotes]
            parts.append("</ul>")
        parts.append(f"<p>Keywords: {html.escape(', '.join(json.loads(row[5])[:8]))}</p>")
        return "".join(parts)

    def _fill_links(self, node_id: str) -> None:
        self.links.clear()
        store = self._state.service.store_for(self._state.group)
        edges = edges_from(store, node_id)
        info = describe(self._state.service, self._state.group, [e.dst for e in edges])
        for edge in edges:
            target = info.get(edge.dst, {})
            text = target.get("hook") or target.get("content") or ""
            label = f"{edge.reason} ({edge.strength}) → {edge.dst}: {text[:90]}"
            item = QListWidgetItem(label, self.links)
            item.setData(_ID, edge.dst)

    def _on_link(self, item: QListWidgetItem) -> None:
        target = item.data(_ID)
        if isinstance(target, str):
            self.select(target)

    # -- changes -----------------------------------------------------------------

    def _on_changes(self, changes: Changes) -> None:
        if changes.group == self._state.group and (changes.threads or changes.entries):
            self._invalidate()

    def _compress(self) -> None:
        worker = self._state.service.layers
        if worker is None:
            return
        store = self._state.service.store_for(self._state.group)
        worker.wake(store.path, self._state.group, force=True)
        self.status.setText("Compressing in the background…")
        # The pass runs on the worker's thread; look again once it has had time.
        QTimer.singleShot(1500, lambda: self._invalidate())
