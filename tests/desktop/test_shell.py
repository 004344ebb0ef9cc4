"""The shell: groups renamed and deleted, the window remembered and fitted, the tray, one
instance per data folder, themes and the menu bar."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QDialogButtonBox,
    QMenu,
    QPushButton,
    QRadioButton,
    QTableView,
)
from pytestqt.qtbot import QtBot

from core.model.errors import Conflict
from core.service import Caller, MemoryService
from core.storage.paths import DataDir
from desktop.settings.appearance import keeps_serving, theme_choice
from desktop.shell.groups import GroupNameDialog
from desktop.shell.main_window import MainWindow, Nav
from desktop.shell.single_instance import InstanceServer, instance_name, raise_running
from desktop.shell.tray import Tray
from desktop.shell.window_state import fitted, remembered_group, remembered_page
from desktop.widgets.ops import Executor
from desktop.widgets.theme import DARK_COLOURS, Theme, dark_sheet, light_sheet, theme_manager
from desktop.widgets.watch import AppState
from tests.desktop.conftest import OFFSCREEN_NOISE, Dialogs, add


def test_an_invalid_group_name_keeps_the_dialog_open_with_the_reason(qtbot: QtBot) -> None:
    def free(name: str) -> str:
        if name == "taken":
            raise Conflict("a group called taken exists already", field="group")
        return name

    dialog = GroupNameDialog("New group", "Name", free)
    qtbot.addWidget(dialog)
    dialog.show()
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    qtbot.keyClicks(dialog.name, "bad name!")
    ok.click()
    assert dialog.isVisible() and dialog.error.isVisible()
    assert "invalid group name" in dialog.error.text()
    dialog.name.setText("taken")
    assert not dialog.error.isVisible()  # typing clears the old reason
    ok.click()
    assert dialog.isVisible() and "exists already" in dialog.error.text()
    dialog.name.setText("work")
    with qtbot.waitSignal(dialog.accepted):
        ok.click()
    assert dialog.value() == "work"


def test_rename_the_current_group_keeps_its_memories_and_a_backup(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    dialogs: Dialogs,
    data_dir: DataDir,
) -> None:
    entry = add(service, operator, "Keeps its place")
    qtbot.waitUntil(lambda: window.browser.model.total == 1)
    dialogs.text = "work"
    window.acts["rename_group"].trigger()
    assert "Agents set up with --group main" in dialogs.asked[-1]
    assert window.state.group == "work" and window.group_box.currentText() == "work"
    assert data_dir.groups() == ["work"]
    assert service.get("work", entry).content == "Keeps its place"
    assert len(list((data_dir.root / "backups").glob("main-*.sqlite"))) == 1
    qtbot.waitUntil(lambda: window.browser.model.total == 1)
    assert window.windowTitle() == "Ambry — work"


def test_delete_a_group_asks_then_keeps_a_backup(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    dialogs: Dialogs,
    data_dir: DataDir,
) -> None:
    add(service, operator, "Main stays")
    window.switch_group("scratch")
    add(service, window.state.operator(), "Scratch goes")
    assert window.state.group == "scratch"
    dialogs.answer = False
    window.acts["delete_group"].trigger()
    assert "Delete group scratch and its 1 memory?" in dialogs.asked[-1]
    assert "scratch" in data_dir.groups()
    dialogs.answer = True
    window.acts["delete_group"].trigger()
    assert data_dir.groups() == ["main"] and window.state.group == "main"
    assert window.group_box.findText("scratch") < 0
    assert len(list((data_dir.root / "backups").glob("scratch-*.sqlite"))) == 1
    qtbot.waitUntil(lambda: window.browser.model.total == 1)


def test_first_window_fits_small_screens() -> None:
    # 1366x768 at 150 %: Qt sees 911x512, less a panel.
    small = fitted(QRect(0, 0, 911, 482))
    assert QRect(0, 0, 911, 482).contains(small)
    big = fitted(QRect(0, 0, 2560, 1400))
    assert big.size() == QSize(1360, 820) and big.center() == QRect(0, 0, 2560, 1400).center()


def test_editor_buttons_stay_visible_at_150_percent_of_1366x768(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    entry = add(service, operator, "A memory to edit")
    qtbot.waitUntil(lambda: window.browser.model.total == 1)
    window.browser.open_entry(entry)
    window.resize(911, 482)
    qtbot.waitUntil(lambda: window.width() <= 911 and window.height() <= 482)
    editor = window.browser.editor

    def in_view(button: QPushButton) -> bool:
        corner = button.mapTo(window, button.rect().bottomRight())
        shown = button.isVisible() and not button.visibleRegion().isEmpty()
        return shown and window.rect().contains(corner)

    # Once laid out for the new size (the search box's placeholder follows its width).
    for button in (editor.save_button, editor.history_button, editor.delete_button):
        qtbot.waitUntil(lambda b=button: in_view(b))


def test_window_remembers_place_page_and_group(
    qtbot: QtBot, state: AppState, executor: Executor, data_dir: DataDir, tmp_path: Path
) -> None:
    first = MainWindow(state, executor, None, tmp_path / "s.sock", "off")
    qtbot.addWidget(first)
    first.show()
    first.setGeometry(20, 30, 760, 540)
    placed = first.geometry()
    first.go(Nav.AUDIT)
    state.set_group("work")
    first.close()
    assert remembered_page(data_dir) == Nav.AUDIT and remembered_group(data_dir) == "work"
    again = MainWindow(state, executor, None, tmp_path / "s.sock", "off")
    qtbot.addWidget(again)
    assert again.nav.currentRow() == Nav.AUDIT
    assert again.geometry() == placed
    again.close()


def test_the_window_preferences_file_is_owner_only(
    qtbot: QtBot, state: AppState, executor: Executor, data_dir: DataDir, tmp_path: Path
) -> None:
    ini = data_dir.root / "desktop.ini"
    lock = data_dir.root / "desktop.ini.lock"
    previous = os.umask(0o022)  # the usual umask, under which Qt writes files 0644
    try:
        first = MainWindow(state, executor, None, tmp_path / "s.sock", "off")
        qtbot.addWidget(first)
        first.show()
        first.close()
        assert ini.read_text() and stat.S_IMODE(ini.stat().st_mode) == 0o600
        # One an earlier version wrote, and the lock file a crash left beside it.
        ini.chmod(0o644)
        lock.write_text("")
        lock.chmod(0o644)
        again = MainWindow(state, executor, None, tmp_path / "s.sock", "off")
        qtbot.addWidget(again)
        assert stat.S_IMODE(ini.stat().st_mode) == 0o600
        assert stat.S_IMODE(lock.stat().st_mode) == 0o600  # until Qt's next write clears it
        again.close()
    finally:
        os.umask(previous)
    assert stat.S_IMODE(ini.stat().st_mode) == 0o600


@pytest.mark.qt_log_ignore(OFFSCREEN_NOISE, r"This plugin does not support raise\(\)")
def test_closing_with_a_tray_keeps_serving_and_quit_quits(
    qtbot: QtBot, window: MainWindow, data_dir: DataDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    tray = Tray(QApplication.windowIcon(), window)
    window.set_tray(tray)
    quits: list[bool] = []
    monkeypatch.setattr(QApplication, "quit", lambda: quits.append(True))
    assert keeps_serving(data_dir)
    window.close()
    assert not window.isVisible() and not quits  # hidden, still alive
    tray.show_requested.emit()
    assert window.isVisible()
    menu = tray.icon.contextMenu()
    assert isinstance(menu, QMenu)
    assert [a.text() for a in menu.actions() if a.text()][-2:] == ["Show Ambry", "Quit Ambry"]
    tray.quit_action.trigger()
    assert not window.isVisible() and quits == [True]


def test_with_keep_serving_off_close_quits(
    qtbot: QtBot, window: MainWindow, data_dir: DataDir
) -> None:
    window.set_tray(Tray(QApplication.windowIcon(), window))
    window.go(Nav.SETTINGS)
    window.settings.window_box.keep_serving.setChecked(False)
    assert not keeps_serving(data_dir)
    window.close()
    assert not window.isVisible() and window.quitting is False


def test_a_second_launch_raises_the_running_window(
    qtbot: QtBot, data_dir: DataDir, window: MainWindow
) -> None:
    assert not raise_running(data_dir)  # nobody runs yet
    server = InstanceServer(data_dir, window)
    assert server.listen()
    try:
        with qtbot.waitSignal(server.raise_requested, timeout=3000):
            assert raise_running(data_dir)
        other = DataDir(data_dir.root / "elsewhere")
        assert instance_name(other) != instance_name(data_dir)
    finally:
        server.close()


def test_dark_theme_swaps_colours_and_follows_the_setting(
    qtbot: QtBot, window: MainWindow, data_dir: DataDir
) -> None:
    light = light_sheet()
    dark = dark_sheet(light)
    assert "#f6f7f9" in light and "#f6f7f9" not in dark and DARK_COLOURS["#f6f7f9"] in dark
    assert "#1f2430" in dark  # the sidebar keeps its own dark colour
    manager = theme_manager()
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    window.go(Nav.SETTINGS)
    box = window.settings.window_box.theme_box
    assert theme_choice(data_dir) is Theme.SYSTEM
    box.setCurrentIndex(box.findData(Theme.DARK.value))
    try:
        assert manager.dark and theme_choice(data_dir) is Theme.DARK
        assert app.palette().color(QPalette.ColorRole.Base).lightness() < 80
        # Radio buttons and check boxes are outlined in a colour the dark window shows.
        radio = QRadioButton("a choice")
        radio.ensurePolished()
        assert radio.palette().color(QPalette.ColorRole.Window).lightness() > 120
    finally:
        box.setCurrentIndex(box.findData(Theme.LIGHT.value))
    assert not manager.dark
    assert app.palette().color(QPalette.ColorRole.Base).lightness() > 200
    box_ = QCheckBox("a box")
    box_.ensurePolished()
    window_colour = app.palette().color(QPalette.ColorRole.Window)
    assert box_.palette().color(QPalette.ColorRole.Window) == window_colour


def test_menu_bar_holds_the_window_actions(window: MainWindow) -> None:
    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
    assert list(menus) == ["File", "Edit", "Go", "Help"]
    go = menus["Go"]
    assert isinstance(go, QMenu)
    assert [a.shortcut().toString() for a in go.actions()][:2] == ["Ctrl+1", "Ctrl+2"]
    file_menu = menus["File"]
    assert isinstance(file_menu, QMenu)
    assert window.acts["quit"] in file_menu.actions()
    assert window.nav.item(0).icon().isNull() is False


def test_pages_are_built_when_first_shown(qtbot: QtBot, window: MainWindow) -> None:
    """The window opens with the memory list and review built; the rest wait."""
    from desktop.settings.view import SettingsPage

    assert set(window._built) == {Nav.MEMORIES, Nav.REVIEW}
    assert window._unsaved(quitting=True) is None  # unbuilt pages hold no edits
    placeholder = window.pages.widget(Nav.SETTINGS)
    window.go(Nav.SETTINGS)
    settings = window.pages.currentWidget()
    assert isinstance(settings, SettingsPage) and settings is window.settings
    assert window.pages.indexOf(settings) == Nav.SETTINGS
    assert window.pages.indexOf(placeholder) == -1
    assert window.pages.count() == len(Nav)
    # Asked for by name (another view's link, a test), a page is built in place too.
    assert window.pages.indexOf(window.audit) == Nav.AUDIT
    assert window.pages.currentWidget() is settings


#: The packages whose page the window builds on first use.
LAZY_PAGE_PACKAGES = (
    "attachments",
    "audit",
    "brief",
    "claims",
    "connect",
    "layers",
    "settings",
    "threads",
    "trash",
)


def test_the_window_module_leaves_the_lazy_pages_unimported() -> None:
    # The pages built on first use (desktop/shell/pages.py) load their modules then too.
    lazy = [f"desktop.{name}.view" for name in LAZY_PAGE_PACKAGES]
    code = (
        "import sys, desktop.shell.main_window; "
        f"print(','.join(m for m in {lazy!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.stdout.strip() == ""


def test_tab_moves_past_every_table_instead_of_along_its_cells(window: MainWindow) -> None:
    for item in Nav:
        window.page(item)
    tables = window.findChildren(QTableView)
    assert len(tables) >= 8  # memories, review, attachments, threads, audit, claims, trash, ...
    assert [t.objectName() for t in tables if t.tabKeyNavigation()] == []


def test_ctrl_q_quits_where_the_platform_has_no_quit_key(
    qtbot: QtBot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The offscreen platform, like Windows, binds no key to the standard Quit action.
    quits: list[bool] = []
    monkeypatch.setattr(QApplication, "quit", lambda: quits.append(True))
    qtbot.keyClick(window.browser.filters.search, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    assert quits == [True] and not window.isVisible()
    assert window.acts["quit"].shortcut().toString() == "Ctrl+Q"


def test_ctrl_w_closes_and_is_the_key_the_menu_shows(qtbot: QtBot, window: MainWindow) -> None:
    # The offscreen platform, like Windows, lists Ctrl+F4 first among the Close keys.
    keys = [k.toString() for k in window.acts["close"].shortcuts()]
    assert keys[0] == "Ctrl+W" and "Ctrl+F4" in keys
    qtbot.keyClick(window.browser.filters.search, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    assert not window.isVisible()
