"""Durable approvals: what a turn parked for the person's approval holds, and the decisions
that answer it (see :meth:`Session.resolve_approval`)."""

from dataclasses import dataclass
from typing import Any, Dict, List, Literal, Mapping, Optional, Union

from ._options import plain

RememberScope = Literal["session", "always"]
"""How long a remembered decision holds: this tool in this session, or this tool always."""


@dataclass
class Ask:
    """Gate decision: ask the person, who may not be there now. Unless a remembered decision
    answers, the turn parks (outcome ``awaiting_approval``, persisted through the store) until
    :meth:`Session.resolve_approval` answers, in this process or after a restart. ``prompt``
    is what to ask them."""

    prompt: Optional[str] = None


@dataclass
class Approve:
    """Approval decision: run the call, with ``arguments`` instead of the model's when given
    (checked against the tool's schema again); ``remember`` answers later calls of the tool
    without asking."""

    arguments: Optional[Dict[str, Any]] = None
    remember: Optional[RememberScope] = None


@dataclass
class Reject:
    """Approval decision: do not run the call; the model reads ``reason`` and the turn goes
    on. ``remember`` rejects later calls of the tool without asking."""

    reason: Optional[str] = None
    remember: Optional[RememberScope] = None


Decision = Union[Approve, Reject, Literal["approve", "reject"], Mapping[str, Any]]


def _decision_dict(decision: Decision) -> Dict[str, Any]:
    if decision == "approve":
        return {"decision": "approve"}
    if decision == "reject":
        return {"decision": "reject"}
    if isinstance(decision, Approve):
        fields = (("decision", "approve"), ("arguments", plain(decision.arguments)), ("remember", decision.remember))
        return {k: v for k, v in fields if v is not None}
    if isinstance(decision, Reject):
        fields = (("decision", "reject"), ("reason", decision.reason), ("remember", decision.remember))
        return {k: v for k, v in fields if v is not None}
    if isinstance(decision, Mapping):
        return dict(decision)
    raise TypeError(f"a decision is Approve(...), Reject(...), 'approve' or 'reject', not {decision!r}")


def decisions_dict(decisions: Mapping[str, Decision]) -> Dict[str, Dict[str, Any]]:
    """The decisions by call id as the native module reads them."""
    if not isinstance(decisions, Mapping):
        raise TypeError("decisions must be a dict of call id to decision")
    return {str(call_id): _decision_dict(d) for call_id, d in decisions.items()}


@dataclass
class ApprovalCall:
    """One gated call waiting for the person's answer."""

    call_id: str
    tool: str
    arguments: Dict[str, Any]
    prompt: Optional[str] = None
    """What the gate asked the person, when it said (:class:`Ask`)."""


@dataclass
class ApprovalRule:
    """A remembered decision (see :meth:`Agent.approval_rules`)."""

    id: str
    tool: str
    allow: bool
    created_at_ms: int
    session_id: Optional[str] = None
    """The session it applies to, or None for every session."""
    reason: Optional[str] = None

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> "ApprovalRule":
        return cls(**d)


def approval_fields(d: Mapping[str, Any]) -> Dict[str, Any]:
    """The fields of a native pending-approval dict, its calls as :class:`ApprovalCall`."""
    fields = dict(d)
    fields["calls"] = [ApprovalCall(**c) for c in d.get("calls") or []]
    return fields


__all__: List[str] = [
    "Approve",
    "ApprovalCall",
    "ApprovalRule",
    "Ask",
    "Reject",
    "RememberScope",
]
