"""MCP both ways (the Rust ``agent-mcp`` crate): an MCP server's tools in an agent
(:class:`McpClient`), and tools served to MCP clients over streamable HTTP on loopback
(:func:`serve_mcp_http`)."""

from __future__ import annotations

import os
from types import TracebackType
from typing import Any, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Type, TypedDict, Union

from . import _native
from ._options import options
from ._agent import GateFn, _wrap_gate
from .tools import NativeTools, Tool

__all__ = ["McpClient", "McpServerInfo", "OutputCaps", "McpHttpServer", "serve_mcp_http", "new_bearer_token"]


class OutputCaps(TypedDict, total=False):
    """Caps on what one MCP tool call returns (``McpClient.connect(caps=...)``; OutputCaps in
    ``api/options.json``). A missing key keeps its default (in brackets)."""

    max_image_base64: int
    """Base64 characters kept per image (larger images become a note) [8388608]."""
    max_text_chars: int
    """Characters of text kept across all text parts [200000]."""


class McpServerInfo(NamedTuple):
    """What an MCP server said about itself in the handshake."""

    name: Optional[str]
    version: Optional[str]
    protocol_version: str
    instructions: Optional[str]


class McpClient:
    """A connection to one MCP server: a child process speaking MCP over stdio
    (``command=``), or a server speaking streamable HTTP (``url=``).

    :meth:`tools` returns the server's tools as :class:`NativeTools` named ``alias__tool``:
    pass them in ``Agent(tools=[...])`` like :func:`fs_tools`. Remote tools are gated (the
    agent's gate decides each call) unless the server marks them read-only and
    ``trust_read_only_hints=True``. Each call has a timeout, a cancelled call is cancelled on
    the server too, and a crashed server is restarted (or reconnected) on the next call.

    Use ``async with`` (or :meth:`close`) to end the connection.
    """

    __slots__ = ("_native",)

    def __init__(self, native: _native.McpClient) -> None:
        """Wraps a native handle; use :meth:`connect`."""
        self._native = native

    @classmethod
    async def connect(
        cls,
        alias: str,
        *,
        type: Optional[str] = None,
        command: Optional[str] = None,
        args: Optional[Sequence[str]] = None,
        env: Optional[Mapping[str, str]] = None,
        cwd: "Optional[Union[str, os.PathLike[str]]]" = None,
        inherit_env: Optional[bool] = None,
        url: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        call_timeout_ms: Optional[float] = None,
        connect_timeout_ms: Optional[float] = None,
        request_timeout_ms: Optional[float] = None,
        trust_read_only_hints: Optional[bool] = None,
        caps: Optional[OutputCaps] = None,
        backoff_initial_ms: Optional[float] = None,
        backoff_max_ms: Optional[float] = None,
        roots: Optional[Sequence[str]] = None,
        disabled: Optional[bool] = None,
    ) -> "McpClient":
        """Starts (stdio) or reaches (HTTP) the server and completes the MCP handshake.

        The options are the keys of McpServerEntry (``api/options.json``: an entry of the
        ``mcpServers`` JSON most MCP hosts write, so ``McpClient.connect(alias, **entry)``
        works); None keeps the default. Durations are milliseconds.

        Args:
            alias: Prefix of every tool name (``alias__tool``): 1 to 32 of ``[a-zA-Z0-9_-]``,
                without ``__``.
            type: ``"stdio"`` or ``"http"`` (also ``"streamable-http"``); inferred from
                ``command`` or ``url`` when None.
            command: The program of a stdio server (looked up on ``PATH``).
            args: Its arguments.
            env: Variables set for the child. It inherits only harmless variables (PATH,
                HOME, ...), never the host's API keys, unless ``inherit_env=True``.
            cwd: Its working directory.
            inherit_env: Let the child inherit this process's whole environment.
            url: The endpoint of a streamable HTTP server (``http://127.0.0.1:3001/mcp``).
            headers: Headers sent with every HTTP request, such as
                ``{"Authorization": f"Bearer {server.bearer_token}"}`` for a server that
                requires a token.
            call_timeout_ms: The longest a tool call may take (default 60000).
            connect_timeout_ms: The longest the start and handshake may take (default 30000).
            request_timeout_ms: The longest a ``tools/list`` (all its pages together) may take
                (default 30000): at connect, after the list changed and after a reconnect.
            trust_read_only_hints: Let tools the server marks read-only run without the gate.
            caps: Caps on what a tool returns (:class:`OutputCaps`).
            backoff_initial_ms: The first wait before reconnecting a crashed server (default
                500).
            backoff_max_ms: The longest wait between reconnect attempts (default 30000).
            roots: Roots (``file://`` URIs) offered to the server.
            disabled: Read for compatibility with ``mcpServers`` files, where it leaves an
                entry out; ``connect`` refuses an entry marked ``disabled=True``.

        Raises :class:`ConfigError` for a bad configuration (an unknown key, both or neither
        of ``command`` and ``url``, a setting of the other transport, a disabled entry) and
        :class:`McpError` when the server does not start or
        the handshake fails.
        """
        entry = options(
            type=type,
            command=command,
            args=args,
            env=env,
            cwd=cwd,
            inherit_env=inherit_env,
            url=url,
            headers=headers,
            call_timeout_ms=call_timeout_ms,
            connect_timeout_ms=connect_timeout_ms,
            request_timeout_ms=request_timeout_ms,
            trust_read_only_hints=trust_read_only_hints,
            caps=caps,
            backoff_initial_ms=backoff_initial_ms,
            backoff_max_ms=backoff_max_ms,
            roots=roots,
            disabled=disabled,
        )
        return cls(await _native.McpClient.connect(alias, entry))

    @property
    def alias(self) -> str:
        """The prefix of every tool name."""
        return self._native.alias

    @property
    def tool_names(self) -> List[str]:
        """The server's current tools' names (``alias__tool``)."""
        return self._native.tool_names()

    def tools(self) -> NativeTools:
        """The server's current tools, for ``Agent(tools=[...])`` or :func:`serve_mcp_http`.
        An agent's tools are fixed when it is built: after the server's list changed, build the
        agent again (sessions live in the store)."""
        return NativeTools(self._native.tools())

    async def refresh_tools(self) -> None:
        """Lists the server's tools again."""
        await self._native.refresh_tools()

    async def is_connected(self) -> bool:
        """Whether the connection is up."""
        return await self._native.is_connected()

    async def server_info(self) -> Optional[McpServerInfo]:
        """The server's handshake information (None while disconnected)."""
        info = await self._native.server_info()
        return None if info is None else McpServerInfo(*info)

    async def close(self) -> None:
        """Ends the connection and stops a stdio server. Safe to call more than once; calls
        made afterwards fail."""
        await self._native.close()

    async def __aenter__(self) -> "McpClient":
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"McpClient({self.alias!r}, tools={self.tool_names})"


