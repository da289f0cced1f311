// Type-checked with `tsc --noEmit` (not run): the public types must accept real usage and
// reject wrong usage (`@ts-expect-error` fails the check if the line type-checks).
import { z } from 'zod'
import {
  Agent,
  ScriptedProvider,
  MemoryStore,
  tool,
  FatalToolError,
  ToolError,
  RunError,
  AgentCoreError,
  type AgentEvent,
  type Outcome,
  type RunStatus,
  type GateRequest,
  type AgentHooks,
  type HookToolResult,
  type BrowserHost,
  OpenAICompatible,
  SqliteStore,
  fsTools,
  pageTools,
  browserPrompt,
  HostError,
  providerFromEnv,
  TabHub,
  McpClient,
  serveMcp,
  newBearerToken,
  TabQueueFullError,
  type McpServer,
  type HostTab,
  type OpenedTab,
  type Run,
  type TypedRun,
  type Json,
  type ScreenshotArea,
  type DialogInfo,
  agentTool,
  type SubAgentUsage,
  ApprovalError,
  type ApprovalDecisions,
  type ApprovalRule,
  type PendingApproval,
} from 'agent-core'

async function seeing(): Promise<void> {
  const seeingHost: BrowserHost = {
    evaluate: async () => null,
    navigate: () => {},
    tabs: () => [],
    openTab: () => ({ id: 't', url: 'about:blank', title: '', active: true }),
    closeTab: () => {},
    activateTab: () => {},
    screenshot: async (area: ScreenshotArea, maxWidth, maxHeight, tab) => {
      if (area.kind === 'region') console.log(area.x + area.width, maxWidth, maxHeight, tab)
      return new Uint8Array(0)
    },
    setFiles: (element, paths) => console.log(element, paths.join()),
    hover: (x, y) => console.log(x + y),
    pressKey: (key, modifiers) => console.log(key, modifiers.length),
    dialog: (): DialogInfo | null => ({ kind: 'prompt', message: 'name?', defaultText: '' }),
    answerDialog: (accept, text) => console.log(accept, text ?? ''),
  }
  const agent = new Agent({
    provider: new ScriptedProvider([]),
    tools: [pageTools(seeingHost, { uploadRoot: '/tmp', screenshotMaxWidth: 800, screenshotMaxHeight: 600 })],
    config: { vision: 'on', maxImages: 2 },
    systemPrompt: browserPrompt({ vision: true }),
  })
  const sees: boolean = agent.takesImages
  console.log(sees)
  // @ts-expect-error: vision is auto, on or off
  new Agent({ provider: new ScriptedProvider([]), config: { vision: true } })
  // @ts-expect-error: a screenshot is bytes, not text
  pageTools({ ...seeingHost, screenshot: () => 'base64' })
}
void seeing

async function tabs(): Promise<void> {
  const hub = await TabHub.create({ provider: new ScriptedProvider([]), autoWakeBudget: 2, sendToTab: true })
  const id = await hub.openTab({ readTab: true })
  const d = await hub.deliver(id, 'hi', { origin: 'human' })
  const typedDelivery = await hub.deliver(id, 'Capital?', { schema: { type: 'object' } })
  const delivered: Json | undefined = await typedDelivery.run?.result()
  const untyped: string | undefined = await d.run?.result()
  console.log(delivered, untyped)
  if (d.status === 'started' && d.run) console.log((await d.run.outcome).status)
  const r = hub.resolve('abc')
  if (r.status === 'ok') console.log(r.handle)
  for await (const ev of hub.events()) if (ev.event?.type === 'run_completed') break
}
void tabs

