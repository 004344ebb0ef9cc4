"""The Search section's model row: which model ranks by meaning, and choosing another.

The folder is a setting like the others (``embedding_model_dir``): it is checked
when chosen (it must hold ``model.onnx`` and ``tokenizer.json``, and the model must
embed a text with that tokenizer), kept as an
absolute path, and applied when the page is saved. The running app then loads
the new model and re-embeds every memory and turn in the background; the status
bar shows the progress, and until a row has its new vector it is found by words.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.semantic.embedding import (
    EmbeddingUnavailable,
    ModelFiles,
    check_folder,
    unavailable_reason,
)
from desktop.widgets import messages
from desktop.widgets.ops import Executor

INSTALLED = "all-MiniLM-L6-v2, installed with Ambry"


def meaning_status(model_dir: str) -> str:
    """What ranks by meaning, or why nothing does (without loading the model)."""
    reason = unavailable_reason(model_dir)
    if reason is not None:
        return f"Search by meaning is off: {reason}. Search ranks by words only."
    model = f"the model in {model_dir}" if model_dir else INSTALLED
    return (
        f"Search by meaning uses {model}, run on this computer. To use another, choose "
        "a folder with model.onnx and tokenizer.json and save: every memory is then "
        "embedded with it in the background."
    )


#: The row's preferred width, in pixels: the status then takes three or four lines.
STATUS_WIDTH = 460


class ModelFolderRow(QWidget):
    """The model folder ("" for the installed model), two buttons and the status line."""

    def __init__(
        self, executor: Executor, group: Callable[[], str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._executor = executor
        self._group = group
        #: Asks for a folder, starting from the given one ("" when cancelled); tests
        #: replace it so no file dialog opens.
        self.choose_folder: Callable[[str], str] = lambda start: QFileDialog.getExistingDirectory(
            self, "Choose the embedding model's folder", start
        )
        self.folder = QLineEdit(self)
        self.folder.setReadOnly(True)
        self.folder.setMinimumWidth(120)
        self.folder.setPlaceholderText(INSTALLED)
        self.folder.setObjectName("embedding_model_dir")
        self.folder.setAccessibleName("Model folder")
        self.choose_button = QPushButton("Choose…", self)
        self.choose_button.setToolTip("Rank by meaning with a model of your own")
        self.choose_button.clicked.connect(self.choose)
        self.installed_button = QPushButton("Use installed", self)
        self.installed_button.setToolTip(f"Rank by meaning with {INSTALLED}")
        self.installed_button.clicked.connect(lambda: self.set_value(""))
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.setObjectName("hint")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.folder, 1)
        row.addWidget(self.choose_button)
        row.addWidget(self.installed_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.status)
        self.set_value("")

    def sizeHint(self) -> QSize:
        # Settings forms keep fields at their hint: wide enough for a short status.
        hint = super().sizeHint()
        return QSize(max(hint.width(), STATUS_WIDTH), hint.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_status()

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self._fit_status()

    def _fit_status(self) -> None:
        """A form gives a field its hinted height, too little for a wrapped status at
        the width it is given: ask for the height that width needs."""
        layout = self.layout()
        needed = layout.heightForWidth(self.width()) if layout is not None else -1
        if needed > 0 and needed != self.minimumHeight():
            self.setMinimumHeight(needed)

    def value(self) -> str:
        return self.folder.text()

    def set_value(self, model_dir: str) -> None:
        self.folder.setText(model_dir)
        self.folder.setToolTip(model_dir)
        self.installed_button.setEnabled(bool(model_dir))
        self._say(meaning_status(model_dir))

    def choose(self) -> None:
        """Ask for a folder, then load its model once in the background: a folder whose
        model cannot embed a text is refused here, not at the first search."""
        picked = self.choose_folder(self.value() or str(Path.home()))
        if not picked:
            return
        folder = Path(picked).expanduser().resolve()
        self.choose_button.setEnabled(False)
        self._say(f"Checking the model in {folder}…")

        def checked(_files: ModelFiles) -> None:
            self.choose_button.setEnabled(True)
            self.set_value(str(folder))

        def refused(exc: BaseException) -> None:
            self.choose_button.setEnabled(True)
            self.set_value(self.value())
            if not isinstance(exc, EmbeddingUnavailable):
                raise exc
            messages.error(f"Ambry cannot use that folder's model: {exc}")

        self._executor.submit(
            self._group(), lambda _service: check_folder(folder), checked, refused
        )
