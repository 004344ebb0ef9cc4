"""CLI commands; importing a module registers its commands with ``core.cli``."""

from core.commands import data, memory, recall, review

__all__ = ["data", "memory", "recall", "review"]