async function oneAgentPerTab(): Promise<void> {
  // The default browser-agent prompt.
  const systemPrompt: string = browserPrompt({ ownTab: true, clarification: true, instructions: ['Prices are in euros.'] })
  browserPrompt({ instructions: 'one paragraph' })
  // @ts-expect-error: ownTab is a boolean
  browserPrompt({ ownTab: 'yes' })
  void systemPrompt
  // Tools bound to one host tab.
  const bound = new Agent({ provider: new ScriptedProvider([]), tools: [pageTools(host, { tab: 't1', settleTimeoutMs: 200 })] })
  // @ts-expect-error: a host tab id is a string
  pageTools(host, { tab: 1 })
  // A hub whose tabs get page tools bound to their wired browser tabs.
  const hub = await TabHub.create({
    provider: new ScriptedProvider([]),
    pageTools: { host, settleTimeoutMs: 200, maxElements: 50 },
    openedTabPolicy: (opened: OpenedTab) => (opened.url.startsWith('https://docs.') ? 'new_agent' : 'same_agent'),
  })
  await TabHub.create({ provider: new ScriptedProvider([]), openedTabPolicy: 'new_agent' })
  // @ts-expect-error: owners are snake_case wire values
  await TabHub.create({ provider: new ScriptedProvider([]), openedTabPolicy: 'sameAgent' })
  // @ts-expect-error: the page tools need their host
  await TabHub.create({ provider: new ScriptedProvider([]), pageTools: { settleTimeoutMs: 200 } })
  const tab: string = await hub.openTabForHost('t1')
  hub.wireHostTab(tab, 't2')
  const where: HostTab = hub.hostTab(tab)
  if (where.state !== 'unwired') console.log(where.hostTab.toUpperCase())
  // @ts-expect-error: an unwired tab has no host tab
  if (where.state === 'unwired') console.log(where.hostTab)
  const owned: string[] = hub.hostTabs(tab)
  const owner: string | null = hub.tabForHost('t2')
  const closedIn: string | null = hub.hostTabClosed('t2')
  const adopter: string = await hub.adoptHostTab(tab, 't3', 'https://example.com/')
  await TabHub.create({ provider: new ScriptedProvider([]), pageTools: host })
  const resumed: Run = await hub.answerClarification(tab, 'q1', 'yes')
  await hub.dismissClarification(tab, 'q1')
  const session = await hub.session(tab)
  await session.dismissClarification('q1')
  const last: string | null = resumed.status().lastMessage
  // Tool-call cap: a number, the default (absent), or null for no cap.
  new Agent({ provider: new ScriptedProvider([]), config: { maxToolCalls: null } })
  new Agent({ provider: new ScriptedProvider([]), config: { maxToolCalls: 30 } })
  // @ts-expect-error: the cap is a number
  new Agent({ provider: new ScriptedProvider([]), config: { maxToolCalls: 'none' } })
  console.log(bound, owned, owner, closedIn, adopter, last)
}
void oneAgentPerTab

async function mcp(): Promise<void> {
  const stdio = await McpClient.connect({ alias: 'everything', command: 'node', args: ['server.js'], env: { A: 'b' }, cwd: '/tmp' })
  const http = await McpClient.connect({ alias: 'remote', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'x' } })
  // @ts-expect-error: an alias is required
  await McpClient.connect({ command: 'node' })
  const agent = new Agent({ provider: new ScriptedProvider([]), tools: [stdio.tools(), http.tools()], gate: () => true })
  const names: string[] = stdio.toolNames
  const server: McpServer = await serveMcp({ tools: [fsTools({ root: '/tmp' })], gate: (req) => req.tool !== 'fs_write' })
  const url: string = server.url
  await server.shutdown()
  await stdio.close()
  const ac = new AbortController()
  const hub = await TabHub.create({ provider: new ScriptedProvider([]) })
  await hub.deliver('t', 'hi', { signal: ac.signal })
  console.log(agent, names, url)
}
void mcp

