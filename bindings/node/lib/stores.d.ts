/** Where sessions are kept, and the encrypted key store beside them. */

/** Where sessions are persisted. */
export interface Store {}

/**
 * How a SqliteStore writes: the `SqliteOptions` of the options format, in camelCase. Every key
 * has a default; an unknown key is refused with a `ConfigError`.
 */
export interface SqliteStoreOptions {
  /** `normal` (default: survives the process being killed) or `full` (also a power loss, one fsync per commit). */
  durability?: 'normal' | 'full'
  /** Queue the loop's writes and commit them in groups (default true); false makes every write wait for its commit. */
  writeBehind?: boolean
  /** The longest wait for more writes before a group is committed, in ms (default 2). */
  groupCommitDelayMs?: number
  /** Caps the database file, in bytes; a write past it fails like a full disk and ends the turn (default: no cap). */
  maxSizeBytes?: number | null
  /** How long a connection waits for another process's write lock, in ms (default 5000). */
  busyTimeoutMs?: number
  /** Read connections kept open for reuse (default 4). */
  maxIdleReaders?: number
}

/** A store keeping sessions in a SQLite file (WAL; survives restarts; an interrupted turn is repaired on open). */
export declare class SqliteStore implements Store {
  private constructor()
  /**
   * Opens (or creates) the database at `path`. The loop's writes are queued and committed in
   * groups; a turn's outcome is returned once everything it wrote is durable. `path` is a file
   * path or a `file:` URL; anything else rejects with a `ConfigError` (`invalid_argument`).
   */
  static open(path: string | URL, options?: SqliteStoreOptions): Promise<SqliteStore>
  /** The database file. */
  readonly path: string
  /** The ids of the stored sessions. */
  sessionIds(): Promise<string[]>
}

/**
 * How a PostgresStore connects: the `PostgresOptions` of the options format, in camelCase. Every
 * key has a default; an unknown key is refused with a `ConfigError`.
 */
export interface PostgresStoreOptions {
  /** Connections the pool keeps at most (default 8). */
  maxConnections?: number
  /** The schema the tables live in, created if missing (default: the server's search_path, usually `public`); lowercase letters, digits and `_`. */
  schema?: string | null
  /** How long opening one connection may take, in ms (default 10000). */
  connectTimeoutMs?: number
}

/**
 * A store keeping sessions in a PostgreSQL database, for sessions several machines reach (schema
 * migrated on connect; two writers to one session never interleave). Connections are made
 * without TLS: keep the server on the same host or a private network.
 */
export declare class PostgresStore implements Store {
  private constructor()
  /** Connects to `postgres://user:password@host:port/database` and migrates its schema. */
  static connect(url: string | URL, options?: PostgresStoreOptions): Promise<PostgresStore>
  /** The schema the tables live in, when one was given. */
  readonly schema: string | null
  /** The ids of the stored sessions. */
  sessionIds(): Promise<string[]>
}

/** A store keeping sessions in this process's memory. */
export declare class MemoryStore implements Store {
  constructor()
  /** The ids of the stored sessions. */
  sessionIds(): Promise<string[]>
}

/** Encrypts API keys for the key store (synchronous; Electron's `safeStorage` fits). */
export interface Crypt {
  isEncryptionAvailable(): boolean
  encryptString(plaintext: string): Uint8Array
  decryptString(ciphertext: Uint8Array): string
}

/** API keys, one per provider, encrypted in a SqliteStore's database; never stored in plaintext. */
export declare class KeyStore {
  private constructor()
  static create(store: SqliteStore, crypt: Crypt, options?: { providers?: string[] }): KeyStore
  readonly providers: string[]
  setKey(provider: string, key: string): Promise<void>
  getKey(provider: string): Promise<string | null>
  status(): Promise<{ provider: string; usable: boolean; stored: boolean }[]>
  clearKey(provider: string): Promise<void>
}
