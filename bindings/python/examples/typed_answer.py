# A typed final answer: the model's answer is checked against a dataclass's schema (one
# correction is asked for if it does not fit) and comes back as that dataclass.
import asyncio
import json
from dataclasses import dataclass
from typing import List

import agent_core as ac


@dataclass
class Forecast:
    city: str
    temperature_c: int
    conditions: List[str]


async def main() -> None:
    answer = {"city": "Paris", "temperature_c": 21, "conditions": ["sunny"]}
    agent = ac.Agent(ac.ScriptedProvider([json.dumps(answer)]))  # a real provider in practice
    session = await agent.create_session()
    outcome = await session.send_typed("Weather in Paris tomorrow?", Forecast)
    forecast = outcome.answer  # a Forecast; RunError if the turn did not end "done"
    print(forecast.city, forecast.temperature_c, forecast.conditions)


asyncio.run(main())
