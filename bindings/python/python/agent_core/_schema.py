"""JSON Schema from Python type hints, and turning validated JSON arguments back into the
annotated Python types (dataclasses, pydantic models, enums, tuples)."""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import sys
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

_UnionType: Any
try:  # Python >= 3.10
    from types import UnionType as _UnionType
except ImportError:  # pragma: no cover - Python 3.9
    _UnionType = None



def _pydantic_module() -> Any:
    """pydantic, when the program uses it (never imported here: it is slow to import)."""
    return sys.modules.get("pydantic")

_NoneType = type(None)


class SchemaError(TypeError):
    """A type hint that cannot be expressed as JSON Schema."""


def _is_pydantic_model(tp: Any) -> bool:
    pydantic = _pydantic_module()
    return pydantic is not None and isinstance(tp, type) and issubclass(tp, pydantic.BaseModel)


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__annotations__") and hasattr(
        tp, "__total__"
    )


def _hints(obj: Any) -> Dict[str, Any]:
    return typing.get_type_hints(obj, include_extras=True)


class _Builder:
    """Builds schemas, collecting pydantic ``$defs`` so they can live at the root."""

    def __init__(self) -> None:
        self.defs: Dict[str, Any] = {}

    def schema(self, tp: Any) -> Dict[str, Any]:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if tp is Any or tp is inspect.Parameter.empty or tp is object:
            return {}
        if origin is typing.Annotated:
            inner = self.schema(args[0])
            for meta in args[1:]:
                if isinstance(meta, str):
                    inner = {**inner, "description": meta}
                elif isinstance(meta, dict):
                    inner = {**inner, **meta}
            return inner
        if tp is _NoneType or tp is None:
            return {"type": "null"}
        if tp is str:
            return {"type": "string"}
        if tp is bool:
            return {"type": "boolean"}
        if tp is int:
            return {"type": "integer"}
        if tp is float:
            return {"type": "number"}
        if origin is typing.Literal:
            values = list(args)
            out: Dict[str, Any] = {"enum": values}
            kinds = {type(v) for v in values}
            if len(kinds) == 1:
                kind = kinds.pop()
                name = {str: "string", int: "integer", bool: "boolean", float: "number"}.get(kind)
                if name:
                    out["type"] = name
            return out
        if origin is typing.Union or (_UnionType is not None and isinstance(tp, _UnionType)):
            members = [a for a in args if a is not _NoneType]
            nullable = len(members) != len(args)
            schemas = [self.schema(a) for a in members]
            if len(schemas) == 1:
                inner = schemas[0]
                if not nullable:
                    return inner
                if "type" in inner and isinstance(inner["type"], str) and set(inner) <= {"type", "description"}:
                    return {**inner, "type": [inner["type"], "null"]}
                return {"anyOf": [inner, {"type": "null"}]}
            if nullable:
                schemas.append({"type": "null"})
            return {"anyOf": schemas}
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            values = [m.value for m in tp]
            out = {"enum": values}
            if all(isinstance(v, str) for v in values):
                out["type"] = "string"
            elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                out["type"] = "integer"
            return out
        if origin in (list, List, typing.Sequence, set, frozenset) or tp in (list, set, frozenset) or (
            origin is not None and origin.__module__ == "collections.abc" and origin.__name__ in (
                "Sequence", "Iterable", "Collection", "Set", "MutableSequence",
            )
        ):
            out = {"type": "array"}
            if args:
                out["items"] = self.schema(args[0])
            if origin in (set, frozenset) or tp in (set, frozenset):
                out["uniqueItems"] = True
            return out
        if origin is tuple or tp is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return {"type": "array", "items": self.schema(args[0])}
            if args:
                items = [self.schema(a) for a in args]
                return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
            return {"type": "array"}
        if origin in (dict, typing.Mapping) or tp is dict or (
            origin is not None and getattr(origin, "__name__", "") in ("Mapping", "MutableMapping")
        ):
            out = {"type": "object"}
            if len(args) == 2 and args[1] is not Any:
                out["additionalProperties"] = self.schema(args[1])
            return out
        if _is_typeddict(tp):
            hints = _hints(tp)
            required_keys = getattr(tp, "__required_keys__", set(hints) if tp.__total__ else set())
            td_props = {k: self.schema(v) for k, v in hints.items()}
            out = {"type": "object", "properties": td_props, "required": [k for k in hints if k in required_keys]}
            if tp.__doc__ and not tp.__doc__.startswith(tp.__name__ + "("):
                out["description"] = inspect.cleandoc(tp.__doc__)
            return out
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            hints = _hints(tp)
            props: Dict[str, Any] = {}
            required = []
            for f in dataclasses.fields(tp):
                if not f.init:
                    continue
                props[f.name] = self.schema(hints.get(f.name, Any))
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    required.append(f.name)
                if f.metadata.get("description"):
                    props[f.name]["description"] = f.metadata["description"]
            out = {"type": "object", "properties": props, "required": required}
            doc = tp.__doc__ or ""
            if doc and not doc.startswith(tp.__name__ + "("):
                out["description"] = inspect.cleandoc(doc)
            return out
        if _is_pydantic_model(tp):
            schema = dict(tp.model_json_schema())
            for name, d in schema.pop("$defs", {}).items():
                self.defs[name] = d
            return schema
        raise SchemaError(
            f"cannot derive a JSON Schema from the type hint {tp!r}: use str, int, float, bool, Literal, "
            "Optional, list, dict, an Enum, a TypedDict, a dataclass or a pydantic model, or pass parameters=..."
        )


