"""Tools written in Python: the :func:`tool` decorator and the :class:`Tool` class."""

from __future__ import annotations

import inspect
import os
import re
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, TypeVar, Union, overload

from ._options import options
from ._schema import converter, function_schema, to_jsonable

__all__ = ["Tool", "ToolContext", "tool", "NativeTools", "fs_tools", "ShellEnv"]

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

F = TypeVar("F", bound=Callable[..., Any])


class ToolContext:
    """What a tool call knows about where it runs. Declare a parameter annotated
    ``ToolContext`` to receive it (it is not part of the schema)."""

    __slots__ = ("session_id", "call_id")

    def __init__(self, session_id: str, call_id: str) -> None:
        self.session_id = session_id
        """The session the call belongs to."""
        self.call_id = call_id
        """The call's id, as the model gave it."""

    def __repr__(self) -> str:
        return f"ToolContext(session_id={self.session_id!r}, call_id={self.call_id!r})"


class Tool:
    """A capability the model can call, with a Python body (``def`` or ``async def``).

    The JSON Schema of the arguments comes from the function's type hints (str, int, float,
    bool, Literal, Optional, list, dict, Enum, TypedDict, dataclass, or a pydantic model when
    pydantic is installed), or is given with ``parameters=``. The description defaults to the
    docstring; Google-style ``Args:`` entries describe the arguments.

    ``gated=True`` asks the agent's gate before every call (no gate: the call is denied).
    ``parallel_safe=True`` lets the call run at the same time as other parallel-safe calls.
    ``timeout`` (seconds) overrides the agent's tool timeout.

    An exception raised by the body becomes an error result for the model and the loop goes on;
    ``raise ToolError.fatal(...)`` ends the turn.
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        parameters: Optional[Dict[str, Any]] = None,
        gated: bool = False,
        parallel_safe: bool = False,
        timeout: Optional[float] = None,
    ) -> None:
        if not callable(func):
            raise TypeError("Tool needs a callable")
        self.func = func
        self.name: str = name or str(getattr(func, "__name__", ""))
        if not _NAME.match(self.name):
            raise ValueError(f"invalid tool name {self.name!r}: use 1-64 of [a-zA-Z0-9_-]")
        if description is not None and not isinstance(description, str):
            # Caught here, naming the tool, rather than as a bare TypeError when an Agent takes it.
            kind = type(description).__name__
            raise TypeError(f"tool {self.name!r}: description must be a str, not {kind}")
        doc, schema, context_params = function_schema(func)
        self.description: str = description if description is not None else (doc or self.name)
        self.parameters: Dict[str, Any] = parameters if parameters is not None else schema
        self._explicit_schema = parameters is not None
        self.gated = bool(gated)
        self.parallel_safe = bool(parallel_safe)
        self.timeout = None if timeout is None else float(timeout)
        self.is_async: bool = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
            getattr(func, "__call__", None)
        )
        self._context_params: List[str] = context_params
        hints = _safe_hints(func)
        sig = inspect.signature(func)
        self._accepts_kwargs = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
        self._converters = {
            name: conv
            for name in sig.parameters
            if name not in context_params and (conv := converter(hints.get(name, Any))) is not None
        }
        self._invoke = self._ainvoke if self.is_async else self._sinvoke
        try:
            self.__doc__ = func.__doc__
            self.__wrapped__ = func
        except AttributeError:  # pragma: no cover
            pass

    def _kwargs(self, args: Dict[str, Any], ctx: Optional[Dict[str, str]]) -> Dict[str, Any]:
        # `ctx` is None for a function that declares no ToolContext (the native side then
        # makes none).
        if self._converters:
            for key, conv in self._converters.items():
                if key in args:
                    args[key] = conv(args[key])
        if ctx is not None:
            for key in self._context_params:
                args[key] = ToolContext(ctx["session_id"], ctx["call_id"])
        return args

    def _sinvoke(self, args: Dict[str, Any], ctx: Optional[Dict[str, str]]) -> Any:
        return to_jsonable(self.func(**self._kwargs(args, ctx)))

    async def _ainvoke(self, args: Dict[str, Any], ctx: Optional[Dict[str, str]]) -> Any:
        return to_jsonable(await self.func(**self._kwargs(args, ctx)))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Calls the underlying function directly (the tool stays usable as a function)."""
        return self.func(*args, **kwargs)

    def spec(self) -> Dict[str, Any]:
        """The tool's spec as the agent sees it."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "gated": self.gated,
            "parallel_safe": self.parallel_safe,
            "timeout": self.timeout,
        }

    def __repr__(self) -> str:
        flags = [f for f in ("gated", "parallel_safe") if getattr(self, f)]
        return f"Tool({self.name!r}{', ' if flags else ''}{', '.join(flags)})"


def _safe_hints(func: Callable[..., Any]) -> Dict[str, Any]:
    try:
        return typing.get_type_hints(func, include_extras=True)
    except Exception:  # pragma: no cover
        return {}


@overload
def tool(func: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: Optional[str] = None,
    description: Optional[str] = None,
    parameters: Optional[Dict[str, Any]] = None,
    gated: bool = False,
    parallel_safe: bool = False,
    timeout: Optional[float] = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    func: Optional[Callable[..., Any]] = None,
    /,
    *,
    name: Optional[str] = None,
    description: Optional[str] = None,
    parameters: Optional[Dict[str, Any]] = None,
    gated: bool = False,
    parallel_safe: bool = False,
    timeout: Optional[float] = None,
) -> Union[Tool, Callable[[Callable[..., Any]], Tool]]:
    """Turns a function into a :class:`Tool`. Use bare (``@tool``) or with options
    (``@tool(gated=True, parallel_safe=True)``)."""

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool(
            f,
            name=name,
            description=description,
            parameters=parameters,
            gated=gated,
            parallel_safe=parallel_safe,
            timeout=timeout,
        )

    if func is not None:
        return wrap(func)
    return wrap




class NativeTools:
    """Tools implemented in Rust (filesystem and shell, page tools, ...). Pass the object in
    ``Agent(tools=[...])`` next to Python tools."""

    def __init__(self, tools: List[Any]) -> None:
        self._tools = list(tools)

    def _native_tools(self) -> List[Any]:
        return self._tools

    @property
    def names(self) -> List[str]:
        """The tools' names."""
        return [t.name for t in self._tools]

    def specs(self) -> List[Dict[str, Any]]:
        """The tools' specs."""
        return [t.spec() for t in self._tools]

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"NativeTools({self.names})"


