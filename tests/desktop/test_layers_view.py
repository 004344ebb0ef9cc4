"""The Layers view: a thread's history by layer, with links one click away."""

from __future__ import annotations

import os
import time
from datetime import timedelta

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.continuity.episodes import log_exchange
from core.layers.compression import compress
from core.model.changes import Changes
from core.model.entries import Actor, iso, parse_iso, utc_now
from core.service import MemoryService
from desktop.layers.view import LayersPage
from desktop.widgets.times import short_time
from desktop.widgets.watch import AppState

#: Set AMBRY_SCREENSHOT to a file name to keep a picture of the view.
SHOT = os.environ.get("AMBRY_SCREENSHOT", "")


def seed(service: MemoryService) -> None:
    now = utc_now()
    sessions = [
        (
            50,
            [
                "Please remember that the pottery class is on Thursdays.",
                "We decided to buy a kiln.",
            ],
        ),
        (
            16,
            ["The kiln at the studio broke last weekend.", "Let's call the repair shop on Monday."],
        ),
        (4, ["We are painting the nursery pale green this week."]),
        (0.1, ["Is the pottery studio open again?"]),
    ]
    for days, texts in sessions:
        agent = service.open_session("main", Actor.AGENT, "tests")
        for i, text in enumerate(texts):
            at = iso(now - timedelta(days=days) + timedelta(minutes=i))
            log_exchange(service, agent, "user", text, at=at)
    compress(service.store_for("main"), now)


def test_layers_view_shows_each_layer_and_opens_links(
    qtbot: QtBot, state: AppState, service: MemoryService
) -> None:
    seed(service)
    page = LayersPage(state)
    qtbot.addWidget(page)
    page.resize(1200, 700)
    page.show()
    qtbot.waitUntil(lambda: page.tree.topLevelItemCount() == 8)
    counts = [page.tree.topLevelItem(i).childCount() for i in range(8)]
    # flash turns, warm, recent-1..4, archive, then weeks and months
    assert counts[0] == 1 and counts[1] == 1 and counts[3] == 1 and counts[6] == 1
    assert counts[7] >= 3
    assert "Flash" in page.status.text() and "never" not in page.status.text()

    archive = page.tree.topLevelItem(6).child(0)
    page.tree.setCurrentItem(archive)
    assert "Faded" in page.detail.toPlainText()  # archive shows the hook only
    assert "pottery class is on Thursdays" in page.detail.toPlainText()
    assert page.links.count() >= 1
    week_link = next(
        page.links.item(i)
        for i in range(page.links.count())
        if "part_of" in page.links.item(i).text()
    )
    target = week_link.data(Qt.ItemDataRole.UserRole)
    rect = page.links.visualItemRect(week_link)
    qtbot.mouseClick(page.links.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: page.selected_id() == target)
    assert page.tree.currentItem().parent() is page.tree.topLevelItem(7)
    assert "week" in page.detail.toPlainText()
    page.grab().save(str(SHOT)) if SHOT else None


def test_times_are_local_and_short_and_the_pane_says_what_it_is_for(
    qtbot: QtBot, state: AppState, service: MemoryService
) -> None:
    seed(service)
    page = LayersPage(state)
    qtbot.addWidget(page)
    page.show()
    qtbot.waitUntil(lambda: page.tree.topLevelItemCount() == 8)
    # Nothing selected yet: the pane says what selecting shows, rather than nothing.
    assert "Select a turn or a summary" in page.detail.toPlainText()
    flash = page.tree.topLevelItem(0).child(0)
    turn_at = service.store_for("main").execute("SELECT said_at FROM exchanges ORDER BY seq DESC")
    said = parse_iso(turn_at.fetchone()[0]).astimezone()
    # The person's clock, as short as it can be, not a cut-off UTC stamp.
    assert flash.text(1) == short_time(iso(said)) and said.strftime("%H:%M") in flash.text(1)
    assert "T" not in flash.text(1)
    assert "T" not in page.status.text().split("Last compression:")[1]
    page.tree.setCurrentItem(page.tree.topLevelItem(6).child(0))
    assert "Z" not in page.detail.toPlainText().split("turns,")[1].split("\n")[0]


