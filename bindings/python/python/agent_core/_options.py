"""Options as data. Every options type (the tables of ``api/options.json``: AgentConfig,
ProviderConfig, SqliteOptions, PostgresOptions, McpServerEntry, PageToolsConfig, FsPolicy, CdpConfig and the
scripted steps) is defined once in Rust; an entry point of this package names that type's keys
as its keyword arguments (or dataclass / TypedDict fields), unchanged, and hands them to the
native module as one dict built here. The native module drops the keys whose value is None,
in nested dicts too (None keeps the Rust default), and reads the rest with the Rust type's own
deserializer, so an unknown key or a value of the wrong type raises :class:`ConfigError` with a
message naming it."""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, Mapping


def options(**values: Any) -> Dict[str, Any]:
    """The keyword arguments as one options dict, each value as plain data (see :func:`plain`)."""
    return {key: plain(value) for key, value in values.items()}


def plain(value: Any, depth: int = 0) -> Any:
    """A value as the native module takes it: a dataclass instance (such as :class:`ShellEnv`)
    becomes the dict of its fields, any other mapping a dict, a tuple a list, a path
    (``os.PathLike``) its string, inside them too; anything else is kept as it is. Options nest
    a few levels at most: deeper values are left to the native conversion, which refuses a
    structure that contains itself."""
    if depth > _MAX_DEPTH:
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)}
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {key: plain(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item, depth + 1) for item in value]
    return value


_MAX_DEPTH = 8
