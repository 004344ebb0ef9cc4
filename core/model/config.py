"""Settings a person can change: limits, rates, decay constants.

Stored as ``<data dir>/config.json``, written atomically. Only composition roots
(the GUI, ``ambry serve``, ``ambry mcp``, the CLI) load it and pass it in.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import tempfile
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from core.model.decoding import decode
from core.model.errors import InvalidParams
from core.model.file_errors import file_error

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Config:
    max_brief_entries: int = 50
    max_brief_chars: int = 10_000
    brief_token_budget: int = 2_500
    purge_superseded_days: int = 90
    # Agent rate limits, rolling windows per agent (token and client): core.policy.ratelimit.
    rate_stores_per_hour: int = 120
    rate_stores_per_day: int = 600
    rate_supersedes_per_hour: int = 30
    rate_supersedes_per_day: int = 150
    rate_deletes_per_hour: int = 10
    rate_deletes_per_day: int = 50
    rate_exchanges_per_hour: int = 600
    rate_exchanges_per_day: int = 5000
    rate_handoffs_per_hour: int = 30
    rate_handoffs_per_day: int = 200
    rate_threads_per_hour: int = 20
    rate_threads_per_day: int = 100
    #: Days an agent-deleted entry stays in the trash before it is purged.
    trash_days: int = 30
    review_agent_writes: bool = False
    include_private_in_brief: bool = False
    decay_grace_days: int = 30
    decay_per_week: float = 0.1
    stale_threshold: float = 0.3
    episodic_ttl_days: int = 90
    #: Ranking: how much recency adds to a result, and the age at which it adds half.
    recency_weight: float = 0.15
    recency_half_life_days: float = 14.0
    #: Another local embedding model: a folder with model.onnx and tokenizer.json.
    embedding_model_dir: str = ""
    #: Layers in the brief (docs/layers.md): Flash (48 h verbatim) and Warm (2-7 days), 0: off.
    flash_token_budget: int = 800
    warm_token_budget: int = 600

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def with_changes(self, **changes: Any) -> Config:
        return parse_config({**self.to_dict(), **changes})


#: The allowed range of each numeric setting (the settings view uses it too).
BOUNDS: dict[str, tuple[float, float]] = {
    "max_brief_entries": (1, 1000),
    "max_brief_chars": (200, 200_000),
    "brief_token_budget": (50, 100_000),
    "purge_superseded_days": (1, 36_500),
    **{
        f"rate_{action}_per_{window}": (0, 1_000_000)
        for action in ("stores", "supersedes", "deletes", "exchanges", "handoffs", "threads")
        for window in ("hour", "day")
    },
    "trash_days": (1, 3650),
    "decay_grace_days": (0, 3650),
    "decay_per_week": (0.0, 1.0),
    "stale_threshold": (0.0, 1.0),
    "episodic_ttl_days": (1, 365),
    "recency_weight": (0.0, 1.0),
    "recency_half_life_days": (0.5, 3650.0),
    "flash_token_budget": (0, 20_000),
    "warm_token_budget": (0, 20_000),
}


#: Settings of earlier versions that no longer exist; a file holding them still loads.
RETIRED = frozenset(
    {"rate_stores_per_session", "rate_supersedes_per_session", "rate_deletes_per_session"}
)


def _kind(default: object) -> str:
    """What a setting's value must be, in the words of its default's type."""
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, str):
        return "a string"
    return "a whole number" if isinstance(default, int) else "a number"


def parse_config(raw: dict[str, Any]) -> Config:
    """Build a :class:`Config`, refusing unknown keys, wrong types and out-of-range values."""
    known = {f.name: f for f in fields(Config)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key in RETIRED:
            # Per-session limits became rolling windows per agent (rate_*_per_hour/day).
            log.warning("ignoring retired setting %r (rate limits are now per hour and day)", key)
            continue
        if key not in known:
            raise InvalidParams(f"unknown setting {key!r}", field=key, rule="unknown")
        default = getattr(Config, key)
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, str):
            ok = isinstance(value, str)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok:
            raise InvalidParams(
                f"setting {key!r} must be {_kind(default)}, not {json.dumps(value)}",
                field=key,
                rule="type",
            )
        if key in BOUNDS:
            low, high = BOUNDS[key]
            if not low <= value <= high:
                # The rule as every other refusal of a number names it (NaN is neither).
                rule = "minimum" if value < low else "maximum" if value > high else "type"
                raise InvalidParams(
                    f"setting {key!r} must be between {low} and {high}", field=key, rule=rule
                )
        # + 0.0 turns -0.0 (typed as "-0") into 0.0, which is how it is shown and saved.
        values[key] = float(value) + 0.0 if isinstance(default, float) else value
    return Config(**values)


_OR_DELETE = "or delete it to use the defaults"


def load_config(path: Path) -> Config:
    """The settings in ``path``, or the defaults when there is no such file.

    The file is read as every text file a person may have edited is
    (:mod:`core.model.decoding`): UTF-8 with or without a byte-order mark, or UTF-16
    with one, as Windows Notepad saves it.

    Raises:
        FileError: the file or its folder cannot be read (its owner, its mode, a
            folder in its place); the message says what to do.
        InvalidParams: the file is not valid settings; the message names the file.
    """
    try:
        raw_bytes = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        # No file, or no data dir yet (the command that creates it says why it cannot).
        return Config()
    except OSError as exc:
        # A folder that cannot be searched fails here first, for every command.
        raise file_error(exc, path, "read settings", write=False) from exc
    text = decode(raw_bytes, str(path), fix=f"save it as UTF-8, {_OR_DELETE}")
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise InvalidParams(
            f"{path}: cannot read settings ({exc}); fix or delete the file"
        ) from exc
    if not isinstance(raw, dict):
        raise InvalidParams(f"{path}: settings must be a JSON object")
    try:
        return parse_config(raw)
    except InvalidParams as exc:
        # Say which file holds the value, so the person knows what to edit.
        raise InvalidParams(
            f"{path}: {exc}; fix it there, or delete it to use the default",
            field=exc.field,
            rule=exc.rule,
        ) from exc


def atomic_write(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Write via a temp file in the same folder, fsync, rename: never half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        replace_durably(fd, Path(tmp), path, data, mode)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def replace_durably(fd: int, tmp: Path, path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` to the open temp file ``fd`` (``tmp``), fsync, rename it to ``path``.

    The caller made ``tmp`` in ``path``'s folder and removes it if this raises.
    """
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    if os.name == "posix":
        # The rename itself is durable only once the directory entry is synced.
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def save_config(path: Path, config: Config) -> None:
    """Write ``config`` to ``path`` atomically (owner-only).

    Raises:
        FileError: it cannot be written (a full or read-only disk, another owner);
            the file is left as it was.
    """
    try:
        atomic_write(path, (json.dumps(config.to_dict(), indent=2) + "\n").encode())
    except OSError as exc:
        raise file_error(exc, path, "save the settings") from exc
