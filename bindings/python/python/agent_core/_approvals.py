"""Durable approvals: what a turn parked for the person's approval holds, and the decisions
that answer it (see :meth:`Session.resolve_approval`)."""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Literal, Mapping, Optional, Union

from ._options import plain

@dataclass(frozen=True)
class RememberHost:
    """Remember a decision for this tool on pages whose host matches ``pattern``, in every
    session: ``"example.com"`` (that host) or ``"*.example.com"`` (its subdomains, not
    ``example.com`` itself). Compared in ASCII lowercase: an internationalised name in its
    punycode form (``xn--...``). Only for a call whose tool names its page's host (the page
    tools) and that the pattern matches; a call without a host is never answered by it."""

    pattern: str


RememberScope = Union[Literal["session", "always"], RememberHost]
"""How far a remembered decision holds: this tool in this session, this tool always, or this
tool on pages whose host matches a pattern (:class:`RememberHost`)."""


def _remember(scope: Optional[RememberScope]) -> Any:
    if isinstance(scope, RememberHost):
        return {"host": scope.pattern}
    return scope


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
        fields = (("decision", "approve"), ("arguments", plain(decision.arguments)), ("remember", _remember(decision.remember)))
        return {k: v for k, v in fields if v is not None}
    if isinstance(decision, Reject):
        fields = (("decision", "reject"), ("reason", decision.reason), ("remember", _remember(decision.remember)))
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
class SubAgentStep:
    """One sub-agent (:func:`agent_tool`) between a session and a call waiting for approval in
    the sub-agent's turn."""

    tool: str
    """The name of the tool the sub-agent is offered as."""
    call_id: str
    """The id of the call of that tool that started the sub-agent's turn."""
    session_id: str
    """The sub-agent's session, parked on the approval."""
    approval_id: str
    """The sub-agent's own pending approval."""


@dataclass
class ApprovalCall:
    """One gated call waiting for the person's answer."""

    call_id: str
    tool: str
    arguments: Dict[str, Any]
    prompt: Optional[str] = None
    """What the gate asked the person, when it said (:class:`Ask`)."""
    host: Optional[str] = None
    """The host of the web page the call acts on, for a tool that names one (the page tools):
    approved, the call runs only while its page is still on this host; :class:`RememberHost`
    patterns must match it."""
    via: List[SubAgentStep] = field(default_factory=list)
    """The sub-agents the call waits in, outermost first, when a sub-agent's turn asked for it
    (empty for the session's own calls). Its ``call_id`` is then the calling call's id and the
    sub-agent's own, joined by ``/``: answer it like any other call."""


@dataclass
class ApprovalRule:
    """A remembered decision (see :meth:`Agent.approval_rules`)."""

    id: str
    tool: str
    allow: bool
    created_at_ms: int
    session_id: Optional[str] = None
    """The session it applies to, or None for every session."""
    host_pattern: Optional[str] = None
    """The hosts it applies to (``example.com``, ``*.example.com``) for a rule remembered with
    :class:`RememberHost`; None for calls on any host or none."""
    reason: Optional[str] = None

    @classmethod
    def _from_dict(cls, d: Mapping[str, Any]) -> "ApprovalRule":
        return cls(**d)


def approval_fields(d: Mapping[str, Any]) -> Dict[str, Any]:
    """The fields of a native pending-approval dict, its calls as :class:`ApprovalCall`."""
    fields = dict(d)
    fields["calls"] = [
        ApprovalCall(**{**c, "via": [SubAgentStep(**step) for step in c.get("via") or []]}) for c in d.get("calls") or []
    ]
    return fields


__all__: List[str] = [
    "Approve",
    "ApprovalCall",
    "ApprovalRule",
    "Ask",
    "Reject",
    "RememberHost",
    "RememberScope",
    "SubAgentStep",
]
