"""Where sessions are persisted."""

from __future__ import annotations

from . import _native

__all__ = ["Store", "MemoryStore"]


class Store:
    """A store handle."""

    def __init__(self, native: _native.Store) -> None:
        self._native = native


class MemoryStore(Store):
    """An in-memory store: sessions live as long as the process. The default when an agent has
    no store is to keep history in memory without one."""

    def __init__(self) -> None:
        super().__init__(_native.Store.memory())