_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters|Params)\s*:\s*$")
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: Optional[str]) -> Tuple[str, Dict[str, str]]:
    """Splits a Google-style docstring into (description, {argument: description})."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    description: List[str] = []
    params: Dict[str, str] = {}
    i = 0
    while i < len(lines) and not _ARGS_HEADER.match(lines[i]):
        description.append(lines[i])
        i += 1
    current: Optional[str] = None
    base_indent: Optional[int] = None
    for line in lines[i + 1 :]:
        if not line.strip():
            current = None
            continue
        indent = len(line) - len(line.lstrip())
        if base_indent is None:
            base_indent = indent
        if indent < (base_indent or 0) or (indent == 0 and line.rstrip().endswith(":")):
            break
        m = _ARG_LINE.match(line)
        if m and indent == base_indent:
            current = m.group(1).lstrip("*")
            params[current] = m.group(3).strip()
        elif current:
            params[current] = (params[current] + " " + line.strip()).strip()
    return "\n".join(description).strip(), params


def function_schema(
    fn: Callable[..., Any], skip: Tuple[str, ...] = ()
) -> Tuple[str, Dict[str, Any], List[str]]:
    """The description, JSON Schema of the arguments, and names of context parameters of ``fn``."""
    from .tools import ToolContext  # local import: tools imports this module

    sig = inspect.signature(fn)
    try:
        hints = _hints(fn)
    except Exception:  # pragma: no cover - unresolvable forward references
        hints = {}
    description, arg_docs = parse_docstring(inspect.getdoc(fn))
    builder = _Builder()
    props: Dict[str, Any] = {}
    required: List[str] = []
    context_params: List[str] = []
    for name, param in sig.parameters.items():
        if name in skip or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        hint = hints.get(name, param.annotation)
        if hint is ToolContext:
            context_params.append(name)
            continue
        if param.kind is param.POSITIONAL_ONLY:
            raise SchemaError(f"tool parameter {name!r} is positional-only; tools are called with keywords")
        schema = builder.schema(hint)
        if name in arg_docs and "description" not in schema:
            schema = {**schema, "description": arg_docs[name]}
        if param.default is not param.empty:
            default = param.default
            if isinstance(default, enum.Enum):
                default = default.value
            if default is None or isinstance(default, (str, int, float, bool)):
                schema = {**schema, "default": default}
        else:
            required.append(name)
        props[name] = schema
    out: Dict[str, Any] = {"type": "object", "properties": props, "required": required}
    if builder.defs:
        out["$defs"] = builder.defs
    return description, out, context_params


def converter(tp: Any) -> Optional[Callable[[Any], Any]]:
    """A function turning validated JSON into ``tp``, or None when the JSON value already is one."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return converter(args[0])
    if origin is typing.Union or (_UnionType is not None and isinstance(tp, _UnionType)):
        members = [a for a in args if a is not _NoneType]
        if len(members) == 1:
            opt_inner = converter(members[0])
            if opt_inner is None:
                return None
            return lambda v: None if v is None else opt_inner(v)
        return None
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp
    if _is_pydantic_model(tp):
        validate: Callable[[Any], Any] = tp.model_validate
        return validate
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        hints = _hints(tp)
        fields: Dict[str, Callable[[Any], Any]] = {}
        for f in dataclasses.fields(tp):
            conv = converter(hints.get(f.name, Any)) if f.init else None
            if conv is not None:
                fields[f.name] = conv

        def to_dataclass(v: Any) -> Any:
            return tp(**{k: (fields[k](x) if k in fields else x) for k, x in v.items()})

        return to_dataclass
    if origin in (list, set, frozenset, tuple) or (origin is not None and getattr(origin, "__name__", "") in (
        "Sequence", "Iterable", "Collection", "Set", "MutableSequence",
    )):
        container = origin if origin in (set, frozenset, tuple) else list
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            parts = [converter(a) for a in args]
            return lambda v: tuple(p(x) if p else x for p, x in zip(parts, v))
        item = converter(args[0]) if args else None
        if item is None:
            return None if container is list else container
        return lambda v: container(item(x) for x in v)
    if origin in (dict,) and len(args) == 2:
        value_conv = converter(args[1])
        if value_conv is None:
            return None
        return lambda v: {k: value_conv(x) for k, x in v.items()}
    return None


def to_jsonable(value: Any) -> Any:
    """A tool's return value as text or plain JSON data."""
    if value is None:
        return "ok"
    if isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if _is_pydantic_model(type(value)):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable_deep(dataclasses.asdict(value))
    return to_jsonable_deep(value)


_MAX_DEPTH = 100
"""Nesting levels a tool result may have (the native conversion enforces the same limit)."""


def to_jsonable_deep(value: Any, _path: "tuple[int, ...]" = ()) -> Any:
    """``value`` with enums, pydantic models and dataclasses turned into JSON-ready values.

    Raises ``TypeError`` for a structure that contains itself or nests deeper than 100 levels,
    instead of recursing until the interpreter gives up."""
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        if id(value) in _path:
            raise TypeError("cannot convert to JSON: the value is a cyclic structure (it contains itself)")
        if len(_path) >= _MAX_DEPTH:
            raise TypeError(f"cannot convert to JSON: the value is nested deeper than {_MAX_DEPTH} levels")
        path = _path + (id(value),)
        if isinstance(value, dict):
            return {str(k): to_jsonable_deep(v, path) for k, v in list(value.items())}
        return [to_jsonable_deep(v, path) for v in list(value)]
    if isinstance(value, enum.Enum):
        return value.value
    if _is_pydantic_model(type(value)):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable_deep(dataclasses.asdict(value), _path)
    return value


__all__ = ["SchemaError", "function_schema", "converter", "parse_docstring", "to_jsonable"]