def test_an_empty_thread_says_what_will_be_here_and_layer_names_show_whole(
    qtbot: QtBot, state: AppState, service: MemoryService
) -> None:
    from core.continuity.threads import open_thread

    operator = service.open_session("main", Actor.OPERATOR)
    open_thread(service, operator, title="Trip planning")
    page = LayersPage(state)
    qtbot.addWidget(page)
    page.resize(1100, 700)
    page.show()
    qtbot.waitUntil(lambda: page.tree.topLevelItemCount() == 8)
    # Nothing logged outside the thread: the status says what will be here, and where to look.
    assert page.status.text().startswith("No turns here yet.")
    assert "pick it above" in page.status.text()
    # Each layer's row spans the tree, so "Archive · hook and a pointer to the turns" is whole.
    for i in range(page.tree.topLevelItemCount()):
        row = page.tree.topLevelItem(i)
        assert row.isFirstColumnSpanned()
        shown = page.tree.visualItemRect(row).width()
        assert page.tree.fontMetrics().horizontalAdvance(row.text(0)) < shown
    if SHOT:
        page.grab().save(SHOT.replace(".png", "-empty.png"))


def test_it_opens_on_the_latest_thread_that_holds_turns(
    qtbot: QtBot, state: AppState, service: MemoryService
) -> None:
    from core.continuity import context as continuity

    agent = service.open_session("main", Actor.AGENT, "tests")
    older = continuity.enter_thread(service, agent, "Kitchen renovation").caller
    log_exchange(service, older, "user", "The plumber comes on Thursday.")
    again = service.open_session("main", Actor.AGENT, "tests")
    time.sleep(0.002)  # a later millisecond: threads are ordered by their last change
    trip = continuity.enter_thread(service, again, "Lyon trip").caller
    log_exchange(service, trip, "user", "Train tickets are cheaper on Tuesdays.")
    empty = service.open_session("main", Actor.AGENT, "tests")
    continuity.enter_thread(service, empty, "Garden")  # the latest thread, no turns yet
    page = LayersPage(state)
    qtbot.addWidget(page)
    page.resize(1100, 700)
    page.show()
    # Not an empty "No thread" view beside threads full of turns.
    qtbot.waitUntil(lambda: page.thread_box.currentText() == "Lyon trip")
    flash = page.tree.topLevelItem(0)
    assert flash.childCount() == 1 and "Tuesdays" in flash.child(0).text(2)
    # Picked by the person, "No thread" stays, and says where the turns are.
    page.thread_box.setCurrentIndex(0)
    page.thread_box.activated.emit(0)
    qtbot.waitUntil(lambda: page.status.text().startswith("No turns here yet."))
    assert "2 threads of this group hold turns: pick one above." in page.status.text()
    log_exchange(service, trip, "assistant", "Then we go on a Tuesday.")
    state.changed.emit(Changes(group="main", threads=True))
    assert page.thread_box.currentIndex() == 0
    # Back from another group, it opens on the latest thread with turns again.
    state.set_group("work")
    qtbot.waitUntil(lambda: page.thread_box.count() == 1)
    state.set_group("main")
    qtbot.waitUntil(lambda: page.thread_box.currentText() == "Lyon trip")


def test_a_rebuild_stopped_part_way_is_said_and_compress_now_finishes_it(
    qtbot: QtBot, state: AppState, service: MemoryService
) -> None:
    seed(service)
    store = service.store_for("main")
    calls = iter([False])

    def interrupt() -> bool:
        if next(calls, True):
            raise KeyboardInterrupt  # Ctrl+C in `ambry layers --rebuild`
        return False

    with pytest.raises(KeyboardInterrupt):
        compress(store, utc_now(), rebuild=True, should_stop=interrupt)
    page = LayersPage(state)
    qtbot.addWidget(page)
    page.resize(1200, 700)
    page.show()
    # Before: only "Last compression: <time>", as if the pass had finished.
    waiting = "Summaries wait to be drawn again"
    qtbot.waitUntil(lambda: waiting in page.status.text())
    compress(store, utc_now() + timedelta(minutes=1))
    page.refresh()
    qtbot.waitUntil(lambda: waiting not in page.status.text())
