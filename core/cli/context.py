"""What every CLI command shares: the registry, the invocation context and the formatters.

A command module registers itself with :func:`command`; :mod:`core.cli.main`
imports them all and builds the parser from the registry.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from core.continuity import threads
from core.continuity.episodes import ExchangeHit
from core.model.caller import Caller
from core.model.decoding import decode
from core.model.entries import Actor, MemoryEntry, SearchResult, Status
from core.model.errors import InvalidParams
from core.model.text import one_line, plural
from core.policy.manifest import tool_maximum
from core.semantic import hybrid
from core.service import MemoryService
from core.storage.paths import DEFAULT_GROUP

Handler = Callable[["Context", argparse.Namespace], int]
COMMANDS: dict[str, tuple[Handler, Callable[[argparse.ArgumentParser], None], str]] = {}
#: Commands that never open a store, so they run on a data dir that does not exist
#: (``doctor`` reports on it, ``setup`` and ``completion`` do not touch it).
NO_STORE: set[str] = set()
#: Commands that may write a group's first entry: only they open a group that does
#: not exist yet (for any other, a mistyped ``--group`` is refused, not created).
STARTS_GROUP: set[str] = set()
#: Whether this invocation was given ``--json``: errors are then JSON too. Set once
#: by :func:`core.cli.main.main`; a context variable, so in-process callers (tests)
#: never see another invocation's choice.
JSON_ERRORS: ContextVar[bool] = ContextVar("JSON_ERRORS", default=False)
#: What a THREAD argument that names no thread is told (an agent's is told of thread_open).
_NEW_THREAD = "`ambry threads` lists the threads, `ambry threads open TITLE` creates one"


def command(
    name: str, help_text: str, *, opens_store: bool = True, starts_group: bool = False
) -> Callable[[Callable[[argparse.ArgumentParser], None]], Callable[[Handler], Handler]]:
    """Register ``name``: decorate an argument-adding function, then its handler."""

    def with_args(
        add_args: Callable[[argparse.ArgumentParser], None],
    ) -> Callable[[Handler], Handler]:
        def with_handler(handler: Handler) -> Handler:
            COMMANDS[name] = (handler, add_args, help_text)
            if not opens_store:
                NO_STORE.add(name)
            if starts_group:
                STARTS_GROUP.add(name)
            return handler

        return with_handler

    return with_args


@dataclass
class Context:
    """What a command handler needs, built once in :func:`main`."""

    service: MemoryService
    group: str
    as_json: bool
    _caller: Caller | None = None

    @property
    def opened(self) -> Caller | None:
        """The session this invocation opened, if it needed one."""
        return self._caller

    @property
    def caller(self) -> Caller:
        """An operator session for this invocation, opened on first use."""
        if self._caller is None:
            self._caller = self.service.open_session(self.group, Actor.OPERATOR, "cli")
        return self._caller

    def thread(self, ref: str, *, if_new: str = "") -> threads.Thread:
        """The thread a THREAD argument names, by its id or its title, as every command
        takes it (:func:`~core.continuity.threads.find_thread`). ``if_new``: how this
        command creates a thread of a new title, said when there is none."""
        return threads.find_thread(self.service, self.group, ref, if_new=if_new or _NEW_THREAD)

    def emit(self, data: Any, text: str, *, aside: str = "") -> None:
        """Print ``data`` as JSON under ``--json``, else ``text``.

        ``aside`` is a line of ``text`` that ``data`` cannot hold without changing
        its shape (``(more follow: add --offset 20)`` after a list of results): under
        ``--json`` it goes to stderr, so stdout keeps the JSON scripts expect.
        """
        if self.as_json:
            print(json.dumps(data, indent=2, ensure_ascii=False))
            if aside:
                print(aside, file=sys.stderr)
        elif text:
            print(text)

    def notes(self, notes: Iterable[str]) -> None:
        """Print each of ``notes`` on stderr as a ``note:`` line, unless under ``--json``.

        A command that creates something prints what a script captures on stdout (the
        id alone, so ``id=$(ambry store …)`` holds it); what the person should know
        about the write goes here, and ``--json`` carries it in its keys instead.
        """
        if not self.as_json:
            for note in notes:
                print(f"note: {note}", file=sys.stderr)


def redaction_notes(redacted: Iterable[str]) -> list[str]:
    """The note a write prints when it cut secrets out of what it was given (empty if none)."""
    names = list(redacted)
    if not names:
        return []
    kinds = ", ".join(sorted(set(names)))
    return [f"{plural(len(names), 'secret')} replaced by [SECRET_REDACTED]: {kinds}"]


def common_options(
    parser: argparse.ArgumentParser, *, suppress: bool, create: bool | None = None
) -> None:
    """``--data-dir``, ``--group`` and ``--json``; ``--create`` too on the top-level parser
    (``create`` defaults to ``not suppress``: a command adds it after its own options)."""
    default: Any = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--data-dir",
        default=default,
        metavar="DIR",
        help="data directory (default: $AMBRY_DATA_DIR or the platform's)",
    )
    parser.add_argument(
        "--group", default=default, metavar="NAME", help=f"memory group (default: {DEFAULT_GROUP})"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="print JSON instead of text (errors too, as one JSON object on stderr)",
    )
    if not suppress if create is None else create:
        add_create_option(parser, suppress=suppress)


def add_create_option(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """``--create``: allow a ``--data-dir`` that does not exist yet (``create_data_dir``)."""
    parser.add_argument(
        "--create",
        dest="create_data_dir",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="create the --data-dir if it does not exist (without it, a missing one is an error)",
    )


def fail(message: str, code: int = 1, details: dict[str, Any] | None = None) -> int:
    """Report an error on stderr: one ``error:`` line, or JSON under ``--json``."""
    if JSON_ERRORS.get():
        error = {"code": "error", "message": message, **(details or {}), "exit_status": code}
        print(json.dumps({"error": error}, ensure_ascii=False), file=sys.stderr)
    else:
        print(f"error: {message}", file=sys.stderr)
    return code


def confirm(question: str, refusal: str) -> bool:
    """Ask ``question`` on the terminal; True only for ``y`` or ``yes``.

    The question goes to stderr, so stdout holds nothing but the command's output
    (its JSON under ``--json``, or the file it is redirected to). Without a terminal
    on stdin nobody can answer: ``refusal`` is raised at once rather than waiting on
    a pipe. End of input (Ctrl-D) is a no.

    Raises:
        InvalidParams: stdin is not a terminal; the message is ``refusal``.
    """
    if not sys.stdin.isatty():
        raise InvalidParams(refusal, field="yes")
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    if not answer:
        print(file=sys.stderr)  # Ctrl-D left the cursor after the question
    return answer.strip().casefold() in ("y", "yes")


#: The largest whole number SQLite stores: any count or id past it is a typo.
LARGEST = 2**63 - 1


def whole(text: str) -> int:
    """An option's whole number (argparse ``type``), refused past what SQLite can hold
    rather than failing deep inside a query."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if abs(value) > LARGEST:
        raise argparse.ArgumentTypeError(f"{text} is too large (at most {LARGEST:,})")
    return value


