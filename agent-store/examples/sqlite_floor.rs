//! The least SQLite itself spends on what the side-by-side comparison's turn
//! (`benches/src/bin/compare.rs`) writes at 100 sessions: per model call, the assistant's tool
//! call and the tool's result as two message rows and the call's final record as one
//! tool-call upsert; per session, its row, the user's message and the answer.
//!
//! No store around it: one thread, one connection, the rows' texts made once, prepared
//! single-row statements, one transaction per model call of every session (about the group
//! a commit takes at 100 sessions), and no checkpoints (the store runs them on a thread of its
//! own). What is left is SQLite's own work for those rows on the schema `SqliteStore`
//! creates: the figure a store of this schema cannot go below. The same rows are also written
//! with the foreign keys off, and into tables with no index, key or check, to show what the
//! schema's checks and indexes cost; the three kinds take turns generation by generation.
//!
//! ```sh
//! cargo run --release -p agent-store --example sqlite_floor -- [generations] [sessions] [steps] [kind]
//! ```
//!
//! `kind` (`store`, `no-foreign-keys` or `bare`) runs that kind alone, for a profiler: under
//! `valgrind --tool=callgrind`, the difference between two numbers of generations divided by
//! the model calls between them is SQLite's instructions per model call.

#![allow(clippy::print_stdout)]

use std::error::Error;
use std::time::Instant;

use agent_core::SessionId;
use rusqlite::{Connection, Statement, params};

// The texts of the rows `SqliteStore` writes for the comparison's turn.
const USER_CONTENT: &str = r#"[{"type":"text","text":"go"}]"#;
const ANSWER_CONTENT: &str = r#"[{"type":"text","text":"done"}]"#;
const TOOL_CALLS: &str = r#"[{"id":"call_0_0","name":"step","arguments":"{}"}]"#;
const RESULT_CONTENT: &str = r#"[{"type":"text","text":"ok"}]"#;

/// One way of writing the rows.
#[derive(Clone, Copy)]
enum Kind {
    /// The schema as `SqliteStore` creates it, foreign keys on.
    Store,
    /// The same schema with the foreign keys off.
    NoForeignKeys,
    /// Tables of the same columns with no index, key or check: SQLite appending rows.
    BareTables,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::Store, Kind::NoForeignKeys, Kind::BareTables];

    fn arg(self) -> &'static str {
        match self {
            Kind::Store => "store",
            Kind::NoForeignKeys => "no-foreign-keys",
            Kind::BareTables => "bare",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Store => "schema as shipped",
            Kind::NoForeignKeys => "foreign keys off",
            Kind::BareTables => "no indexes, keys or checks",
        }
    }
}

fn open(path: &std::path::Path, kind: Kind) -> Result<Connection, Box<dyn Error>> {
    let mut conn = Connection::open(path)?;
    conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    match kind {
        Kind::Store | Kind::NoForeignKeys => {
            agent_store::migrations::migrate_to(&mut conn, agent_store::migrations::latest_version())?;
        }
        Kind::BareTables => conn.execute_batch(
            "CREATE TABLE sessions (key INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL,
                 title TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
             CREATE TABLE messages (session_key INTEGER, seq INTEGER, role TEXT, content TEXT,
                 tool_calls TEXT, tool_call_id TEXT, tool_name TEXT, is_error INTEGER, compressed TEXT,
                 reasoning TEXT, model_visible INTEGER, user_visible INTEGER, created_at INTEGER);
             CREATE TABLE tool_calls (session_key INTEGER, call_id TEXT, name TEXT, arguments TEXT,
                 state TEXT, raw_result TEXT, compressed_result TEXT, error TEXT, started_at INTEGER,
                 finished_at INTEGER, created_at INTEGER);",
        )?,
    }
    conn.pragma_update(None, "foreign_keys", matches!(kind, Kind::Store))?;
    Ok(conn)
}

/// Creates `count` sessions with random ids and returns their keys.
fn create_sessions(conn: &Connection, count: usize) -> Result<Vec<i64>, Box<dyn Error>> {
    let mut insert = conn.prepare_cached("INSERT INTO sessions (id, created_at, updated_at) VALUES (?, 0, 0)")?;
    let mut keys = Vec::with_capacity(count);
    for _ in 0..count {
        keys.push(insert.insert(params![SessionId::new_random().as_str()])?);
    }
    Ok(keys)
}

/// Seconds a generation of sessions took, in all and in its commits.
#[derive(Default)]
struct Seconds {
    all: Vec<f64>,
    commits: Vec<f64>,
}

