"""CLI commands; importing a module registers its commands with ``core.cli``."""

from core.commands import memory, recall, review

__all__ = ["memory", "recall", "review"]
