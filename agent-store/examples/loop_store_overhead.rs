//! What write-through costs the loop, measured so that a noisy machine cannot fake it: the
//! same turn as the `store` bench's `loop_turn_10_tools` (11 scripted model calls, 10 no-op
//! tool calls, a new session per turn) with no store, with `MemoryStore` and with
//! `SqliteStore`, interleaved round by round in one process. Each round runs a batch of turns
//! of every kind, in a rotating order; a kind's figure is the median over rounds of its
//! per-turn time, and each ratio is the median over rounds of that round's ratio, so a
//! machine that speeds up or slows down between rounds moves both sides of a ratio alike.
//!
//! ```sh
//! cargo run --release -p agent-store --example loop_store_overhead -- [rounds] [turns-per-round]
//! ```

#![allow(clippy::print_stdout)]

use std::error::Error;
use std::sync::Arc;
use std::time::Instant;

use agent_core::MemoryStore;
use agent_store::SqliteStore;
use loop_turn::{TOOL_STEPS, loop_agent};

#[path = "../benches/shared/loop_turn.rs"]
mod loop_turn;

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(40);
    let turns: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(50);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let dir = tempfile::tempdir()?;
    let sqlite = rt.block_on(SqliteStore::open(dir.path().join("loop.db")))?;
    let kinds = [
        ("no store", loop_agent(&rt, None)?),
        ("MemoryStore", loop_agent(&rt, Some(Arc::new(MemoryStore::new())))?),
        ("SqliteStore", loop_agent(&rt, Some(Arc::new(sqlite)))?),
    ];
    // Per kind, the mean turn time of each round, in microseconds.
    let mut per_round: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); kinds.len()];
    for round in 0..=rounds {
        for offset in 0..kinds.len() {
            let index = (round + offset) % kinds.len();
            let agent = &kinds[index].1;
            let started = Instant::now();
            rt.block_on(async {
                for _ in 0..turns {
                    let session = agent.create_session().await?;
                    let outcome = session.send("go").await;
                    if outcome.iterations as usize != TOOL_STEPS + 1 {
                        return Err(format!("a turn ended early: {:?} {:?}", outcome.status, outcome.error).into());
                    }
                }
                Ok::<_, Box<dyn Error>>(())
            })?;
            // Round 0 warms up (caches, the file, the allocator) and is not counted.
            if round > 0 {
                per_round[index].push(started.elapsed().as_secs_f64() * 1e6 / turns as f64);
            }
        }
    }
    println!("{rounds} rounds of {turns} turns per kind (11 model calls + 10 no-op tool calls each)");
    for (index, (name, _)) in kinds.iter().enumerate() {
        let mut times = per_round[index].clone();
        println!("{name:>12}: median {:7.1} µs per turn", median(&mut times));
    }
    let ratio = |a: usize, b: usize| {
        let mut ratios: Vec<f64> = per_round[a].iter().zip(&per_round[b]).map(|(x, y)| x / y).collect();
        median(&mut ratios)
    };
    println!(
        "SqliteStore / no store:    {:.2}x (median of per-round ratios)",
        ratio(2, 0)
    );
    println!("SqliteStore / MemoryStore: {:.2}x", ratio(2, 1));
    println!("MemoryStore / no store:    {:.2}x", ratio(1, 0));
    Ok(())
}