/// One generation: `sessions` new sessions, each given a user message, `steps` model calls
/// that call the tool, and the answer, one model call of every session per transaction.
fn generation(conn: &Connection, sessions: usize, steps: usize, seconds: &mut Seconds) -> Result<(), Box<dyn Error>> {
    let mut insert = conn.prepare_cached(
        "INSERT INTO messages (session_key, seq, role, content, tool_calls, tool_call_id, tool_name,
             is_error, compressed, reasoning, model_visible, user_visible, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 0, NULL, NULL, 1, 1, ?)",
    )?;
    let mut upsert = conn.prepare_cached(
        "INSERT INTO tool_calls (session_key, call_id, name, arguments, state, raw_result,
             compressed_result, error, started_at, finished_at, created_at)
         VALUES (?, ?, 'step', '{}', 'succeeded', 'ok', NULL, NULL, ?, ?, ?)",
    )?;
    let now = 1_765_000_000_000_i64;
    let started = Instant::now();
    let mut in_commits = 0.0;
    let mut commit = || -> Result<(), Box<dyn Error>> {
        let at = Instant::now();
        conn.execute_batch("COMMIT")?;
        in_commits += at.elapsed().as_secs_f64();
        Ok(())
    };
    conn.execute_batch("BEGIN")?;
    let keys = create_sessions(conn, sessions)?;
    for key in &keys {
        insert_text(&mut insert, *key, 1, "user", USER_CONTENT, now)?;
    }
    for step in 0..steps {
        if step > 0 {
            commit()?;
            conn.execute_batch("BEGIN")?;
        }
        let call_id = format!("call_{step}_0");
        let seq = 2 * step as i64 + 2;
        for key in &keys {
            insert.execute(params![
                key,
                seq,
                "assistant",
                "[]",
                TOOL_CALLS,
                None::<&str>,
                None::<&str>,
                now
            ])?;
            insert.execute(params![
                key,
                seq + 1,
                "tool",
                RESULT_CONTENT,
                None::<&str>,
                call_id,
                "step",
                now
            ])?;
            upsert.execute(params![key, call_id, now, now, now])?;
        }
    }
    commit()?;
    conn.execute_batch("BEGIN")?;
    for key in &keys {
        insert_text(
            &mut insert,
            *key,
            2 * steps as i64 + 2,
            "assistant",
            ANSWER_CONTENT,
            now,
        )?;
    }
    commit()?;
    seconds.all.push(started.elapsed().as_secs_f64());
    seconds.commits.push(in_commits);
    Ok(())
}

/// Inserts a message of text alone (the user's, or the answer) with `insert`.
fn insert_text(
    insert: &mut Statement<'_>,
    key: i64,
    seq: i64,
    role: &str,
    content: &str,
    now: i64,
) -> rusqlite::Result<usize> {
    insert.execute(params![
        key,
        seq,
        role,
        content,
        None::<&str>,
        None::<&str>,
        None::<&str>,
        now
    ])
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let generations: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(20);
    let sessions: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(100);
    let steps: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(10);
    // One kind alone, for a profiler: `store`, `no-foreign-keys` or `bare`.
    let only = args.next();
    let dir = tempfile::tempdir()?;
    let mut stores = Vec::new();
    let kinds = Kind::ALL
        .into_iter()
        .filter(|kind| only.as_deref().is_none_or(|name| name == kind.arg()));
    for (i, kind) in kinds.enumerate() {
        let conn = open(&dir.path().join(format!("floor-{i}.db")), kind)?;
        stores.push((kind, conn, Seconds::default()));
    }
    for g in 0..generations {
        // A rotating order, so that no kind always runs in the caches another one warmed.
        let kinds = stores.len();
        for i in 0..kinds {
            if let Some((_, conn, seconds)) = stores.get_mut((g + i) % kinds) {
                generation(conn, sessions, steps, seconds)?;
            }
        }
    }
    let calls = (sessions * (steps + 1)) as f64;
    println!(
        "{generations} generations of {sessions} sessions at once, {steps} tool steps and the answer each; \
         medians over generations"
    );
    println!("{:<28} {:>18} {:>14}", "", "µs per model call", "of it commits");
    for (kind, _, seconds) in &mut stores {
        let all = median(&mut seconds.all) / calls * 1e6;
        let commits = median(&mut seconds.commits) / calls * 1e6;
        println!("{:<28} {all:>18.2} {commits:>14.2}", kind.name());
    }
    Ok(())
}