async function safetyOptions(): Promise<void> {
  const server = await serveMcp({ tools: [], bearerToken: true, allowedOrigins: ['https://app.example.com'] })
  const token: string | null = server.bearerToken
  await serveMcp({ tools: [], bearerToken: newBearerToken() })
  // @ts-expect-error: a token is a string or true
  await serveMcp({ tools: [], bearerToken: 42 })
  await McpClient.connect({ alias: 'r', url: server.url, headers: { Authorization: `Bearer ${token}` }, requestTimeoutMs: 5000 })
  fsTools({ root: '/tmp', maxWriteBytes: 1024, shellEnv: { inheritAll: false, passthrough: ['TERM'], set: { A: 'b' } } })
  pageTools(host, { scrapeLoopbackHttp: true, scrape: { allowLoopback: true, allowPrivate: false, extraRootsPem: [] } })
  const hub = await TabHub.create({ provider: new ScriptedProvider([]), maxHeldMessages: 4 })
  try {
    await hub.deliver('t', 'hi', { origin: 'agent' })
  } catch (e) {
    if (e instanceof TabQueueFullError) console.log(e.code)
  }
}
void safetyOptions

const host: BrowserHost = {
  evaluate: async (expression) => expression.length,
  navigate: async () => {},
  tabs: () => [{ id: 't1', url: 'about:blank', title: '', active: true }],
  openTab: async (url) => ({ id: 't2', url: url ?? 'about:blank', title: '', active: false }),
  closeTab: () => {
    throw new HostError('gone', 'disconnected')
  },
  activateTab: () => {},
}

async function more(): Promise<void> {
  const store = await SqliteStore.open('/tmp/x.db')
  await SqliteStore.open('/tmp/y.db', { durability: 'full', busyTimeoutMs: 100, maxSizeBytes: null })
  await SqliteStore.open(new URL('file:///tmp/z.db'))
  // @ts-expect-error: a path is a string or a file: URL
  await SqliteStore.open(undefined)
  new OpenAICompatible({ model: 'm', http: { maxAttempts: 1, callTimeoutMs: 5000, proxy: null }, headers: { 'X-A': 'b' } })
  // @ts-expect-error: HTTP settings live in `http`
  new OpenAICompatible({ model: 'm', maxAttempts: 1 })
  // @ts-expect-error: the class says which kind
  new OpenAICompatible({ model: 'm', kind: 'gemini' })
  const agent = new Agent({
    provider: new OpenAICompatible({ model: 'm', baseUrl: 'http://127.0.0.1:1/v1' }),
    store,
    tools: [fsTools({ root: '/tmp' }).withGated(['fs_write'], false), pageTools(host, { settleTimeoutMs: 100 })],
  })
  const p = providerFromEnv()
  console.log(p.model, agent.toolNames, store.path)
  // @ts-expect-error: a host needs every required method
  pageTools({ evaluate: () => 1 })
}
void more

const book = tool({
  name: 'book',
  parameters: z.object({ name: z.string(), guests: z.number().int() }),
  execute: async (args, cx) => {
    const name: string = args.name
    const guests: number = args.guests
    // @ts-expect-error: not a field of the zod schema
    args.missing
    cx.signal.throwIfAborted()
    return { booked: name, guests }
  },
})

const add = tool<{ a: number; b: number }>({
  name: 'add',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
  gated: true,
  parallelSafe: true,
  timeoutMs: 1000,
  execute: ({ a, b }) => String(a + b),
})

const fatal = tool({
  name: 'fatal',
  execute: () => {
    throw new FatalToolError('host gone', { cause: new Error('x') })
  },
})

const retry = tool({
  name: 'retry',
  execute: () => {
    throw new ToolError('later', { retryable: true })
  },
})

