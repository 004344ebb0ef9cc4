"""New, rename and delete group: a name dialog that explains a refusal, and the questions.

A name the store would refuse keeps the dialog open with the reason under the
field, so the person fixes it rather than starting over.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from core.model.entries import EntryFilter
from core.model.errors import AmbryError, Conflict
from core.portability.groups import delete_group, rename_group
from core.storage.paths import validate_group
from desktop.widgets import messages
from desktop.widgets.ops import Executor
from desktop.widgets.watch import AppState

NAME_RULE = "Letters, digits, '_' or '-', up to 64."

#: Checks a name; returns it or raises :class:`AmbryError` with the reason.
Check = Callable[[str], str]


class GroupNameDialog(QDialog):
    """Asks for a group name and stays open, saying why, until it is usable.

    Args:
        title: the window title.
        label: what to type.
        check: raises for a name that cannot be used (beyond the pattern).
        initial: the text to start from.
        action: the label of the button that says yes.
        parent: the parent widget.
    """

    def __init__(
        self,
        title: str,
        label: str,
        check: Check,
        initial: str = "",
        action: str = "OK",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self._check = check
        self.name = QLineEdit(initial, self)
        self.name.setAccessibleName("Group name")
        self.name.selectAll()
        self.error = QLabel(self)
        self.error.setObjectName("warningLabel")
        self.error.setWordWrap(True)
        self.error.hide()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(action)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(label, self))
        layout.addWidget(self.name)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.name.textChanged.connect(lambda _t: self.error.hide())
        self.resize(420, self.sizeHint().height())

    def value(self) -> str:
        return self.name.text().strip()

    def accept(self) -> None:
        try:
            self._check(validate_group(self.value()))
        except AmbryError as exc:
            self.error.setText(exc.message)
            self.error.show()
            self.name.setFocus()
            return
        super().accept()


def ask_group_name(
    parent: QWidget, title: str, label: str, check: Check, initial: str = "", action: str = "OK"
) -> str | None:
    """The name the person chose, or ``None`` if they cancelled."""
    dialog = GroupNameDialog(title, label, check, initial, action, parent)
    return dialog.value() if dialog.exec() == QDialog.DialogCode.Accepted else None


class GroupCommands:
    """New, rename and delete group, closing every connection of this process first.

    Args:
        window: the parent of the dialogs.
        state: the shared app state.
        executor: the background thread, whose connections are closed too.
        may_leave: asks about unsaved edits before ``action`` (the button's verb).
        switch_group: opens a group, asking first if that drops edits.
        changed: called when the list of groups changed.
    """

    def __init__(
        self,
        window: QWidget,
        state: AppState,
        executor: Executor,
        may_leave: Callable[[str], bool],
        switch_group: Callable[[str | None], None],
        changed: Callable[[], None],
    ) -> None:
        self._parent = window
        self._state = state
        self._executor = executor
        self._may_leave = may_leave
        self._switch_group = switch_group
        self._changed = changed

    def _release(self, group: str) -> None:
        """Close every connection this process holds on ``group``."""
        self._executor.forget_group(group)
        self._state.service.close_store(group)

    def new_group(self) -> None:
        state = self._state

        def free(name: str) -> str:
            if name in state.groups():
                raise Conflict(f"a group called {name} exists already", field="group")
            return name

        name = ask_group_name(self._parent, "New group", NAME_RULE, free, "", "Create")
        self._switch_group(name)

    def rename(self) -> None:
        window, state = self._parent, self._state
        old = state.group
        if not self._may_leave("Rename group"):
            return

        def free(name: str) -> str:
            if name != old and name in state.groups():
                raise Conflict(f"a group called {name} exists already", field="group")
            return name

        label = (
            f"New name for {old}. {NAME_RULE}\nAgents set up with --group {old} will "
            "start an empty group until you update them (Connect an agent)."
        )
        new = ask_group_name(window, "Rename group", label, free, old, "Rename")
        if not new or new == old:
            return
        self._release(old)
        try:
            move = rename_group(state.service, old, new)
        except AmbryError as exc:
            messages.report(exc)
            return
        state.set_group(new)
        self._changed()
        messages.info(f"Group {old} is now {new}; a backup of it is in {move.backup.parent}.")

    def delete(self) -> None:
        window, state = self._parent, self._state
        group = state.group
        count = len(state.service.list_ids(group, EntryFilter()))
        others = [g for g in state.groups() if g != group]
        question = (
            f"Delete group {group} and its {count:,} "
            + ("memory" if count == 1 else "memories")
            + "? A backup is kept in the data folder's backups folder; agents using this "
            "group will find it empty."
        )
        if not self._may_leave("Delete group") or not messages.confirm(
            window, "Delete group", question, "Delete group"
        ):
            return
        target = others[0] if others else "main"
        self._release(group)
        try:
            move = delete_group(state.service, group)
        except AmbryError as exc:
            messages.report(exc)
            return
        if target == group:
            # The last group: the window needs one, so an empty one takes its place.
            state.service.store_for(group)
            state.group_changed.emit(group)
        else:
            state.set_group(target)
        self._changed()
        messages.info(f"Group {group} deleted; its backup is {move.backup.name}.")