def at_least(value: int, field: str, lowest: int = 1) -> int:
    """``value`` of the option ``field`` (``limit``), refused below ``lowest`` rather
    than quietly raised to it: ``--limit 0`` is a mistake, not a request for one row.

    The message reads as a tool's schema words it (``limit must be at least 1``);
    :func:`core.cli.main.main` names the option as typed, as for the tool's bounds.
    """
    if value < lowest:
        raise InvalidParams(f"{field} must be at least {lowest}", field=field, rule="minimum")
    return value


def within(value: int, field: str, lowest: int, highest: int) -> int:
    """``value`` of the option ``field``, refused outside ``lowest``..``highest`` with
    the words of :func:`at_least` (``limit must be at most 500``) and rule ``maximum``
    above, as a tool's schema refuses it."""
    at_least(value, field, lowest)
    if value > highest:
        raise InvalidParams(f"{field} must be at most {highest}", field=field, rule="maximum")
    return value


def read_stdin(field: str) -> str:
    """All of standard input as text (``-`` for a file or a memory).

    Read as a file is (:mod:`core.model.decoding`): UTF-8, a byte-order mark dropped,
    or UTF-16 with its mark.

    Raises:
        InvalidParams: the bytes are not UTF-8; nothing is guessed or stored.
    """
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:
        return sys.stdin.read()  # a text stream put in its place: decoded already
    return decode(buffer.read(), "standard input", fix="send it as UTF-8", field=field)


def format_entry(entry: MemoryEntry) -> str:
    # A superseded version is no longer the active one, whatever its status column
    # says: it reads "superseded", as search labels it.
    if entry.superseded_by is None:
        state = str(entry.status)
    elif entry.status is Status.ACTIVE:
        state = f"superseded by {entry.superseded_by}"
    else:
        state = f"{entry.status}, superseded by {entry.superseded_by}"
    lines = [
        f"{entry.id}  [{entry.type}] {state}",
        f"  {entry.content}",
    ]
    if entry.tags:
        lines.append("  tags: " + ", ".join(entry.tags))
    lines.append(
        f"  source: {entry.source.type} ({entry.source.trust} trust), "
        f"confidence {entry.confidence:.2f}, privacy {entry.privacy}"
    )
    lines.append(
        f"  created {entry.provenance.created_at}, updated {entry.provenance.updated_at}, "
        f"session {entry.provenance.session_id}"
    )
    if entry.review_reason:
        lines.append(f"  review: {entry.review_reason}")
    return "\n".join(lines)


