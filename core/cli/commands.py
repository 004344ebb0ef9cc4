"""CLI commands; importing a module registers its commands with ``core.cli.main``."""

from core.cli import (
    agent,
    attachments,
    claims,
    continuity,
    data,
    doctor,
    duplicates,
    layers,
    memory,
    recall,
    review,
    semantic,
    settings,
    setup,
    tags,
    trash,
)

__all__ = [
    "agent",
    "attachments",
    "claims",
    "continuity",
    "data",
    "doctor",
    "duplicates",
    "layers",
    "memory",
    "recall",
    "review",
    "semantic",
    "settings",
    "setup",
    "tags",
    "trash",
]
