"""Typed final answers: the JSON Schema a turn's answer must match, from a pydantic model, a
dataclass, a TypedDict or a plain JSON Schema dict, and the answer turned back into that type."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generator, Generic, Mapping, Optional, Tuple, TypeVar, cast

from ._agent import Outcome, Run
from ._schema import _Builder, _is_typeddict, converter

T = TypeVar("T")


def output_schema(schema: Any, name: Optional[str] = None) -> Tuple[str, Dict[str, Any], Callable[[Any], Any]]:
    """The schema's name, its JSON Schema, and the function turning a validated answer into
    the type ``schema`` names (the value unchanged for a TypedDict or a dict schema)."""
    if isinstance(schema, Mapping):
        title = schema.get("title")
        return name or (title if isinstance(title, str) else "answer"), dict(schema), _same
    if not isinstance(schema, type):
        raise TypeError(
            "a typed answer's schema is a pydantic model class, a dataclass, a TypedDict or a JSON Schema dict, "
            f"not {type(schema).__name__}"
        )
    model_json_schema = getattr(schema, "model_json_schema", None)
    if callable(model_json_schema):  # a pydantic model (pydantic is never imported here)
        json_schema = dict(model_json_schema())
        validate: Callable[[Any], Any] = getattr(schema, "model_validate")
        return name or schema.__name__, json_schema, validate
    if not (dataclasses.is_dataclass(schema) or _is_typeddict(schema)):
        raise TypeError(
            f"a typed answer's schema is a pydantic model class, a dataclass, a TypedDict or a JSON Schema dict, not {schema!r}"
        )
    builder = _Builder()
    json_schema = builder.schema(schema)
    if builder.defs:
        json_schema["$defs"] = builder.defs
    return name or schema.__name__, json_schema, converter(schema) or _same


def _same(value: Any) -> Any:
    return value


@dataclass
class TypedOutcome(Outcome, Generic[T]):
    """The outcome of a typed turn (:meth:`Session.send_typed`): an :class:`Outcome` whose
    :attr:`answer` is the final answer as the schema's type. ``structured`` holds the same
    answer as plain JSON data (None unless the turn ended ``done``)."""

    _answer: Optional[T] = field(default=None, repr=False)

    @property
    def answer(self) -> T:
        """The answer as the schema's type: a pydantic model or dataclass instance, the dict
        for a TypedDict or a JSON Schema dict. Raises :class:`RunError` (as
        :meth:`raise_for_status` does) when the turn did not end ``done``."""
        self.raise_for_status()
        return cast(T, self._answer)


class TypedRun(Run, Generic[T]):
    """The run of a typed turn: a :class:`Run` whose outcome is a :class:`TypedOutcome`."""

    def __init__(self, native: Any, convert: Callable[[Any], Any]) -> None:
        super().__init__(native)
        self._convert = convert

    async def outcome(self) -> TypedOutcome[T]:
        """Waits for the turn to end and turns its answer into the schema's type (which raises
        when that type refuses an answer that matched the JSON Schema, e.g. a pydantic
        validator)."""
        plain = await super().outcome()
        values = {f.name: getattr(plain, f.name) for f in dataclasses.fields(plain)}
        typed: TypedOutcome[T] = TypedOutcome(**values)
        if plain.ok:
            typed._answer = self._convert(plain.structured)
        return typed

    def __await__(self) -> Generator[Any, None, TypedOutcome[T]]:
        return self.outcome().__await__()


__all__ = ["TypedOutcome", "TypedRun", "output_schema"]
