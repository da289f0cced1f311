//! The side-by-side comparison: in one sitting, the hand-written reference loop, the Rust agent
//! (no store, `MemoryStore`, `SqliteStore`, and with its tool's body on another thread), the
//! Python binding (`def` and `async def` tool) and the Node binding (sync and async JS tool),
//! each as its own client process against one `mock-llm`, one session at a time and many at once, repeated `--reps` times. Each figure is a
//! ratio to the reference measured in the same repetition; the table shows the median of the
//! per-repetition ratios, so the drift of a noisy machine cancels out.
//!
//! ```text
//! cargo build --release -p agent-bench --bins
//! target/release/compare [--reps 5] [--steps 10] [--sequential 30] [--concurrent 100] [--rounds 10]
//!     [--variants reference,rust,...] [--python PATH] [--node PATH] [--no-pin]
//! ```
//!
//! With pinning (the default, when `taskset` exists) every client runs on CPU 0 and the server
//! on CPU 1. The Python variants need the binding installed in `--python`'s environment (a
//! release build, as `scripts/test-python` installs); the Node variants need `bindings/node`
//! built (`npm run build`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use agent_bench::{ClientFigures, MockProcess};

const ALL_VARIANTS: &[&str] = &[
    "reference",
    "rust",
    "rust-memory",
    "rust-sqlite",
    "rust-handoff",
    "python-def",
    "python-async",
    "node-sync",
    "node-async",
];

struct Opts {
    reps: usize,
    steps: u64,
    sequential: usize,
    concurrent: usize,
    rounds: usize,
    variants: Vec<String>,
    python: String,
    node: String,
    pin: bool,
}

fn parse() -> Result<Opts, String> {
    let home = std::env::var("HOME").unwrap_or_default();
    let mut o = Opts {
        reps: 5,
        steps: 10,
        sequential: 30,
        concurrent: 100,
        rounds: 10,
        variants: ALL_VARIANTS.iter().map(|v| (*v).to_owned()).collect(),
        python: format!("{home}/.cache/agent-core/py-venv/bin/python"),
        node: "node".into(),
        pin: true,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        let num = |v: String| v.parse::<usize>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--reps" => o.reps = num(value()?)?.max(1),
            "--steps" => o.steps = num(value()?)? as u64,
            "--sequential" => o.sequential = num(value()?)?.max(1),
            "--concurrent" => o.concurrent = num(value()?)?.max(1),
            "--rounds" => o.rounds = num(value()?)?.max(1),
            "--variants" => {
                o.variants = value()?.split(',').map(str::to_owned).collect();
                if let Some(bad) = o.variants.iter().find(|v| !ALL_VARIANTS.contains(&v.as_str())) {
                    return Err(format!("unknown variant {bad}; known: {}", ALL_VARIANTS.join(",")));
                }
                // The reference runs in every repetition and comes first in the table.
                o.variants.retain(|v| v != "reference");
                o.variants.insert(0, "reference".into());
            }
            "--python" => o.python = value()?,
            "--node" => o.node = value()?,
            "--no-pin" => o.pin = false,
            "--bench" => {}
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(o)
}

/// The workspace root (this file is benches/src/bin/compare.rs).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn pinned(o: &Opts, cpu: &str, program: &str) -> Command {
    if o.pin {
        let mut command = Command::new("taskset");
        command.args(["-c", cpu, program]);
        command
    } else {
        Command::new(program)
    }
}

fn sibling(name: &str) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    Ok(exe.with_file_name(name).display().to_string())
}

fn start_server(o: &Opts) -> Result<MockProcess, String> {
    let mut command = pinned(o, "1", &sibling("mock-llm")?);
    command
        .args(["--port", "0", "--max-seconds", "3600", "--tool", "step"])
        .args(["--tool-steps", &o.steps.to_string()]);
    MockProcess::start(command)
}