async function main(): Promise<void> {
  const agent = new Agent({
    provider: new ScriptedProvider([
      { toolCalls: [{ name: 'book', arguments: { name: 'Ada', guests: 2 } }] },
      { delayMs: 10, then: { text: 'ok' } },
      { error: { kind: 'rate_limited', retryAfterMs: 100 } },
      { hang: '' },
    ]),
    tools: [book, add, fatal, retry],
    store: new MemoryStore(),
    gate: async (req: GateRequest) => (req.tool === 'add' ? true : { allow: false, reason: 'no' }),
    config: { maxIterations: 10, onDenial: 'tell_model', toolTimeoutMs: 5000, compaction: { ratio: 0.5 }, compression: { maxDepth: 3 } },
    onEvent: (ev) => {
      if (ev.type === 'tool_call_started') console.log(ev.name, ev.arguments)
    },
  })
  const session = await agent.createSession()
  const run = session.send('hi', { signal: AbortSignal.timeout(1000) })
  for await (const ev of run.events()) {
    const e: AgentEvent = ev
    switch (e.type) {
      case 'content_token':
        console.log(e.text.length)
        break
      case 'tool_call_succeeded':
        console.log(e.output, e.durationMs)
        break
      case 'run_completed':
      case 'run_failed':
        console.log(e.outcome.status, e.outcome.errorKind)
        break
      default:
        // @ts-expect-error: only final events have an outcome
        e.outcome
    }
  }
  const status: RunStatus = run.status()
  const outcome: Outcome = await run.outcome
  if (outcome.status === 'done') console.log(outcome.finalText?.toUpperCase(), status.state)
  try {
    await run.result()
  } catch (e) {
    if (e instanceof RunError) console.log(e.code, e.outcome.iterations)
    if (e instanceof AgentCoreError) console.log(e.code)
  }
  session.send({ content: [{ type: 'text', text: 'parts' }] })
  interface City {
    name: string
    population: number
  }
  const citySchema = { type: 'object', properties: { name: { type: 'string' }, population: { type: 'integer' } } }
  const typed: TypedRun<City> = session.sendTyped<City>('Capital?', citySchema, { name: 'City', strict: true })
  const city: City | undefined = (await typed.outcome).structured
  console.log(city?.population.toFixed(0))
  const answer: City = await typed.result()
  console.log(answer.name)
  const text: string = await session.send('plain').result()
  console.log(text)

  const loose: Outcome = await session.sendTyped({ content: [{ type: 'text', text: 'x' }] }, { toJSONSchema: () => citySchema }).outcome
  console.log(loose.structured)
  session.sendTyped('x', { jsonSchema: citySchema }, { signal: AbortSignal.timeout(1000) })
  // @ts-expect-error: a schema is an object
  session.sendTyped('x', 'City')
  // @ts-expect-error: the provider is required
  new Agent({})
  // @ts-expect-error: a step must be a known shape
  new ScriptedProvider([{ delayMs: 'soon' }])
  new ScriptedProvider(['plain text', { text: 'x', usage: { inputTokens: 1, outputTokens: 2 } }])
  // @ts-expect-error: keys are camelCase
  new ScriptedProvider([{ tool_calls: [] }])
  agent.close()

  const redact: AgentHooks = {
    beforeModelCall: (_sessionId, request) => ({ ...request, system: null }),
    afterModelCall: async (_sessionId, response) => {
      if (response.finishReason === 'length') return response
    },
    beforeToolCall: (call) => (call.origin.kind === 'tab' ? { deny: 'not from another tab' } : call.tool === 'echo' ? { arguments: { text: 'x' } } : true),
    afterToolCall: (_call, result): HookToolResult | undefined => (result.ok ? { ...result, content: [] } : { ok: false, error: result.error }),
    turnEnded: (_sessionId, outcome) => console.log(outcome.errorKind === 'hook'),
  }
  new Agent({ provider: new ScriptedProvider([]), hooks: [redact] })
  // @ts-expect-error: a denial's reason is a string
  new Agent({ provider: new ScriptedProvider([]), hooks: [{ beforeToolCall: () => ({ deny: 3 }) }] })
  // @ts-expect-error: `false` is not a decision
  new Agent({ provider: new ScriptedProvider([]), hooks: [{ beforeToolCall: () => false }] })

  const researcher = new Agent({ provider: new ScriptedProvider(['Paris']) })
  const lead = new Agent({
    provider: new ScriptedProvider([]),
    tools: [agentTool('ask_researcher', 'Ask the researcher.', researcher, { maxDepth: 2 }), agentTool('again', 'Again.', researcher)],
  })
  const spent: SubAgentUsage[] = (await (await lead.createSession()).send('go').outcome).subAgents ?? []
  console.log(spent.map((s) => [s.tool, s.calls, s.iterations, s.usage.inputTokens]))
  // @ts-expect-error: maxDepth is a number
  agentTool('x', 'y', researcher, { maxDepth: '2' })
  // @ts-expect-error: the agent must be an Agent
  agentTool('x', 'y', new ScriptedProvider([]))
}

