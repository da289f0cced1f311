// The hand-written declarations (lib/*.d.ts) checked against the JavaScript they describe, so the
// two cannot drift: each module's exports, each class's members and statics, and the option
// names each function reads. The declarations are read with the TypeScript compiler's checker
// (interfaces, `extends`, unions and overloads resolved); the JS is read twice, loaded (what it
// exports, what its prototypes hold) and parsed (which option names it reads).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const require = createRequire(import.meta.url)
const LIB = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'lib')
const MODULES = readdirSync(LIB)
  .filter((f) => f.endsWith('.d.ts') && f !== 'index.d.ts')
  .map((f) => f.slice(0, -'.d.ts'.length))
  .sort()
/** The native handle every wrapper carries: read across modules, never part of the public types. */
const INTERNAL_READS = new Set(['native'])

const program = ts.createProgram(
  MODULES.map((m) => path.join(LIB, `${m}.d.ts`)).concat(path.join(LIB, 'index.d.ts')),
  { noEmit: true, strict: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, types: ['node'], lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts'] },
)
const checker = program.getTypeChecker()
const api = require('../lib/index.js')

/** The values (classes, functions) a declaration file exports, by name. */
function declaredValues(/** @type {string} */ file) {
  const sf = program.getSourceFile(file)
  assert.ok(sf, file)
  const out = new Map()
  for (let s of checker.getExportsOfModule(checker.getSymbolAtLocation(sf))) {
    if (s.flags & ts.SymbolFlags.Alias) s = checker.getAliasedSymbol(s)
    if (s.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Function | ts.SymbolFlags.Variable)) out.set(s.name, s)
  }
  return out
}

/** A member's runtime key: `__@dispose@12` (a well-known symbol) becomes `Symbol.dispose`. */
function keyOf(/** @type {ts.Symbol} */ s) {
  const m = /^__@(\w+)@/.exec(s.escapedName)
  return m ? Symbol[m[1]] : s.name
}

const isPrivate = (/** @type {ts.Symbol} */ s) =>
  (s.declarations ?? []).some((d) => ts.getCombinedModifierFlags(d) & ts.ModifierFlags.Private)
const isMethod = (/** @type {ts.Symbol} */ s) => (s.declarations ?? []).some((d) => ts.isMethodDeclaration(d) || ts.isMethodSignature(d))

/** Where a key lives on the prototype chain (up to Object / Error), or undefined. */
function lookup(/** @type {any} */ proto, /** @type {PropertyKey} */ key) {
  for (let p = proto; p && p !== Object.prototype && p !== Error.prototype; p = Object.getPrototypeOf(p)) {
    const d = Object.getOwnPropertyDescriptor(p, key)
    if (d) return d
  }
  return undefined
}

/** Parsed JS modules, and in each the `this.x =` names each class's constructor assigns. */
const parsed = new Map()
function js(/** @type {string} */ mod) {
  if (!parsed.has(mod)) {
    const file = path.join(LIB, `${mod}.js`)
    parsed.set(mod, ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS))
  }
  return parsed.get(mod)
}
function jsClass(/** @type {string} */ mod, /** @type {string} */ name) {
  return js(mod).statements.find((s) => ts.isClassDeclaration(s) && s.name?.text === name)
}
/** Names a class (and its superclasses in the same file) assigns on `this` in a constructor. */
function assignedFields(/** @type {string} */ mod, /** @type {string} */ name) {
  const out = new Set()
  for (let c = jsClass(mod, name); c; ) {
    const ctor = c.members.find(ts.isConstructorDeclaration)
    const visit = (/** @type {ts.Node} */ n) => {
      if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isPropertyAccessExpression(n.left) && n.left.expression.kind === ts.SyntaxKind.ThisKeyword) out.add(n.left.name.text)
      ts.forEachChild(n, visit)
    }
    if (ctor) visit(ctor)
    const base = c.heritageClauses?.[0]?.types[0]?.expression
    c = base && ts.isIdentifier(base) ? jsClass(mod, base.text) : undefined
  }
  return out
}

