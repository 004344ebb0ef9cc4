"""``ambry settings``: read and change the settings in ``<data dir>/config.json``.

The same settings the app's Settings page edits, checked by the same rules
(:func:`core.model.config.parse_config`), for a person who runs Ambry without
the window. A change is written atomically; a running app, ``ambry serve`` and
``ambry mcp`` follow the file from their next call
(:meth:`core.storage.workspace.Workspace.follow_config`).
"""

from __future__ import annotations

import argparse
import difflib
from dataclasses import fields
from pathlib import Path
from typing import Any

from core.cli.completion import WORDS
from core.cli.context import Context, command
from core.model.config import BOUNDS, Config, save_config
from core.model.errors import InvalidParams
from core.semantic.embedding import EmbeddingUnavailable, check_folder

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


def _names() -> list[str]:
    return [f.name for f in fields(Config)]


def _known(name: str) -> str:
    if name in _names():
        return name
    near = difflib.get_close_matches(name, _names(), n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    raise InvalidParams(
        f"unknown setting {name!r}{hint} (`ambry settings` lists them)", field="name"
    )


def parse_value(name: str, text: str) -> Any:
    """``text`` as the type of setting ``name``; the range is checked by the config."""
    default = getattr(Config(), name)
    if isinstance(default, bool):
        word = text.strip().lower()
        if word in _TRUE | _FALSE:
            return word in _TRUE
        raise InvalidParams(f"{name} is true or false, not {text!r}", field=name, rule="type")
    if isinstance(default, str):
        return text
    try:
        return int(text) if isinstance(default, int) else float(text)
    except ValueError:
        kind = "a whole number" if isinstance(default, int) else "a number"
        raise InvalidParams(
            f"{name} must be {kind}, not {text!r}", field=name, rule="type"
        ) from None


def _model_folder(text: str) -> str:
    """The folder as an absolute path, refused unless it holds a model's two files."""
    folder = Path(text).expanduser().resolve()
    try:
        check_folder(folder)
    except EmbeddingUnavailable as exc:
        raise InvalidParams(str(exc), field="embedding_model_dir") from None
    return str(folder)


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value or "''"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _row(config: Config, name: str) -> dict[str, Any]:
    row: dict[str, Any] = {"value": getattr(config, name), "default": getattr(Config(), name)}
    if name in BOUNDS:
        row["range"] = list(BOUNDS[name])
    return row


def _args(p: argparse.ArgumentParser) -> None:
    name = p.add_argument("name", nargs="?", help="a setting (all of them when left out)")
    setattr(name, WORDS, _names())  # completed; checked by _known, which suggests the nearest
    p.add_argument("value", nargs="?", help="its new value (shown when left out)")
    p.add_argument("--reset", action="store_true", help="put the setting back to its default")


@command("settings", "Show the settings, or change one: ambry settings recency_weight 0.3.")(_args)
def cmd_settings(ctx: Context, args: argparse.Namespace) -> int:
    path = ctx.service.data_dir.config_file
    config = ctx.service.config  # read from ``path`` when the command started
    if args.name is None:
        if args.reset or args.value is not None:
            raise InvalidParams("name the setting to change: ambry settings NAME VALUE")
        width = max(len(n) for n in _names())
        lines = []
        for name in _names():
            row = _row(config, name)
            note = "" if row["value"] == row["default"] else f"  (default {_shown(row['default'])})"
            lines.append(f"{name:<{width}}  {_shown(row['value'])}{note}")
        ctx.emit({name: _row(config, name) for name in _names()}, "\n".join(lines))
        return 0
    name = _known(args.name)
    if args.value is None and not args.reset:
        row = _row(config, name)
        bounds = f", {row['range'][0]:g} to {row['range'][1]:g}" if "range" in row else ""
        ctx.emit(
            {"name": name, **row},
            f"{name} = {_shown(row['value'])} (default {_shown(row['default'])}{bounds})",
        )
        return 0
    if args.reset and args.value is not None:
        raise InvalidParams("give a value or --reset, not both")
    value = getattr(Config(), name) if args.reset else parse_value(name, args.value)
    if name == "embedding_model_dir" and value:
        value = _model_folder(value)
    was = getattr(config, name)
    changed = config.with_changes(**{name: value})  # refuses a value out of range
    if changed != config:
        save_config(path, changed)
    then = (
        " (they embed everything with it in the background; with none running, "
        "`ambry reindex` does it now)"
        if name == "embedding_model_dir"
        else ""
    )
    ctx.emit(
        {"name": name, "value": getattr(changed, name), "was": was, "file": str(path)},
        f"{name} = {_shown(getattr(changed, name))} (was {_shown(was)}), saved in {path}; "
        f"a running app, `ambry serve` and `ambry mcp` use it from their next call{then}",
    )
    return 0
