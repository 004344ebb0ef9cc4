"""Ambry's core library: storage, policy and service, with no GUI dependency."""

__version__ = "0.1.0"