test('index.d.ts declares exactly the values index.js exports', () => {
  const declared = [...declaredValues(path.join(LIB, 'index.d.ts')).keys()].sort()
  assert.deepEqual(declared, Object.keys(api).sort())
})

test("each module's declarations name exactly its public exports", () => {
  for (const mod of MODULES) {
    const declared = [...declaredValues(path.join(LIB, `${mod}.d.ts`)).keys()].sort()
    const exported = Object.keys(require(`../lib/${mod}.js`)).filter((n) => n in api).sort()
    assert.deepEqual(declared, exported, `lib/${mod}.d.ts vs lib/${mod}.js`)
  }
})

test('declared classes match the JS classes: members and statics', () => {
  for (const mod of MODULES) {
    for (const [name, sym] of declaredValues(path.join(LIB, `${mod}.d.ts`))) {
      if (!(sym.flags & ts.SymbolFlags.Class)) continue
      const cls = api[name]
      const where = `${mod}: ${name}`
      const fields = assignedFields(mod, name)
      // Members inherited from the standard library (Error's message, stack...) are not ours to check.
      const ours = (/** @type {ts.Symbol} */ s) => (s.declarations ?? []).some((d) => path.dirname(d.getSourceFile().fileName) === LIB)
      const members = checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(sym)).filter((s) => !isPrivate(s) && ours(s))
      for (const m of members) {
        const key = keyOf(m)
        const d = lookup(cls.prototype, key)
        if (isMethod(m)) assert.equal(typeof d?.value, 'function', `${where}.${String(key)}() is declared, the JS has no such method`)
        else assert.ok((d && d.get) || fields.has(String(key)), `${where}.${String(key)} is declared, the JS has no such getter or field`)
      }
      const declaredKeys = new Set(members.map(keyOf))
      for (let p = cls.prototype; p && p !== Object.prototype && p !== Error.prototype; p = Object.getPrototypeOf(p)) {
        for (const key of Reflect.ownKeys(p)) {
          if (key === 'constructor' || (typeof key === 'string' && key.startsWith('_'))) continue
          assert.ok(declaredKeys.has(key), `${where}.${String(key)} is in the JS but not declared`)
        }
      }
      const statics = checker.getPropertiesOfType(checker.getTypeOfSymbol(sym)).filter((s) => s.name !== 'prototype' && !isPrivate(s) && ours(s))
      assert.deepEqual(
        statics.map((s) => s.name).sort(),
        Object.getOwnPropertyNames(cls).filter((k) => !['length', 'name', 'prototype'].includes(k)).sort(),
        `${where}: static methods`,
      )
    }
  }
})

/** The property names of a declared parameter type, when it is an options object of ours. */
function optionNames(/** @type {ts.Type} */ type) {
  const t = checker.getNonNullableType(type)
  const names = new Set()
  let found = false
  for (const c of t.isUnion() ? t.types : [t]) {
    const s = c.aliasSymbol ?? c.symbol
    const decl = s?.declarations?.[0]
    if (!(c.flags & ts.TypeFlags.Object) || c.getCallSignatures().length > 0 || s.flags & ts.SymbolFlags.Class) continue
    if (!decl || path.dirname(decl.getSourceFile().fileName) !== LIB) continue
    found = true
    for (const p of checker.getPropertiesOfType(c)) names.add(p.name)
  }
  return found ? names : null
}

/**
 * The option names a JS function reads from its parameter: `p.x`, `const { x } = p` (also
 * `= p ?? {}`) or a destructuring parameter. `whole` when the object goes on elsewhere as a
 * whole (to the native module, a rest element): then only "reads nothing undeclared" holds.
 */
