// A typed final answer: the model's answer is checked against a JSON Schema (one correction is
// asked for if it does not fit) and comes back parsed as `outcome.structured`.
import { Agent, ScriptedProvider } from 'agent-core'

const forecast = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    temperatureC: { type: 'integer' },
    conditions: { type: 'array', items: { type: 'string' } },
  },
  required: ['city', 'temperatureC', 'conditions'],
}
const answer = { city: 'Paris', temperatureC: 21, conditions: ['sunny'] }
const agent = new Agent({ provider: new ScriptedProvider([{ text: JSON.stringify(answer) }]) }) // a real provider in practice
const session = await agent.createSession()
const outcome = await session.sendTyped('Weather in Paris tomorrow?', forecast).outcome
if (outcome.status !== 'done') throw new Error(`${outcome.status}: ${outcome.error}`)
const { city, temperatureC, conditions } = outcome.structured
console.log(city, temperatureC, conditions.join(','))
agent.close()
