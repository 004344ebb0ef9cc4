"""The questions and answers of export and import: file names, passphrases, summaries.

The questions are module functions over Qt's static dialogs, so tests replace
the Qt calls (``QFileDialog.getSaveFileName``, ``QInputDialog.getText``) and
still run the code here; the summaries are plain text for the panel.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QInputDialog, QLineEdit, QWidget

from core.model.errors import Conflict
from core.portability.export import ExportSummary
from core.portability.importing import ImportReport
from desktop.memories.action_texts import memories
from desktop.widgets import messages

FILE_FILTER = "Ambry export (*.jsonl);;All files (*)"
#: What the other kinds of record in an export are called, singular and plural.
ROW_WORDS = {
    "thread": ("thread", "threads"),
    "thread_handoff": ("thread handoff", "thread handoffs"),
    "receipt": ("attachment receipt", "attachment receipts"),
    "receipt_link": ("receipt link", "receipt links"),
}


# -- questions ------------------------------------------------------------------


def ask_save_path(parent: QWidget | None, suggested: Path) -> Path | None:
    """Where to export; ``None`` when the person cancels.

    A name typed without an extension gets ``.jsonl``. The file dialog asked about
    replacing the name as typed, so a file of the completed name is asked about
    here (the export itself replaces only an earlier export).
    """
    path, _ = QFileDialog.getSaveFileName(parent, "Export memories", str(suggested), FILE_FILTER)
    if not path:
        return None
    chosen = Path(path)
    if chosen.suffix:
        return chosen
    chosen = chosen.with_suffix(".jsonl")
    if chosen.exists() and not messages.confirm(
        parent, "Export memories", f"{chosen.name} already exists. Replace it?", "Replace"
    ):
        return None
    return chosen


def ask_open_path(parent: QWidget | None, start: Path) -> Path | None:
    path, _ = QFileDialog.getOpenFileName(parent, "Import memories", str(start), FILE_FILTER)
    return Path(path) if path else None


def ask_password(parent: QWidget | None, title: str, label: str) -> str | None:
    """One passphrase, typed hidden; ``None`` when the person cancels."""
    text, ok = QInputDialog.getText(parent, title, label, QLineEdit.EchoMode.Password)
    return text if ok else None


def ask_new_passphrase(parent: QWidget | None) -> str | None:
    """A passphrase typed twice, the same both times; ``None`` (and why) otherwise."""
    title = "Passphrase for the export"
    first = ask_password(
        parent, title, "Private and secret memories are encrypted in the file.\nPassphrase:"
    )
    if first is None:
        return None
    if not first:
        messages.error("Not exported: a passphrase is needed to include private memories.")
        return None
    second = ask_password(parent, title, "The same passphrase again:")
    if second is None:
        return None
    if second != first:
        messages.error("Not exported: the two passphrases differ. Nothing was written.")
        return None
    return first


# -- summaries ------------------------------------------------------------------


def _counted(count: int, words: tuple[str, str]) -> str:
    return f"{count:,} {words[0] if count == 1 else words[1]}"


def _what(entries: int, rows: dict[str, int]) -> str:
    parts = [memories(entries)]
    parts += [_counted(n, ROW_WORDS.get(kind, (kind, kind))) for kind, n in rows.items() if n]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def export_text(summary: ExportSummary) -> str:
    text = f"Exported {_what(summary.entries, summary.rows)} to {summary.path}."
    if summary.skipped_private:
        left_out = _counted(
            summary.skipped_private, ("private or secret memory", "private or secret memories")
        )
        text += (
            f" {left_out} left out: tick “Include private and secret memories” to export "
            "them encrypted."
        )
    if summary.skipped_turns:
        turns = _counted(summary.skipped_turns, ("conversation turn", "conversation turns"))
        text += (
            f" {turns} not exported: an export holds no turns. To keep them, copy the data "
            "folder; to read them, use Export as Markdown."
        )
    return text


def import_text(report: ImportReport, path: Path, group: str) -> str:
    text = f"Imported {_what(report.entries, report.rows)} from {path.name} into {group!r}."
    if report.duplicates:
        text += f" {_counted(len(report.duplicates), ('record', 'records'))} already here, skipped."
    if report.updated:
        text += (
            f" {_counted(len(report.updated), ('record', 'records'))} already here "
            "brought up to date (tags, last seen, activity)."
        )
    if report.redacted:
        text += f" {_counted(report.redacted, ('secret', 'secrets'))} redacted."
    if report.refused:
        text += f" {_counted(len(report.refused), ('memory', 'memories'))} refused (credentials)."
    if report.secret_only:
        skipped = _counted(len(report.secret_only), ("memory", "memories"))
        text += f" {skipped} skipped (nothing but a secret)."
    if report.empty:
        text += f" {_counted(len(report.empty), ('empty memory', 'empty memories'))} skipped."
    if len(report.relinked) == 1:
        text += (
            " 1 older version now follows the next version imported, or is current again, "
            "because the memory that replaced it was left out."
        )
    elif report.relinked:
        text += (
            f" {len(report.relinked)} older versions now follow the next version imported, "
            "or are current again, because the memories that replaced them were left out."
        )
    if report.empty_tags:
        text += f" {_counted(report.empty_tags, ('empty tag', 'empty tags'))} left out."
    return text


def conflict_text(exc: Conflict, group: str) -> str:
    ids = [str(i) for i in exc.data.get("conflicts", ())]
    # Core lists at most 20; past that the exact number is only in its message.
    if len(ids) >= 20:
        count = "20 or more records in the file have"
    else:
        count = _counted(len(ids), ("record", "records")) + (
            " in the file has" if len(ids) == 1 else " in the file have"
        )
    shown = ", ".join(ids[:3]) + (", …" if len(ids) > 3 else "")
    return (
        f"Nothing imported: {count} the id of something already in "
        f"{group!r} but different content ({shown}). To keep both, create a new group "
        "(the group list in the sidebar) and import there."
    )
