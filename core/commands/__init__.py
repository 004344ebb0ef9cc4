"""CLI commands; importing a module registers its commands with ``core.cli``."""

from core.commands import memory, recall

__all__ = ["memory", "recall"]