function optionReads(/** @type {ts.SignatureDeclaration} */ fn, /** @type {number} */ i) {
  const param = fn.parameters[i]
  const reads = new Set()
  let whole = false
  const pattern = (/** @type {ts.ObjectBindingPattern} */ b) => {
    for (const e of b.elements) {
      if (e.dotDotDotToken) whole = true
      else reads.add((e.propertyName ?? e.name).getText())
    }
  }
  if (ts.isObjectBindingPattern(param.name)) {
    pattern(param.name)
    return { reads, whole }
  }
  const name = param.name.getText()
  const visit = (/** @type {ts.Node} */ n) => {
    if (ts.isIdentifier(n) && n.text === name && n !== param.name) {
      let p = n.parent
      if (ts.isBinaryExpression(p) && p.left === n && p.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken && ts.isVariableDeclaration(p.parent)) p = p.parent
      if (ts.isPropertyAccessExpression(p) && p.expression === n) reads.add(p.name.text)
      else if (ts.isVariableDeclaration(p) && ts.isObjectBindingPattern(p.name)) pattern(p.name)
      else if (ts.isPrefixUnaryExpression(p) || ts.isTypeOfExpression(p) || (ts.isElementAccessExpression(p) && p.expression === n)) {
        // a test of the value (`!p`, `typeof p`, `p[m]`): reads no named option
      } else if (ts.isBinaryExpression(p) && [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken].includes(p.operatorToken.kind)) {
        // compared with null
      } else whole = true
    }
    ts.forEachChild(n, visit)
  }
  if (fn.body) visit(fn.body)
  for (const r of INTERNAL_READS) reads.delete(r)
  return { reads, whole }
}

test('the options each function reads are the options its declaration names', () => {
  let checked = 0
  for (const mod of MODULES) {
    for (const [name, sym] of declaredValues(path.join(LIB, `${mod}.d.ts`))) {
      /** @type {[string, readonly ts.Signature[], ts.SignatureDeclaration | undefined][]} */
      const fns = []
      if (sym.flags & ts.SymbolFlags.Function) {
        const decl = js(mod).statements.find((s) => ts.isFunctionDeclaration(s) && s.name?.text === name)
        fns.push([name, checker.getTypeOfSymbol(sym).getCallSignatures(), decl])
      } else if (sym.flags & ts.SymbolFlags.Class) {
        const c = jsClass(mod, name)
        const member = (/** @type {string} */ n, /** @type {boolean} */ isStatic) =>
          c?.members.find((m) => ts.isMethodDeclaration(m) && m.name.getText() === n && Boolean(ts.getCombinedModifierFlags(m) & ts.ModifierFlags.Static) === isStatic)
        fns.push([`new ${name}`, checker.getTypeOfSymbol(sym).getConstructSignatures(), c?.members.find(ts.isConstructorDeclaration)])
        for (const [type, isStatic] of [[checker.getDeclaredTypeOfSymbol(sym), false], [checker.getTypeOfSymbol(sym), true]]) {
          for (const m of checker.getPropertiesOfType(type)) {
            if (!isMethod(m) || isPrivate(m)) continue
            const sigs = checker.getTypeOfSymbol(m).getCallSignatures()
            fns.push([`${name}${isStatic ? '.' : '#'}${m.name}`, sigs, member(m.name, isStatic)])
          }
        }
      }
      for (const [where, sigs, decl] of fns) {
        const count = Math.max(0, ...sigs.map((s) => s.parameters.length))
        for (let i = 0; i < count; i++) {
          /** @type {Set<string> | null} */
          let declared = null
          for (const s of sigs) {
            const p = s.parameters[i]
            const pd = p?.valueDeclaration
            if (!p || (pd && ts.isParameter(pd) && pd.dotDotDotToken)) continue
            const names = optionNames(checker.getTypeOfSymbol(p))
            if (names) declared = new Set([...(declared ?? []), ...names])
          }
          if (!declared) continue
          assert.ok(decl && decl.parameters[i], `${where}: declared with an options argument ${i}, not found in lib/${mod}.js`)
          const { reads, whole } = optionReads(decl, i)
          const undeclared = [...reads].filter((r) => !declared.has(r))
          assert.deepEqual(undeclared, [], `${where}: argument ${i} is read for options its declaration does not name`)
          if (!whole) {
            const unread = [...declared].filter((d) => !reads.has(d))
            assert.deepEqual(unread, [], `${where}: argument ${i} declares options the JS never reads`)
          }
          checked++
        }
      }
    }
  }
  assert.ok(checked >= 20, `only ${checked} option arguments were checked`)
})