def format_result(result: SearchResult, *, ranked: bool = True) -> str:
    """One search result as a line; a ``ranked`` one ends with its score and what found it."""
    tags = f"  #{' #'.join(result.tags)}" if result.tags else ""
    extra = "" if result.status == "active" else f" ({result.status})"
    if result.superseded_by:
        extra += " (superseded)"
    # One line per result, as the listing promises; `ambry show ID` prints it whole.
    content = one_line(result.content)
    return f"{result.id}  [{result.type}]{extra} {content}{tags}{found_by(result, ranked)}"


def found_by(result: SearchResult | ExchangeHit, ranked: bool = True) -> str:
    """``  (0.77: keyword, semantic)``: a ranked result's score and signals, ``guess``
    first when none of them says it matched (``  (0.09: guess, recent)``); empty for
    a listing without a query."""
    if not ranked:
        return ""
    signals = list(result.signals)
    if not hybrid.matched(signals):
        signals.insert(0, "guess")
    return f"  ({result.relevance_score:.2f}: {', '.join(signals)})"


def paging_line(next_offset: int | None, truncated: bool, narrow: str) -> str:
    """What a search's last line says of the pages after it ("" when nothing follows);
    ``narrow`` names the options that narrow this search."""
    if next_offset is not None:
        return f"(more follow: add --offset {next_offset})"
    if truncated:
        return f"(more match than paging reaches: narrow the search with more words, {narrow})"
    return ""


def tool_limit_option(
    parser: argparse.ArgumentParser, tool: str, rows: str, default: int, *, suppress: bool = False
) -> None:
    """``--limit N`` of a listing an agent tool also reads: at most the tool's largest page.
    ``suppress`` leaves it unset (for a subcommand that repeats its parent's option)."""
    most = tool_maximum(tool, "limit")
    parser.add_argument(
        "--limit",
        type=whole,
        default=argparse.SUPPRESS if suppress else default,
        metavar="N",
        help=f"at most N {rows} (default {default}, at most {most})",
    )


def tool_page(args: argparse.Namespace, tool: str) -> tuple[int, int]:
    """``--limit`` and ``--offset`` of a listing the agent ``tool`` also reads, checked
    against the tool's bounds as the tool checks them."""
    limit = within(args.limit, "limit", 1, tool_maximum(tool, "limit"))
    return limit, within(args.offset, "offset", 0, tool_maximum(tool, "offset"))


def offset_option(
    parser: argparse.ArgumentParser,
    rows: str,
    *,
    suppress: bool = False,
    tool: str | None = None,
) -> None:
    """``--offset N``: skip the first N ``rows`` of a listing, to read on. No ceiling,
    as a listing by age reads on to its last row, unless an agent ``tool`` reads the
    same listing: then its bounds (:func:`tool_page` checks them)."""
    most = f", at most {tool_maximum(tool, 'offset')}" if tool else ""
    parser.add_argument(
        "--offset",
        type=whole,
        default=argparse.SUPPRESS if suppress else 0,
        metavar="N",
        help=f"skip the first N {rows}, to read on (default 0{most})",
    )


def emit_listing(
    ctx: Context,
    data: list[Any] | dict[str, Any],
    lines: Iterable[str],
    *,
    offset: int,
    next_offset: int | None,
    nothing: str,
    empty: str | None = None,
    truncated: bool = False,
    narrow: str = "",
) -> None:
    """Print a page of a listing as ``search`` prints its results: the rows, then
    ``(more follow: add --offset N)`` when more rows follow. ``data`` is a bare list
    (that line then goes to stderr under ``--json``, where the list on stdout has no
    room for it) or an agent tool's result, which carries ``next_offset`` itself.
    ``truncated`` says more follow than ``--offset`` reaches; ``narrow`` names the
    options that narrow the listing.

    ``nothing`` says the listing is empty (``no threads``); past its last row, however
    far, it says so with the offset (``no threads at --offset 500 or beyond``), never
    as if the store were empty. ``empty`` words the first case otherwise.
    """
    text = "\n".join(lines)
    if not text:
        text = f"{nothing} at --offset {offset} or beyond" if offset else (empty or nothing)
    more = paging_line(next_offset, truncated, narrow)
    if more:
        text += "\n" + more
    ctx.emit(data, text, aside=more if isinstance(data, list) else "")


def progress_line(label: str, enabled: bool) -> Callable[[int, int], None] | None:
    """``progress(done, total)`` printing "label done/total" on one stderr line, or None.

    Only where a person watches (``enabled``: stderr is a terminal and not ``--json``);
    redrawn at most five times a second, and once more at the end.
    """
    if not enabled:
        return None
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] < 0.2 and done < total:
            return
        last[0] = now
        end = "\n" if done >= total else ""
        print(f"\r{label} {done:,}/{total:,}", end=end, file=sys.stderr, flush=True)

    return progress


def watching(ctx: Context) -> bool:
    """Whether a person watches this command's stderr (progress is shown then)."""
    return not ctx.as_json and sys.stderr.isatty()