/// Runs one client process and reads its figures.
fn client(o: &Opts, variant: &str, url: &str, sessions: usize, concurrency: usize) -> Result<ClientFigures, String> {
    let root = root();
    let mut command = match variant {
        v if v == "reference" || v.starts_with("rust") => {
            let mut c = pinned(o, "0", &sibling("compare-client")?);
            c.args(["--variant", v]);
            c
        }
        v if v.starts_with("python") => {
            let mut c = pinned(o, "0", &o.python);
            c.arg(root.join("benches/clients/client.py"));
            c.args(["--variant", v]);
            c
        }
        v => {
            let mut c = pinned(o, "0", &o.node);
            c.arg(root.join("benches/clients/client.mjs"));
            c.args(["--variant", v]);
            c
        }
    };
    let output = command
        .args(["--url", url, "--steps", &o.steps.to_string()])
        .args([
            "--sessions",
            &sessions.to_string(),
            "--concurrency",
            &concurrency.to_string(),
        ])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("{variant}: cannot start the client: {e}"))?;
    if !output.status.success() {
        return Err(format!("{variant}: the client failed ({})", output.status));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text.lines().last().unwrap_or_default();
    serde_json::from_str(line).map_err(|e| format!("{variant}: unexpected client output {line:?}: {e}"))
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    match xs.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => xs[n / 2],
        n => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

/// Per variant, per repetition: (one at a time, many at once).
type Runs = Vec<Vec<(ClientFigures, ClientFigures)>>;

fn report(o: &Opts, runs: &Runs) {
    println!(
        "\n{} reps; medians of per-repetition ratios to `reference` (higher throughput ratio is better, lower time ratio is better)\n",
        o.reps
    );
    ratio_table(o, runs, 0);
    // The issue's targets for the store and the bindings are ratios to the Rust loop itself.
    if let Some(rust) = o.variants.iter().position(|v| v == "rust")
        && o.variants.len() > rust + 1
    {
        println!("\nthe same, as ratios to `rust` measured in the same repetition\n");
        ratio_table(o, runs, rust);
    }
}

/// One table: every variant's figures and their per-repetition ratios to `runs[base]`.
fn ratio_table(o: &Opts, runs: &Runs, base: usize) {
    let reference = &runs[base];
    let x = format!("x {}", if base == 0 { "ref" } else { "rust" });
    println!(
        "{:<13} | {:>9} {:>7} {:>8} | {:>9} {:>7} {:>8} | {:>9} {:>6}",
        "variant", "ms/call", x, "CPU ms", "calls/s", x, "CPU ms", "peak RSS", x
    );
    println!(
        "{:<13} | {:^26} | {:^26} | {:^16}",
        "",
        "1 session at a time",
        format!("{} at once", o.concurrent),
        format!("{} at once", o.concurrent)
    );
    for (variant, reps) in o.variants.iter().zip(runs) {
        let per_call = |f: &ClientFigures| f.wall_s * 1000.0 / f.calls as f64;
        let cpu_per_call = |f: &ClientFigures| f.cpu_s * 1000.0 / f.calls as f64;
        let rate = |f: &ClientFigures| f.calls as f64 / f.wall_s;
        let zip = || reps.iter().zip(reference);
        let seq_ratio = median(zip().map(|((s, _), (rs, _))| per_call(s) / per_call(rs)).collect());
        let conc_ratio = median(zip().map(|((_, c), (_, rc))| rate(c) / rate(rc)).collect());
        let rss_ratio = median(
            zip()
                .map(|((_, c), (_, rc))| c.peak_rss_kib as f64 / rc.peak_rss_kib as f64)
                .collect(),
        );
        println!(
            "{:<13} | {:>9.3} {:>7.2} {:>8.3} | {:>9.0} {:>7.2} {:>8.3} | {:>6.1} MiB {:>6.2}",
            variant,
            median(reps.iter().map(|(s, _)| per_call(s)).collect()),
            seq_ratio,
            median(reps.iter().map(|(s, _)| cpu_per_call(s)).collect()),
            median(reps.iter().map(|(_, c)| rate(c)).collect()),
            conc_ratio,
            median(reps.iter().map(|(_, c)| cpu_per_call(c)).collect()),
            median(reps.iter().map(|(_, c)| c.peak_rss_kib as f64 / 1024.0).collect()),
            rss_ratio,
        );
    }
}

fn run(o: Opts) -> Result<(), String> {
    if o.pin && Command::new("taskset").arg("-V").output().is_err() {
        return Err("taskset is missing (apt install util-linux), or pass --no-pin".into());
    }
    let server = start_server(&o)?;
    eprintln!(
        "mock-llm at {} ({} tool steps + the answer per session); {} reps of: {} sessions one at a time, {} x {} at once",
        server.url, o.steps, o.reps, o.sequential, o.rounds, o.concurrent
    );
    let mut runs: Runs = vec![Vec::new(); o.variants.len()];
    for rep in 0..o.reps {
        // Rotate the order each repetition, so no variant always runs right after another.
        let order: Vec<usize> = (0..o.variants.len()).map(|i| (i + rep) % o.variants.len()).collect();
        let mut figures = vec![None; o.variants.len()];
        for &i in &order {
            let variant = &o.variants[i];
            let one = client(&o, variant, &server.url, o.sequential, 1)?;
            let many = client(&o, variant, &server.url, o.concurrent * o.rounds, o.concurrent)?;
            eprintln!(
                "rep {}: {variant:<13} {:.3} ms/call alone, {:.0} calls/s at {}",
                rep + 1,
                one.wall_s * 1000.0 / one.calls as f64,
                many.calls as f64 / many.wall_s,
                o.concurrent
            );
            figures[i] = Some((one, many));
        }
        for (i, f) in figures.into_iter().enumerate() {
            runs[i].push(f.ok_or("a variant did not run")?);
        }
    }
    report(&o, &runs);
    Ok(())
}

fn main() {
    if let Err(e) = parse().and_then(run) {
        eprintln!("compare: {e}");
        std::process::exit(1);
    }
}