class McpHttpServer:
    """A running MCP server (streamable HTTP), from :func:`serve_mcp_http`. Use
    ``async with`` (or :meth:`shutdown`) to stop it."""

    __slots__ = ("_native",)

    def __init__(self, native: _native.McpHttpServer) -> None:
        """Wraps a native handle; use :func:`serve_mcp_http`."""
        self._native = native

    @property
    def url(self) -> str:
        """The MCP endpoint, such as ``http://127.0.0.1:41234/mcp``."""
        return self._native.url

    @property
    def bearer_token(self) -> Optional[str]:
        """The token every request must carry as ``Authorization: Bearer <token>`` (None
        when the server was started without one)."""
        return self._native.bearer_token

    def is_running(self) -> bool:
        """Whether the server runs (:meth:`shutdown` not called yet)."""
        return self._native.is_running()

    async def shutdown(self) -> None:
        """Stops accepting connections and ends every session. Safe to call more than once."""
        await self._native.shutdown()

    async def __aenter__(self) -> "McpHttpServer":
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.shutdown()

    def __repr__(self) -> str:
        return f"McpHttpServer({self.url!r})"


async def serve_mcp_http(
    tools: Iterable[Any],
    *,
    gate: Optional[GateFn] = None,
    host: str = "127.0.0.1",
    port: int = 0,
    name: Optional[str] = None,
    allowed_hosts: Optional[Sequence[str]] = None,
    bearer_token: Union[str, bool, None] = None,
    allowed_origins: Optional[Sequence[str]] = None,
) -> McpHttpServer:
    """Serves tools to MCP clients over streamable HTTP at ``http://host:port/mcp``.

    ``tools`` takes what ``Agent(tools=[...])`` takes: Python tools (:func:`tool`, plain
    functions) and Rust tools (:func:`fs_tools`, :func:`page_tools`, :meth:`McpClient.tools`).
    ``gate`` decides every call of a gated tool as an agent's gate does (without one, gated
    tools are denied); a denial reaches the client as an error result. Arguments are validated
    against each tool's schema. ``port=0`` picks a free port. The server listens on loopback by
    default and accepts only loopback ``Host`` headers unless ``allowed_hosts`` replaces them.
    Python tools and the gate run on the calling event loop, which must keep running.

    ``bearer_token`` (a string, or ``True`` for a fresh random one from
    :func:`new_bearer_token`) makes every request carry ``Authorization: Bearer <token>``
    (401 otherwise); read it back as :attr:`McpHttpServer.bearer_token`. Without one, any
    local process can call the served tools (still through the gate). Requests with an
    ``Origin`` header other than the server's own loopback origin get 403 unless it is in
    ``allowed_origins`` (``scheme://host[:port]``). A bad origin or token raises
    :class:`ConfigError`.
    """
    normalized: List[Any] = [t if isinstance(t, Tool) or hasattr(t, "_native_tools") else Tool(t) for t in tools]
    python_tools = [t for t in normalized if isinstance(t, Tool)]
    native_tools = [n for t in normalized if hasattr(t, "_native_tools") for n in t._native_tools()]
    gate_fn, gate_async = _wrap_gate(gate) if gate is not None else (None, False)
    native = await _native.McpHttpServer.serve(
        python_tools,
        native_tools,
        gate_fn,
        gate_async,
        host,
        port,
        name,
        None if allowed_hosts is None else [str(h) for h in allowed_hosts],
        bearer_token,
        None if allowed_origins is None else [str(o) for o in allowed_origins],
    )
    return McpHttpServer(native)


def new_bearer_token() -> str:
    """A fresh random bearer token for :func:`serve_mcp_http` (256 bits from the operating
    system's generator, as 64 hex digits)."""
    return _native.new_bearer_token()
