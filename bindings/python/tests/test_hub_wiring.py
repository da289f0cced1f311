"""The tab hub's wiring of hub tabs to a host's browser tabs (open_tab_for_host,
wire_host_tab, host_tab_closed, host_tab, host_tabs, tab_for_host, adopt_host_tab) and the
opened-tab policy's forms. The browser side is in test_tab_bound_pages.py."""

import pytest

import agent_core as ac


async def hub(**options):
    return await ac.TabHub.create(ac.ScriptedProvider([]), **options)


async def test_the_wiring_round_trips():
    h = await hub()
    tab = await h.open_tab_for_host("host-1")
    assert h.tab(tab)["open"]
    assert h.host_tab(tab) == ac.HostTab("open", "host-1")
    assert h.host_tab(tab).open == "host-1"
    assert h.host_tabs(tab) == ["host-1"]
    assert h.tab_for_host("host-1") == tab

    # A second browser tab: the agent works there now and owns both.
    h.wire_host_tab(tab, "host-2")
    assert h.host_tab(tab) == ac.HostTab("open", "host-2")
    assert h.host_tabs(tab) == ["host-1", "host-2"]
    assert h.tab_for_host("host-2") == tab

    # The host closes the one it works in: the hub tab stays open, with no browser tab.
    assert h.host_tab_closed("host-2") == tab
    assert h.host_tab(tab) == ac.HostTab("closed", "host-2")
    assert h.host_tab(tab).open is None
    assert h.host_tabs(tab) == ["host-1"]
    assert h.tab_for_host("host-2") is None
    assert h.tab(tab)["open"]
    assert h.host_tab_closed("never-wired") is None

    # Wiring a browser tab to another hub tab takes it from the first.
    other = await h.open_tab()
    assert h.host_tab(other) == ac.HostTab("unwired") and h.host_tabs(other) == []
    h.wire_host_tab(other, "host-1")
    assert h.tab_for_host("host-1") == other
    assert h.host_tabs(tab) == [] and h.host_tabs(other) == ["host-1"]


async def test_wiring_an_unknown_tab_says_so():
    h = await hub()
    missing = "6fe8c5a2-2b1d-4c7e-9a6f-1d2e3f4a5b6c"
    with pytest.raises(ac.TabNotFoundError, match=missing):
        h.wire_host_tab(missing, "host-1")
    with pytest.raises(ac.TabError, match="expected a UUID"):
        h.wire_host_tab("not-a-uuid", "host-1")


@pytest.mark.parametrize(
    "policy, new_agent",
    [(None, False), ("same_agent", False), ("new_agent", True), (lambda opened: "new_agent", True)],
)
async def test_adopt_host_tab_follows_the_policy(policy, new_agent):
    h = await hub(opened_tab_policy=policy)
    opener = await h.open_tab_for_host("home")
    owner = await h.adopt_host_tab(opener, "popup", "http://127.0.0.1/popup")
    assert h.tab_for_host("popup") == owner
    if new_agent:
        assert owner != opener and h.host_tab(owner) == ac.HostTab("open", "popup")
        assert h.host_tab(opener).open == "home"
    else:
        assert owner == opener and h.host_tab(opener).open == "popup"


async def test_a_policy_function_sees_the_opened_tab():
    seen = []

    def policy(opened: ac.OpenedTab) -> str:
        seen.append(opened)
        return "new_agent" if opened.url.endswith("/elsewhere") else "same_agent"

    h = await hub(opened_tab_policy=policy)
    opener = await h.open_tab_for_host("home")
    assert await h.adopt_host_tab(opener, "here", "http://127.0.0.1/here") == opener
    elsewhere = await h.adopt_host_tab(opener, "there", "http://127.0.0.1/elsewhere")
    assert elsewhere != opener
    assert seen == [
        ac.OpenedTab(opener=opener, host_tab="here", url="http://127.0.0.1/here"),
        ac.OpenedTab(opener=opener, host_tab="there", url="http://127.0.0.1/elsewhere"),
    ]


async def test_a_failing_policy_leaves_the_tab_with_its_opener(capsys):
    def policy(opened):
        return "somebody"

    h = await hub(opened_tab_policy=policy)
    opener = await h.open_tab_for_host("home")
    assert await h.adopt_host_tab(opener, "popup") == opener
    assert 'return "same_agent" or "new_agent"' in capsys.readouterr().err


async def test_a_wrong_policy_is_refused_saying_what_to_pass():
    with pytest.raises(ac.ConfigError, match='"same_agent", "new_agent" or a function'):
        await hub(opened_tab_policy="other_agent")
    with pytest.raises(TypeError, match="or a function, not int"):
        await hub(opened_tab_policy=3)

    async def later(opened):
        return "same_agent"

    with pytest.raises(TypeError, match="plain def, not an async def"):
        await hub(opened_tab_policy=later)
    with pytest.raises(TypeError, match="pass the browser host as page_tools"):
        await hub(page_tools_config={"max_chars": 100})
