"""The exceptions of agent_core: one hierarchy rooted at :class:`AgentCoreError`.

Messages keep the Rust error's text. Errors raised by Python callbacks (tools, gates, hosts)
come back to the caller as the original exception (see ``Outcome.error_source``).
"""

from __future__ import annotations

from typing import Optional

__all__ = [
    "AgentCoreError",
    "ConfigError",
    "InvalidSessionIdError",
    "ProviderError",
    "StoreError",
    "SessionNotFoundError",
    "SessionExistsError",
    "ToolError",
    "HostError",
    "TabError",
    "TabNotFoundError",
    "TabQueueFullError",
    "CryptError",
    "ClarificationError",
    "ApprovalError",
    "RunError",
    "McpError",
]


class AgentCoreError(Exception):
    """Base class of every error agent_core raises.

    ``kind`` is a short stable name of the error's kind when the core gives one (for example
    ``provider.timeout``, ``store``, ``tool.fatal``).
    """

    kind: Optional[str] = None

    def __init__(self, message: str = "", *, kind: Optional[str] = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind

    @property
    def message(self) -> str:
        """The error's text."""
        return str(self)


class ConfigError(AgentCoreError, ValueError):
    """The agent, a provider or a setting is not configured correctly."""


class InvalidSessionIdError(ConfigError):
    """A session id that is not a UUID."""


class ProviderError(AgentCoreError):
    """A model call failed (rate limit, timeout, transport, server, auth, bad request, ...)."""


class StoreError(AgentCoreError):
    """The store failed."""


class SessionNotFoundError(StoreError, LookupError):
    """The session does not exist."""


class SessionExistsError(StoreError):
    """A session with this id already exists."""


class HostError(AgentCoreError):
    """A browser host call failed. Raise it from a :class:`BrowserHost` method with
    ``host_kind``: ``script``, ``navigation``, ``timeout``, ``no_such_tab``, ``disconnected``
    (the browser is gone: the turn ends) or ``other``."""

    host_kind: str = "other"

    def __init__(self, message: str = "", host_kind: str = "other") -> None:
        super().__init__(message, kind=f"host.{host_kind}")
        self.host_kind = host_kind


class TabError(AgentCoreError):
    """A tab hub operation failed (unknown or ambiguous handle, permission, ...)."""


class TabNotFoundError(TabError, LookupError):
    """No tab has this id."""


class TabQueueFullError(TabError):
    """The tab already holds the most messages from other tabs' agents it may
    (``TabHub.create(max_held_messages=...)``, default 32); this one was not queued (the older
    ones are kept). ``kind`` is ``tab.queue_full``."""


class McpError(AgentCoreError):
    """An MCP server could not be started or reached, its handshake failed, or serving MCP
    failed. ``kind`` is ``mcp.spawn``, ``mcp.handshake``, ``mcp.request``, ``mcp.io`` or
    ``mcp.session``."""


class CryptError(AgentCoreError):
    """Encryption is unavailable or failed (the key store never falls back to plaintext)."""


class ClarificationError(AgentCoreError, ValueError):
    """A clarification answer was refused: not pending, expired, or not fitting the question
    (``kind`` is ``clarification.not_pending``, ``.expired`` or ``.invalid_answer``)."""


class ApprovalError(AgentCoreError, ValueError):
    """An answer to a pending approval was refused (``kind`` is ``approval.not_pending``,
    ``.expired``, ``.missing_decision``, ``.unknown_call`` or ``.invalid_arguments``); the
    approval stays pending unless it is gone."""


class RunError(AgentCoreError):
    """A turn ended with status ``error``; raised by :meth:`Outcome.raise_for_status`.

    ``outcome`` is the turn's outcome; ``__cause__`` is the original Python exception when a
    Python callback caused the error.
    """

    outcome: object = None


class ToolError(AgentCoreError):
    """Raise inside a tool to report a failure.

    ``raise ToolError("bad input")`` shows the message to the model as the tool's result and the
    loop goes on; ``retryable=True`` tells the model that trying again may work.

    ``raise ToolError.fatal("host is gone")`` ends the turn with status ``error``; the exception
    comes back as ``Outcome.error_source`` (and its ``__cause__`` is kept).
    """

    is_fatal: bool = False
    """Whether the error ends the turn."""
    retryable: bool = False
    """Whether trying the same call again may succeed."""

    def __init__(self, message: str = "", *, retryable: bool = False, fatal: bool = False) -> None:
        super().__init__(message, kind="tool.fatal" if fatal else "tool")
        self.retryable = retryable
        self.is_fatal = fatal

    @classmethod
    def fatal(cls, error: "str | BaseException") -> "ToolError":
        """A tool error that ends the turn. Given an exception, its text is the message and it
        becomes the new error's ``__cause__``."""
        if isinstance(error, BaseException):
            exc = cls(str(error) or type(error).__name__, fatal=True)
            exc.__cause__ = error
            return exc
        return cls(error, fatal=True)
