"""agent_core: an embeddable LLM agent runtime (Rust core, asyncio API).

Build an :class:`Agent` from a provider, tools, a store and a gate; open a :class:`Session`;
``run = session.send(text)``; ``async for event in run.events()``; ``await run`` for the
:class:`Outcome`.

>>> import agent_core as ac
>>> @ac.tool
... def add(a: int, b: int) -> int:
...     '''Adds two integers.'''
...     return a + b
"""

from __future__ import annotations

import atexit as _atexit

from . import _native
from ._agent import (
    OUTCOME_STATUSES,
    Agent,
    AgentConfig,
    Allow,
    CompactionConfig,
    CompressionConfig,
    Clarification,
    Deny,
    Event,
    GateDecision,
    GateRequest,
    ModelPrice,
    TurnOrigin,
    Outcome,
    PendingApproval,
    Run,
    RunStatus,
    Session,
    SubAgentUsage,
    Usage,
    agent_tool,
)
from ._approvals import ApprovalCall, ApprovalRule, Approve, Ask, Reject, RememberHost, RememberScope, SubAgentStep
from ._prompt import browser_prompt
from ._schema import SchemaError
from ._tracing import Tracing, enable_tracing
from ._typed import TypedOutcome, TypedRun
from .errors import (
    AgentCoreError,
    ApprovalError,
    ClarificationError,
    ConfigError,
    CryptError,
    HostError,
    InvalidSessionIdError,
    McpError,
    ProviderError,
    RunError,
    SessionExistsError,
    SessionNotFoundError,
    StoreError,
    TabError,
    TabNotFoundError,
    TabQueueFullError,
    ToolError,
)
from .providers import (
    Anthropic,
    Delay,
    FailAfter,
    FallbackRouter,
    Gemini,
    Hang,
    HttpConfig,
    OpenAICompatible,
    OpenAIResponses,
    Provider,
    ProviderFailure,
    Reply,
    ScriptedProvider,
    ToolCallStep,
    provider_from_env,
)
from .hosts import BrowserHost, CdpHost, DialogInfo, PageToolsConfig, ScrapePolicy, TabInfo, page_tools
from .mcp import McpClient, McpHttpServer, McpServerInfo, OutputCaps, new_bearer_token, serve_mcp_http
from .stores import Crypt, KeyStore, MemoryStore, PostgresStore, SqliteStore, Store
from .tabs import Delivery, HostTab, OpenedTab, OpenedTabPolicy, TabHub, TabPermissions
from .tools import NativeTools, ShellEnv, Tool, ToolContext, fs_tools, tool

__version__: str = _native.CORE_VERSION

# Rust threads must not take the GIL while the interpreter finalizes.
_atexit.register(_native.shutdown)

__all__ = [
    "CompactionConfig",
    "CompressionConfig",
    "HttpConfig",
    "OutputCaps",
    "ScrapePolicy",
    "McpClient",
    "McpHttpServer",
    "McpServerInfo",
    "McpError",
    "serve_mcp_http",
    "new_bearer_token",
    "enable_tracing",
    "Tracing",
    "page_tools",
    "browser_prompt",
    "agent_tool",
    "ModelPrice",
    "SubAgentStep",
    "SubAgentUsage",
    "PageToolsConfig",
    "TabInfo",
    "DialogInfo",
    "BrowserHost",
    "CdpHost",
    "ClarificationError",
    "Clarification",
    "ApprovalError",
    "ApprovalCall",
    "ApprovalRule",
    "Approve",
    "Ask",
    "PendingApproval",
    "Reject",
    "RememberHost",
    "RememberScope",
    "fs_tools",
    "ShellEnv",
    "NativeTools",
    "provider_from_env",
    "OpenAICompatible",
    "OpenAIResponses",
    "Gemini",
    "FallbackRouter",
    "Anthropic",
    "TabPermissions",
    "TabNotFoundError",
    "TabQueueFullError",
    "TabHub",
    "HostTab",
    "OpenedTab",
    "OpenedTabPolicy",
    "PostgresStore",
    "SqliteStore",
    "KeyStore",
    "Delivery",
    "CryptError",
    "Crypt",
    "Agent",
    "AgentConfig",
    "AgentCoreError",
    "Allow",
    "ConfigError",
    "Delay",
    "Deny",
    "Event",
    "FailAfter",
    "GateDecision",
    "GateRequest",
    "TurnOrigin",
    "Hang",
    "HostError",
    "InvalidSessionIdError",
    "MemoryStore",
    "OUTCOME_STATUSES",
    "Outcome",
    "Provider",
    "ProviderError",
    "ProviderFailure",
    "Reply",
    "Run",
    "RunError",
    "RunStatus",
    "SchemaError",
    "ScriptedProvider",
    "Session",
    "SessionExistsError",
    "SessionNotFoundError",
    "Store",
    "StoreError",
    "TabError",
    "Tool",
    "ToolCallStep",
    "ToolContext",
    "ToolError",
    "TypedOutcome",
    "TypedRun",
    "Usage",
    "tool",
]
