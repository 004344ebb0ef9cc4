"""A minimal agent loop that keeps its memory in Ambry.

Start Ambry first (the app, or ``ambry serve`` in another terminal), then, with
the Python Ambry is installed in (or from a checkout of Ambry)::

    python examples/agent.py "I prefer answers in bullet points"

Each run opens a session, reads the brief (what a real agent would put in its
system prompt), stores what the user said as a preference, searches memory for
the turn, leaves an inline ``[MEMORY:...]`` marker for ``ingest_text`` the way an
agent without tool calls would, and ends the session with a handoff note. The
"model" here is a stand-in that echoes what it found, so the example runs
offline; swap :func:`think` for a call to your LLM.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

try:
    from ambry.client import AmbryClient, AmbryError, RateLimited, ServerUnavailable
except ModuleNotFoundError:  # run from a checkout of Ambry that is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from ambry.client import AmbryClient, AmbryError, RateLimited, ServerUnavailable


def think(user_message: str, brief: str, hits: list[dict[str, Any]]) -> str:
    """Stand-in for the model: says what memory it would have used."""
    lines = [f"You said: {user_message}"]
    if hits:
        lines.append("Related memories:")
        lines += [f"  - [{h['type']}] {h['content']}" for h in hits]
    lines.append(f"(brief: {len(brief)} characters of context)")
    lines.append("[MEMORY:behavior:example-agent] Ran one turn of the example agent loop")
    return "\n".join(lines)


def run_turn(ambry: AmbryClient, user_message: str) -> str:
    brief = ambry.brief()["markdown"]
    try:
        stored = ambry.store("preference", user_message, tags=["example"])
        print(f"stored {stored['id']} ({stored['status']})", file=sys.stderr)
    except RateLimited as exc:
        # The person sets the limits; an agent reports and carries on.
        print(f"not stored: {exc.message}", file=sys.stderr)
    hits = ambry.search(user_message, limit=5)
    reply = think(user_message, brief, hits)
    # An agent that writes markers inline lets Ambry pick them out of its output.
    ingested = ambry.call("ingest_text", {"text": reply})
    print(f"markers: {ingested['markers']} found, {len(ingested['stored'])} new", file=sys.stderr)
    return reply


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message", nargs="?", default="I prefer short answers with examples")
    parser.add_argument("--group", default="main", help="memory group (default: main)")
    parser.add_argument("--socket", help="socket path (default: $AMBRY_SOCKET or the runtime dir)")
    parser.add_argument("--data-dir", help="where agent.token is (default: $AMBRY_DATA_DIR)")
    args = parser.parse_args()
    try:
        with AmbryClient(args.socket, data_dir=args.data_dir) as ambry:
            session = ambry.hello(args.group, client="examples/agent.py")
            print(f"session {session['session_id']} in group {session['group']}", file=sys.stderr)
            print(run_turn(ambry, args.message))
            ambry.end_session(handoff="Ran the example turn; nothing left to do.")
    except ServerUnavailable as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    except AmbryError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
