'use strict'
/**
 * Durable approvals: the person's decisions on a turn parked by a gate's `'ask'`, checked and
 * put in the form the native module takes.
 * @module agent-core/approvals
 */
const { ConfigError } = require('./errors.js')
const { toJsonValue } = require('./tools.js')

const KEYS = { approve: ['decision', 'arguments', 'remember'], reject: ['decision', 'reason', 'remember'] }

/**
 * One decision in its full form.
 * @param {string} where what the message names (`resolveApproval: call c1`)
 * @param {unknown} d
 */
function decision(where, d) {
  if (d === 'approve' || d === 'reject') return { decision: d }
  const kind = d !== null && typeof d === 'object' ? /** @type {any} */ (d).decision : undefined
  if (kind !== 'approve' && kind !== 'reject') {
    throw new ConfigError(
      `${where}: expected 'approve', 'reject', { decision: 'approve', arguments?, remember? } or { decision: 'reject', reason?, remember? }`,
      'invalid_argument',
    )
  }
  const given = /** @type {Record<string, unknown>} */ (d)
  const unknown = Object.keys(given).filter((k) => !KEYS[kind].includes(k))
  if (unknown.length > 0) {
    throw new ConfigError(`${where}: unknown key \`${unknown[0]}\` (expected ${KEYS[kind].join(', ')})`, 'invalid_argument')
  }
  /** @type {Record<string, unknown>} */
  const out = { decision: kind }
  if (given.remember != null) out.remember = remember(where, given.remember)
  if (kind === 'approve' && given.arguments !== undefined) out.arguments = toJsonValue(given.arguments)
  if (kind === 'reject' && given.reason != null) out.reason = String(given.reason)
  return out
}

/**
 * A decision's `remember`: `'session'`, `'always'` or `{ host: pattern }` (the pattern is
 * checked against the call's host by the core).
 * @param {string} where
 * @param {unknown} r
 */
function remember(where, r) {
  if (r === 'session' || r === 'always') return r
  const host = r !== null && typeof r === 'object' && !Array.isArray(r) ? /** @type {any} */ (r).host : undefined
  if (typeof host === 'string' && Object.keys(/** @type {object} */ (r)).length === 1) return { host }
  throw new ConfigError(
    `${where}: \`remember\` must be 'session', 'always' or { host: '*.example.com' }`,
    'invalid_argument',
  )
}

/**
 * The person's decisions, by call id, in the form the native module takes.
 * @param {string} method the method that was called, for messages
 * @param {unknown} decisions
 */
function approvalDecisions(method, decisions) {
  if (decisions === null || typeof decisions !== 'object' || Array.isArray(decisions)) {
    throw new ConfigError(`${method}: \`decisions\` must be an object keyed by call id`, 'invalid_argument')
  }
  /** @type {Record<string, unknown>} */
  const out = {}
  for (const [callId, d] of Object.entries(decisions)) {
    // Defined, not assigned: a call id is data, even `__proto__`.
    Object.defineProperty(out, callId, {
      value: decision(`${method}: call ${callId}`, d),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return out
}

module.exports = { approvalDecisions }
