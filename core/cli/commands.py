"""CLI commands; importing a module registers its commands with ``core.cli.main``."""

from core.cli import (
    agent,
    attachments,
    continuity,
    data,
    doctor,
    memory,
    recall,
    review,
    setup,
    trash,
)

__all__ = [
    "agent",
    "attachments",
    "continuity",
    "data",
    "doctor",
    "memory",
    "recall",
    "review",
    "setup",
    "trash",
]
