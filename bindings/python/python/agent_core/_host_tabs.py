"""Hub tabs wired to a browser's own tabs: which browser tab each hub tab's agent works in
(:class:`HostTab`), and who gets a browser tab an agent opens (:class:`OpenedTab`, the
opened-tab policy)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Dict, Literal, Optional, Union

from .errors import ConfigError

__all__ = ["HostTab", "OpenedTab", "OpenedTabOwner", "OpenedTabPolicy"]

OpenedTabOwner = Literal["same_agent", "new_agent"]
"""Who gets a browser tab an agent opened: the agent that opened it, or a new hub tab with
its own agent."""

_OWNERS = ("same_agent", "new_agent")


@dataclass(frozen=True)
class OpenedTab:
    """A browser tab that a hub tab's agent opened, as the opened-tab policy sees it."""

    opener: str
    """The hub tab whose agent opened it."""
    host_tab: str
    """The host's id for the new browser tab."""
    url: str
    """Its address when it opened (empty for a blank tab)."""


OpenedTabPolicy = Union[OpenedTabOwner, Callable[[OpenedTab], OpenedTabOwner]]
"""``"same_agent"``, ``"new_agent"``, or a plain function of the :class:`OpenedTab` returning
one of them."""


@dataclass(frozen=True)
class HostTab:
    """The browser tab a hub tab's agent works in. ``state`` is ``"unwired"`` (no browser tab
    was ever wired to it; ``host_tab`` is None), ``"open"`` or ``"closed"`` (the host reported
    it closed and no other was wired since)."""

    state: Literal["unwired", "open", "closed"]
    host_tab: Optional[str] = None

    @property
    def open(self) -> Optional[str]:
        """The open browser tab's id, if there is one."""
        return self.host_tab if self.state == "open" else None

    @classmethod
    def _from_dict(cls, d: Dict[str, Any]) -> "HostTab":
        return cls(state=d["state"], host_tab=d.get("host_tab"))


def _native_policy(policy: Optional[OpenedTabPolicy]) -> Any:
    """The policy as the native module takes it: the text, or a function of ``(opener,
    host_tab, url)`` returning the text."""
    if policy is None:
        return None
    if isinstance(policy, str):
        if policy not in _OWNERS:
            raise ConfigError(
                f'opened_tab_policy must be "same_agent", "new_agent" or a function returning one of them, not {policy!r}'
            )
        return policy
    if not callable(policy):
        raise TypeError(
            f'opened_tab_policy must be "same_agent", "new_agent" or a function, not {type(policy).__name__}'
        )
    if inspect.iscoroutinefunction(policy) or inspect.iscoroutinefunction(getattr(policy, "__call__", None)):
        raise TypeError(
            "opened_tab_policy must be a plain def, not an async def: the hub asks it while the agent's "
            "tab_open call waits; decide from the OpenedTab alone"
        )
    choose = policy

    def ask(opener: str, host_tab: str, url: str) -> str:
        owner = choose(OpenedTab(opener=opener, host_tab=host_tab, url=url))
        if owner not in _OWNERS:
            raise ConfigError(
                f'opened_tab_policy returned {owner!r} for {host_tab!r}: return "same_agent" or "new_agent"; '
                "the agent that opened the tab keeps it"
            )
        return owner

    return ask
