"""Where sessions are persisted, and the encrypted API key store."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Literal, Optional, Sequence, Union

from . import _native
from ._options import options

try:
    from typing import Protocol, runtime_checkable
except ImportError:  # pragma: no cover - Python < 3.8
    from typing_extensions import Protocol, runtime_checkable  # type: ignore[assignment]

__all__ = ["Store", "MemoryStore", "SqliteStore", "PostgresStore", "Crypt", "KeyStore"]


class Store:
    """A store handle: pass it to ``Agent(store=...)``."""

    def __init__(self, native: _native.Store) -> None:
        self._native = native


class MemoryStore(Store):
    """An in-memory store: sessions live as long as the process."""

    def __init__(self) -> None:
        super().__init__(_native.Store.memory())


class SqliteStore(Store):
    """A SQLite database file (WAL, migrated on open) holding sessions, messages, tool-call
    records, compactions, parked runs and key-value pairs. Every message is written as it is
    produced; a turn interrupted by a crash is repaired when its session is reopened.

    The options are the keys of SqliteOptions (``api/options.json``); None keeps the default:

    Args:
        durability: ``"normal"`` (the default: survives the process being killed) or
            ``"full"`` (also a power loss, one fsync per commit).
        busy_timeout_ms: How long a connection waits for another process's write lock, in
            milliseconds (default 5000).
        max_idle_readers: Read connections kept open for reuse (default 4).
        write_behind: Queue the loop's writes to a writer thread and commit them in groups
            (default True); a turn's outcome is returned only once everything it wrote is
            durable. False makes every write wait for its own commit (much slower turns).
        group_commit_delay_ms: The longest the writer waits for more writes before committing
            a group, in milliseconds (default 2).
        max_size_bytes: Caps the file: a write past it fails like a full disk, and the turn
            ends with a store error (default: no cap).
    """

    def __init__(
        self,
        path: "Union[str, os.PathLike[str]]",
        *,
        durability: Optional[Literal["normal", "full"]] = None,
        busy_timeout_ms: Optional[float] = None,
        max_idle_readers: Optional[int] = None,
        write_behind: Optional[bool] = None,
        group_commit_delay_ms: Optional[float] = None,
        max_size_bytes: Optional[int] = None,
    ) -> None:
        self._sqlite = _native.SqliteStore(
            os.fspath(path),
            options(
                durability=durability,
                busy_timeout_ms=busy_timeout_ms,
                max_idle_readers=max_idle_readers,
                write_behind=write_behind,
                group_commit_delay_ms=group_commit_delay_ms,
                max_size_bytes=max_size_bytes,
            ),
        )
        super().__init__(self._sqlite.as_store())

    @property
    def path(self) -> str:
        """The database file."""
        return os.fspath(self._sqlite.path)

    async def schema_version(self) -> int:
        """The file's schema version."""
        return await self._sqlite.schema_version()

    async def list_sessions(self) -> List[Dict[str, Any]]:
        """Every session, most recently updated first."""
        return await self._sqlite.list_sessions()

    async def delete_session(self, id: str) -> None:
        """Deletes a session and everything in it."""
        await self._sqlite.delete_session(id)

    async def tool_calls(self, session_id: str) -> List[Dict[str, Any]]:
        """The session's tool-call records, oldest first."""
        return await self._sqlite.tool_calls(session_id)

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"


