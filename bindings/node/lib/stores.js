'use strict'
/**
 * Where sessions are kept (memory, SQLite, PostgreSQL) and the encrypted key store beside them.
 * @module agent-core/stores
 */
const { fileURLToPath } = require('node:url')
const native = require('../index.js')
const { wrap, ConfigError, requireString } = require('./errors.js')

/**
 * The database file `path` names: a string as it is, or a `file:` URL. Anything else is refused
 * instead of being turned into text, so that an unset variable (`undefined`) is an error rather
 * than a database file named "undefined" in the working directory.
 * @param {unknown} path
 * @returns {string}
 */
function databasePath(path) {
  if (typeof path === 'string') return path
  if (path instanceof URL && path.protocol === 'file:') {
    try {
      return fileURLToPath(path)
    } catch (e) {
      // A file: URL naming another host, or an encoded '/' in a segment.
      throw new ConfigError(`SqliteStore.open: ${e instanceof Error ? e.message : String(e)}`, 'invalid_argument')
    }
  }
  return requireString(path, 'SqliteStore.open', 'path', 'a string or a file: URL')
}

/** A store keeping sessions in this process's memory (lost when the process ends). */
class MemoryStore {
  constructor() {
    /** @internal */
    this.native = native.NativeStore.memory()
  }
  /** The ids of the stored sessions. */
  sessionIds() {
    return wrap(() => this.native.sessionIds())
  }
}

/** A store keeping sessions in a SQLite file (WAL; survives restarts; crash repair on open). */
class SqliteStore {
  /** @internal @param {any} n @param {string} path */
  constructor(n, path) {
    /** @internal */
    this.native = n
    /** The database file. */
    this.path = path
  }
  /**
   * Opens (or creates) the database at `path`. The loop's writes are queued and committed in
   * groups (a turn's outcome is returned once it is durable); `options` (the `SqliteOptions`
   * of the options format, read by the native module) tune that.
   * @param {string | URL} path a file path, or a `file:` URL
   * @param {import('./stores').SqliteStoreOptions} [options]
   */
  static async open(path, options) {
    const file = databasePath(path)
    return new SqliteStore(await wrap(() => native.openSqliteStore(file, options)), file)
  }
  /** The ids of the stored sessions. */
  sessionIds() {
    return wrap(() => this.native.sessionIds())
  }
}

/**
 * A store keeping sessions in a PostgreSQL database, for sessions several machines reach. The
 * schema is migrated on connect (safely when several processes connect at once); two writers to
 * one session never interleave. Connections are made without TLS: keep the server on the same
 * host or a private network.
 */
class PostgresStore {
  /** @internal @param {any} n @param {string | null} schema */
  constructor(n, schema) {
    /** @internal */
    this.native = n
    /** The schema the tables live in, when one was given. */
    this.schema = schema
  }
  /**
   * Connects to the database at `url` (`postgres://user:password@host:port/database`) and
   * migrates its schema. `options` are the `PostgresOptions` of the options format. A server
   * that cannot be reached rejects with a `StoreError` saying where it tried.
   * @param {string | URL} url
   * @param {import('./stores').PostgresStoreOptions} [options]
   */
  static async connect(url, options) {
    const text = requireString(url instanceof URL ? url.href : url, 'PostgresStore.connect', 'url', 'a string or a URL')
    return new PostgresStore(await wrap(() => native.openPostgresStore(text, options)), options?.schema ?? null)
  }
  /** The ids of the stored sessions. */
  sessionIds() {
    return wrap(() => this.native.sessionIds())
  }
}

/**
 * API keys, one per provider, kept encrypted in a SqliteStore's database through a `Crypt`
 * written in JS (for example Electron's `safeStorage`). Keys are never stored in plaintext.
 */
class KeyStore {
  /** @internal @param {any} n */
  constructor(n) {
    /** @internal */
    this.native = n
  }
  /**
   * @param {SqliteStore} store
   * @param {{ isEncryptionAvailable(): boolean, encryptString(text: string): Uint8Array, decryptString(data: Uint8Array): string }} crypt
   *   synchronous methods; throw an error with `code: 'unavailable'` when encryption cannot be used
   * @param {{ providers?: string[] }} [options] the accepted providers (default: the built-in list)
   */
  static create(store, crypt, options = {}) {
    if (!(store instanceof SqliteStore)) throw new ConfigError('KeyStore.create: store must be a SqliteStore', 'invalid_argument')
    for (const m of ['isEncryptionAvailable', 'encryptString', 'decryptString']) {
      if (!crypt || typeof crypt[m] !== 'function') throw new ConfigError(`KeyStore.create: crypt has no ${m}()`, 'invalid_argument')
    }
    const call = (/** @type {any} */ r) => {
      try {
        let ok
        if (r.op === 'available') ok = Boolean(crypt.isEncryptionAvailable())
        else if (r.op === 'encrypt') ok = Buffer.from(crypt.encryptString(r.data)).toString('base64')
        else ok = String(crypt.decryptString(Buffer.from(r.data, 'base64')))
        return { ok }
      } catch (e) {
        const err = /** @type {any} */ (e)
        return { error: err instanceof Error ? err.message : String(err), unavailable: err?.code === 'unavailable' }
      }
    }
    return new KeyStore(wrap(() => native.NativeKeyStore.create(store.native, call, options.providers)))
  }
  /** The accepted providers. */
  get providers() {
    return this.native.providers()
  }
  /** Encrypts and stores a provider's key (surrounding whitespace removed). @param {string} provider @param {string} key */
  setKey(provider, key) {
    return wrap(() => this.native.setKey(provider, key))
  }
  /** A provider's key, or null when none is stored or it does not decrypt here. @param {string} provider */
  getKey(provider) {
    return wrap(() => this.native.getKey(provider))
  }
  /** `[{ provider, usable, stored }]`, never the keys. */
  status() {
    return wrap(() => this.native.status())
  }
  /** Removes a provider's key. @param {string} provider */
  clearKey(provider) {
    return wrap(() => this.native.clearKey(provider))
  }
}

module.exports = { MemoryStore, SqliteStore, PostgresStore, KeyStore }