void main

async function approvals(): Promise<void> {
  const agent = new Agent({
    provider: new ScriptedProvider([]),
    gate: (req) =>
      req.tool === 'pay'
        ? { decision: 'ask', prompt: `Pay ${JSON.stringify(req.arguments)} on ${req.host ?? 'no page'}?` }
        : req.tool === 'rm'
          ? 'ask'
          : true,
    config: { approvalTtlMs: 60_000 },
  })
  // @ts-expect-error: 'maybe' is not an answer
  new Agent({ provider: new ScriptedProvider([]), gate: () => 'maybe' })
  const session = await agent.createSession()
  const outcome = await session.send('pay').outcome
  if (outcome.status === 'awaiting_approval' && outcome.approval) {
    const a: PendingApproval = outcome.approval
    const call = a.calls[0]
    const prompt: string | undefined = call.prompt
    const outermost: string | undefined = call.via?.[0]?.sessionId
    const decisions: ApprovalDecisions = {
      [call.callId]: { decision: 'approve', arguments: { amount: 200 }, remember: 'session' },
      other: 'reject',
      third: { decision: 'reject', reason: 'too much', remember: 'always' },
      fourth: { decision: 'approve', remember: { host: '*.example.com' } },
    }
    const host: string | undefined = call.host
    console.log(host)
    const run: Run = session.resolveApproval(a.id, decisions, { signal: AbortSignal.timeout(1000) })
    console.log(prompt, outermost, a.expiresAtMs - a.askedAtMs, a.origin.kind, run.id)
    // @ts-expect-error: a reason goes with a rejection
    session.resolveApproval(a.id, { [call.callId]: { decision: 'approve', reason: 'x' } })
    // @ts-expect-error: remember is 'session', 'always' or { host }
    session.resolveApproval(a.id, { [call.callId]: { decision: 'approve', remember: 'forever' } })
    // @ts-expect-error: a host pattern is a string
    session.resolveApproval(a.id, { [call.callId]: { decision: 'approve', remember: { host: 1 } } })
  }
  const pending: PendingApproval | null = session.pendingApproval()
  if (pending) await session.dismissApproval(pending.id)
  const rules: ApprovalRule[] = await agent.approvalRules()
  const revoked: boolean = await agent.revokeApprovalRule(rules[0].id)
  console.log(rules.map((r) => [r.tool, r.sessionId ?? 'every session', r.hostPattern ?? 'any host', r.allow, r.reason, r.createdAtMs]), revoked)
  for await (const e of session.send('x').events()) {
    if (e.type === 'approval_pending') console.log(e.approval.calls.length)
    if (e.type === 'approval_resolved' && e.resolution === 'answered') console.log(Object.values(e.decisions)[0].decision)
    if (e.type === 'approval_resolved' && e.resolution === 'dismissed') console.log(e.decisions.reason)
    if (e.type === 'approval_expired') console.log(e.approvalId)
  }
  const hub = await TabHub.create({ provider: new ScriptedProvider([]), gate: () => 'ask' })
  const tab = await hub.openTab()
  const resumed: Run = await hub.resolveApproval(tab, 'a1', { c1: 'approve' })
  await hub.dismissApproval(tab, 'a1')
  try {
    session.resolveApproval('a1', {})
  } catch (e) {
    if (e instanceof ApprovalError && e.code === 'approval_invalid_arguments') console.log(e.message, resumed.id)
  }
}
void approvals