class PostgresStore(Store):
    """A PostgreSQL database holding what :class:`SqliteStore` holds (sessions, messages,
    tool-call records, compactions, parked runs, key-value pairs), for sessions that several
    machines reach. Its schema is migrated on connect (safely when several processes connect at
    once); two writers to one session never interleave: the loser gets a conflict error.

    Connections are made **without TLS**: keep the server on the same host or a private network.
    Connecting blocks until the server answers (at most ``connect_timeout_ms``); a server that
    cannot be reached raises :class:`StoreError` saying where it tried. API keys are not kept
    here (:class:`KeyStore` needs a :class:`SqliteStore`).

    The options are the keys of PostgresOptions (``api/options.json``); None keeps the default:

    Args:
        url: ``postgres://user:password@host:port/database`` (or the ``key=value`` form).
        max_connections: Connections the pool keeps at most (default 8).
        schema: The schema the tables live in, created if missing (default: the server's
            ``search_path``, usually ``public``). Lowercase letters, digits and ``_``.
        connect_timeout_ms: How long opening one connection may take, in milliseconds
            (default 10000).
    """

    def __init__(
        self,
        url: str,
        *,
        max_connections: Optional[int] = None,
        schema: Optional[str] = None,
        connect_timeout_ms: Optional[float] = None,
    ) -> None:
        self._postgres = _native.PostgresStore(
            url,
            options(max_connections=max_connections, schema=schema, connect_timeout_ms=connect_timeout_ms),
        )
        super().__init__(self._postgres.as_store())

    @property
    def schema(self) -> Optional[str]:
        """The schema the tables live in, if one was given."""
        return self._postgres.schema

    async def schema_version(self) -> int:
        """The database's schema version."""
        return await self._postgres.schema_version()

    async def list_sessions(self) -> List[Dict[str, Any]]:
        """Every session, most recently updated first."""
        return await self._postgres.list_sessions()

    async def delete_session(self, id: str) -> None:
        """Deletes a session and everything in it."""
        await self._postgres.delete_session(id)

    async def tool_calls(self, session_id: str) -> List[Dict[str, Any]]:
        """The session's tool-call records, oldest first."""
        return await self._postgres.tool_calls(session_id)

    def close(self) -> None:
        """Closes the connection pool: later calls fail."""
        self._postgres.close()

    def __repr__(self) -> str:
        # Never the URL: it may hold a password.
        return f"PostgresStore(schema={self.schema!r})"


@runtime_checkable
class Crypt(Protocol):
    """Host-supplied encryption for the key store, shaped like Electron's ``safeStorage``
    (an OS keychain in a desktop app). Its methods are called synchronously: keep them fast."""

    def is_encryption_available(self) -> bool:
        """Whether encrypting works now."""
        ...

    def encrypt_string(self, plaintext: str) -> bytes:
        """Encrypts text into opaque bytes."""
        ...

    def decrypt_string(self, ciphertext: bytes) -> str:
        """Decrypts what :meth:`encrypt_string` produced."""
        ...


class KeyStore:
    """One API key per provider, encrypted, in a :class:`SqliteStore`.

    Give a ``crypt`` (a :class:`Crypt`), or ``key_file=`` to use the built-in AES-256-GCM crypt
    whose key lives in that file (weaker than an OS keychain: prefer one when the host has it).
    There is no plaintext fallback: when encryption is unavailable, storing a key fails with
    :class:`CryptError`. A key that cannot be decrypted reads as absent.
    """

    def __init__(
        self,
        store: SqliteStore,
        crypt: Optional[Crypt] = None,
        *,
        key_file: "Union[str, os.PathLike[str], None]" = None,
        providers: Optional[Sequence[str]] = None,
    ) -> None:
        self._native = _native.KeyStore(
            store._sqlite,
            crypt,
            os.fspath(key_file) if key_file is not None else None,
            list(providers) if providers is not None else None,
        )

    async def set_key(self, provider: str, key: str) -> None:
        """Stores ``provider``'s key, encrypted."""
        await self._native.set_key(provider, key)

    async def get_key(self, provider: str) -> Optional[str]:
        """``provider``'s key, or None."""
        return await self._native.get_key(provider)

    async def status(self) -> List[Dict[str, Any]]:
        """Which providers have a usable key: ``[{"provider", "usable", "stored"}]``."""
        return await self._native.status()

    async def clear_key(self, provider: str) -> None:
        """Removes ``provider``'s key."""
        await self._native.clear_key(provider)

    @property
    def providers(self) -> List[str]:
        """The providers the store accepts."""
        return self._native.providers()
