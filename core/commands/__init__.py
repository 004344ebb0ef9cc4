"""CLI commands; importing a module registers its commands with ``core.cli``."""

from core.commands import (
    agent,
    attachments,
    continuity,
    data,
    memory,
    recall,
    review,
    semantic,
)

__all__ = [
    "agent",
    "attachments",
    "continuity",
    "data",
    "memory",
    "recall",
    "review",
    "semantic",
]
