"""CLI commands; importing a module registers its commands with ``core.cli``."""

from core.commands import memory

__all__ = ["memory"]
