"""CLI commands; importing a module registers its commands with ``core.cli``."""

from core.commands import agent, data, memory, recall, review

__all__ = ["agent", "data", "memory", "recall", "review"]
