"""OpenTelemetry traces of the agent's turns, exported over OTLP/HTTP (the Rust ``agent-otel``)."""

from __future__ import annotations

from types import TracebackType
from typing import Optional, Type

from . import _native

__all__ = ["Tracing", "enable_tracing"]


class Tracing:
    """The running export of :func:`enable_tracing`. ``shutdown()`` (or leaving a ``with``
    block) sends the spans still buffered and stops the export."""

    def __init__(self, native: _native.Tracing) -> None:
        self._native = native

    def flush(self) -> None:
        """Sends the spans still buffered, keeping the export running. Blocks until the
        endpoint answers or the timeout passes."""
        self._native.flush()

    def shutdown(self) -> None:
        """Sends the spans still buffered and stops the export; later calls do nothing."""
        self._native.shutdown()

    def __enter__(self) -> "Tracing":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.shutdown()


def enable_tracing(
    endpoint: str,
    *,
    service_name: Optional[str] = None,
    timeout_ms: Optional[int] = None,
) -> Tracing:
    """Exports every agent's turns as OpenTelemetry GenAI spans (``invoke_agent``, ``chat``,
    ``execute_tool``) to an OTLP/HTTP endpoint, as protobuf POSTs to ``{endpoint}/v1/traces``.

    Args:
        endpoint: The collector's base URL, such as ``"http://127.0.0.1:4318"``.
        service_name: The ``service.name`` of the spans [``"agent-core"``].
        timeout_ms: How long one export request may take [10000].

    Tracing is turned on once per process: a second call raises :class:`AgentCoreError`, even
    after ``shutdown()``. ``AgentConfig(agent_name=...)`` names an agent's spans and
    ``AgentConfig(trace_content=True)`` adds the messages to them.

    >>> with enable_tracing("http://127.0.0.1:4318", service_name="my-app"):  # doctest: +SKIP
    ...     run_agents()
    """
    return Tracing(_native.enable_tracing(endpoint, service_name, timeout_ms))
