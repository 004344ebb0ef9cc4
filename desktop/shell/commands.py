"""What the command palette offers and F1 lists: the window's actions, pages and groups."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Protocol

from desktop.memories.view import BrowserPage
from desktop.shell.editing import EditActions
from desktop.shell.groups import GroupCommands
from desktop.shell.nav import Nav
from desktop.shell.palette import Command
from desktop.widgets.watch import AppState

if TYPE_CHECKING:
    # A type only: the Claims page and its module load when it is first shown.
    from desktop.claims.view import ClaimsPage


class Window(Protocol):
    """What the commands call on the main window."""

    state: AppState
    browser: BrowserPage
    claims: ClaimsPage
    group_commands: GroupCommands
    edit: EditActions

    def new_entry(self) -> None: ...
    def forget_topic(self) -> None: ...
    def clear_memory(self) -> None: ...
    def focus_search(self) -> None: ...
    def show_palette(self) -> None: ...
    def show_keys(self) -> None: ...
    def quit(self) -> None: ...
    def go(self, page: Nav) -> None: ...
    def go_to(self, page: Nav) -> None: ...
    def switch_group(self, name: str | None) -> None: ...
    def close(self) -> bool: ...


def extract_claims(window: Window) -> None:
    """Show the Claims view and run an extraction there (it says what it found)."""
    window.go(Nav.CLAIMS)
    window.claims.extract()


def window_commands(window: Window) -> list[Command]:
    """Everything the palette offers; those with keys also make the F1 list."""
    found = [
        Command("New memory", window.new_entry, "Ctrl+N"),
        Command("Search memories", window.focus_search, "Ctrl+F"),
        Command("Save the memory, settings or handoff being edited", None, "Ctrl+S"),
        Command("Cancel a new memory", None, "Escape"),
        Command("Open the selected memory to edit it", window.edit.open_selected, "Enter"),
        Command("Delete the selected memories (asks first)", window.edit.delete, "Del"),
        Command("Copy the selected memories' ids", window.edit.copy_ids),
        Command("Undo the last delete, reject or accept", window.edit.undo, "Ctrl+Z"),
        Command("Find near-duplicates…", window.edit.find_duplicates),
        Command(
            "Forget a topic: delete everything that mentions it…",
            window.forget_topic,
            "Ctrl+Shift+Del",
        ),
        Command("Clear conversation turns, memories or everything…", window.clear_memory),
        Command("Accept / reject / defer in Review and Claims", None, "A / R / D"),
        Command("Memory list: default order", window.browser.clear_sort),
        Command(
            "Claims: extract candidates from handoffs and summaries",
            lambda: extract_claims(window),
        ),
        Command("New group…", window.group_commands.new_group),
        Command(f"Rename group {window.state.group}…", window.group_commands.rename),
        Command(f"Delete group {window.state.group}…", window.group_commands.delete),
    ]
    found += [Command(f"Go to {n.label}", partial(window.go_to, n), n.key) for n in Nav]
    found += [
        Command(f"Switch to group {g}", partial(window.switch_group, g))
        for g in window.state.groups()
        if g != window.state.group
    ]
    found += [
        Command("Command palette", window.show_palette, "Ctrl+K"),
        Command("Keyboard shortcuts", window.show_keys, "F1"),
        Command("Close the window (agents stay served)", window.close, "Ctrl+W"),
        Command("Quit", window.quit, "Ctrl+Q"),
    ]
    return found