@dataclass(frozen=True)
class ShellEnv:
    """The environment shell_exec's commands get (``fs_tools(shell_env=...)``; ShellEnv in
    ``api/options.json``, so a dict with these keys works too). By default
    only a safe list of variables is inherited (``PATH``, ``HOME``, ``LANG``, ...), never the
    host's API keys or other secrets.

    Attributes:
        inherit_all: Inherit this process's whole environment, secrets included (for hosts
            whose commands need it and that trust the model with it).
        passthrough: More variables to inherit, by exact name, on top of the safe list.
        set: Variables set for every command (they win over inherited ones).
    """

    inherit_all: bool = False
    passthrough: Sequence[str] = ()
    set: Mapping[str, str] = field(default_factory=dict)


def fs_tools(
    root: "Optional[Union[str, os.PathLike[str]]]" = None,
    *,
    unrestricted: bool = False,
    max_read_bytes: Optional[int] = None,
    max_list_entries: Optional[int] = None,
    max_shell_output_bytes: Optional[int] = None,
    max_write_bytes: Optional[int] = None,
    shell_env: "Union[ShellEnv, Mapping[str, Any], None]" = None,
    gated: Optional[Dict[str, bool]] = None,
) -> NativeTools:
    """fs_read, fs_write, fs_list, fs_mkdir, fs_delete and shell_exec (Rust), confined to
    ``root``: paths that resolve outside it (``..``, absolute paths, symlinks) are refused.
    ``unrestricted=True`` (and no root) lifts the confinement explicitly. fs_write, fs_delete
    and shell_exec are gated by default; ``gated={"shell_exec": False}`` overrides per tool.

    The other options are the keys of FsPolicy (``api/options.json``); None keeps the default:

    Args:
        max_read_bytes: Cap on the text one fs_read returns, in bytes (default 65536).
        max_list_entries: Cap on the entries one fs_list returns (default 500).
        max_shell_output_bytes: Cap on each of shell_exec's stdout and stderr, in bytes
            (default 32768).
        max_write_bytes: Cap on the content one fs_write call writes, in bytes (default
            10 MiB); a larger write is refused for the model.
        shell_env: What shell_exec's commands inherit and get set (:class:`ShellEnv`, or a
            dict of its keys); by default only a safe list of variables, never the host's
            secrets.
    """
    from . import _native

    policy = options(
        root=root,
        unrestricted=unrestricted,
        max_read_bytes=max_read_bytes,
        max_list_entries=max_list_entries,
        max_shell_output_bytes=max_shell_output_bytes,
        max_write_bytes=max_write_bytes,
        shell_env=shell_env,
    )
    return NativeTools(_native.filesystem_tools(policy, gated))
