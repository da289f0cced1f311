# Human control: a gate that asks the person (the turn parks and resumes later, even after a
# restart), a hook that enforces a limit, and a sub-agent offered as a tool.
import asyncio

import agent_core as ac


@ac.tool(gated=True)
def pay(amount: int) -> str:
    """Pays an invoice, in cents."""
    return f"paid {amount}"


class Limit:
    def before_tool_call(self, call):  # hooks may also edit model calls and tool results
        if call["tool"] == "pay" and call["arguments"]["amount"] > 10_000:
            return {"deny": "over the limit"}


async def main() -> None:
    researcher = ac.Agent(ac.ScriptedProvider(["Invoice 42: 5 EUR"]))
    provider = ac.ScriptedProvider(
        [
            ac.ToolCallStep("research", {"task": "find the invoice"}),
            ac.ToolCallStep("pay", {"amount": 500}),
            "Paid invoice 42.",
        ]
    )
    agent = ac.Agent(
        provider,
        tools=[pay, ac.agent_tool("research", "Finds facts.", researcher)],
        gate=lambda request: ac.Ask(f"Pay {request.arguments['amount']} cents?"),
        hooks=[Limit()],
    )
    session = await agent.create_session()
    parked = await session.send("pay the invoice")
    assert parked.status == "awaiting_approval" and parked.approval is not None
    answers = {call.call_id: ac.Approve() for call in parked.approval.calls}
    done = await session.resolve_approval(parked.approval.id, answers)
    print(done.status, done.final_text)


asyncio.run(main())
