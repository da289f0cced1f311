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
//!     [--variants reference,rust,...] [--python PATH] [--node PATH] [--no-pin] [--against DIR]
//! ```
//!
//! `--against DIR` compares this build with another in the same sitting: every variant but the
//! reference also runs from the build in `DIR` (as `VARIANT@before`), in the same repetitions,
//! and a last table gives each variant's figures as medians of the per-repetition ratios of
//! this build to that one. `DIR` holds that build's `compare-client`, and for the bindings'
//! variants its Node addon (`agent-core.linux-x64-gnu.node`, loaded through
//! `NAPI_RS_NATIVE_LIBRARY_PATH`; the JavaScript of `bindings/node/lib` stays this checkout's)
//! and its Python package unpacked under `DIR/python` (put first on `PYTHONPATH`).
//! `scripts/bench-baseline` makes such a directory from a commit.
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
    /// Another build's artifacts, run beside this one's (see the module's documentation).
    against: Option<PathBuf>,
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
        against: None,
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
            "--against" => o.against = Some(PathBuf::from(value()?)),
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

/// Which build a client runs from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Build {
    /// This one: the binaries beside `compare`, this checkout's bindings.
    Current,
    /// The one in `--against`.
    Before,
}

/// A row of the tables: a variant, from one build.
struct Entry {
    variant: String,
    build: Build,
}

impl Entry {
    fn label(&self) -> String {
        match self.build {
            Build::Current => self.variant.clone(),
            Build::Before => format!("{}@before", self.variant),
        }
    }
}

/// Every variant from this build and, with `--against`, every one but the reference (the same
/// hand-written loop in both) from that one too, right after it.
fn entries(o: &Opts) -> Vec<Entry> {
    let mut entries = Vec::new();
    for variant in &o.variants {
        entries.push(Entry {
            variant: variant.clone(),
            build: Build::Current,
        });
        if o.against.is_some() && variant != "reference" {
            entries.push(Entry {
                variant: variant.clone(),
                build: Build::Before,
            });
        }
    }
    entries
}

/// The Node addon in an `--against` directory.
const NODE_ADDON: &str = "agent-core.linux-x64-gnu.node";

/// What of the `--against` build the variants need, checked before anything runs.
fn check_against(o: &Opts) -> Result<(), String> {
    let Some(dir) = &o.against else { return Ok(()) };
    for variant in o.variants.iter().filter(|v| *v != "reference") {
        let (needed, what) = match variant.as_str() {
            v if v.starts_with("rust") => (dir.join("compare-client"), "its compare-client"),
            v if v.starts_with("python") => (dir.join("python/agent_core"), "its Python package unpacked"),
            _ => (dir.join(NODE_ADDON), "its Node addon"),
        };
        if !needed.exists() {
            return Err(format!(
                "--against {}: variant {variant} needs {what} at {} (scripts/bench-baseline makes the directory)",
                dir.display(),
                needed.display()
            ));
        }
    }
    // The addon's loader falls back to this checkout's addon when the override fails to load,
    // which would compare this build with itself: load it once first.
    if o.variants.iter().any(|v| v.starts_with("node")) {
        let addon = std::path::absolute(dir.join(NODE_ADDON)).map_err(|e| e.to_string())?;
        let loaded = Command::new(&o.node)
            .args(["-e", "require(process.argv[1])"])
            .arg(&addon)
            .status()
            .map_err(|e| format!("cannot start {}: {e}", o.node))?;
        if !loaded.success() {
            return Err(format!("--against: node cannot load {}", addon.display()));
        }
    }
    Ok(())
}

/// Runs one client process and reads its figures.
fn client(o: &Opts, entry: &Entry, url: &str, sessions: usize, concurrency: usize) -> Result<ClientFigures, String> {
    let root = root();
    let variant = entry.variant.as_str();
    let before = match (entry.build, &o.against) {
        (Build::Before, Some(dir)) => Some(std::path::absolute(dir).map_err(|e| e.to_string())?),
        _ => None,
    };
    let mut command = match variant {
        v if v == "reference" || v.starts_with("rust") => {
            let program = match &before {
                Some(dir) => dir.join("compare-client").display().to_string(),
                None => sibling("compare-client")?,
            };
            let mut c = pinned(o, "0", &program);
            c.args(["--variant", v]);
            c
        }
        v if v.starts_with("python") => {
            let mut c = pinned(o, "0", &o.python);
            c.arg(root.join("benches/clients/client.py"));
            c.args(["--variant", v]);
            if let Some(dir) = &before {
                let mut path = dir.join("python").into_os_string();
                if let Some(rest) = std::env::var_os("PYTHONPATH") {
                    path.push(":");
                    path.push(rest);
                }
                c.env("PYTHONPATH", path);
            }
            c
        }
        v => {
            let mut c = pinned(o, "0", &o.node);
            c.arg(root.join("benches/clients/client.mjs"));
            c.args(["--variant", v]);
            if let Some(dir) = &before {
                c.env("NAPI_RS_NATIVE_LIBRARY_PATH", dir.join(NODE_ADDON));
            }
            c
        }
    };
    let label = entry.label();
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
        .map_err(|e| format!("{label}: cannot start the client: {e}"))?;
    if !output.status.success() {
        return Err(format!("{label}: the client failed ({})", output.status));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text.lines().last().unwrap_or_default();
    serde_json::from_str(line).map_err(|e| format!("{label}: unexpected client output {line:?}: {e}"))
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    match xs.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => xs[n / 2],
        n => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

/// Per entry, per repetition: (one at a time, many at once).
type Runs = Vec<Vec<(ClientFigures, ClientFigures)>>;

fn per_call(f: &ClientFigures) -> f64 {
    f.wall_s * 1000.0 / f.calls as f64
}

fn cpu_per_call(f: &ClientFigures) -> f64 {
    f.cpu_s * 1000.0 / f.calls as f64
}

fn rate(f: &ClientFigures) -> f64 {
    f.calls as f64 / f.wall_s
}

fn rss_mib(f: &ClientFigures) -> f64 {
    f.peak_rss_kib as f64 / 1024.0
}

/// The median over repetitions of `figure(a) / figure(b)`, `a` and `b` from the same one.
fn median_ratio(
    a: &[(ClientFigures, ClientFigures)],
    b: &[(ClientFigures, ClientFigures)],
    figure: impl Fn(&(ClientFigures, ClientFigures)) -> f64,
) -> f64 {
    median(a.iter().zip(b).map(|(a, b)| figure(a) / figure(b)).collect())
}

/// The lowest and highest over repetitions of `figure(a) / figure(b)`.
fn ratio_range(
    a: &[(ClientFigures, ClientFigures)],
    b: &[(ClientFigures, ClientFigures)],
    figure: impl Fn(&(ClientFigures, ClientFigures)) -> f64,
) -> (f64, f64) {
    a.iter()
        .zip(b)
        .map(|(a, b)| figure(a) / figure(b))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), r| {
            (low.min(r), high.max(r))
        })
}

fn report(o: &Opts, entries: &[Entry], runs: &Runs) {
    println!(
        "\n{} reps; medians of per-repetition ratios to `reference` (higher throughput ratio is better, lower time ratio is better)\n",
        o.reps
    );
    ratio_table(o, entries, runs, 0);
    // The issue's targets for the store and the bindings are ratios to the Rust loop itself.
    if let Some(rust) = entries
        .iter()
        .position(|e| e.variant == "rust" && e.build == Build::Current)
        && entries.len() > rust + 1
    {
        println!("\nthe same, as ratios to `rust` measured in the same repetition\n");
        ratio_table(o, entries, runs, rust);
        println!(
            "\nhow far one repetition's ratio to `rust` moves: the lowest and highest of the {}\n",
            o.reps
        );
        range_table(o, entries, runs, rust);
    }
    if o.against.is_some() {
        println!(
            "\nthis build against the one in --against: medians of per-repetition ratios, this / that (below 1 is less time, CPU or memory; above 1 is more throughput)\n"
        );
        against_table(o, entries, runs);
    }
}

/// One table: every entry's figures and their per-repetition ratios to `runs[base]`.
fn ratio_table(o: &Opts, entries: &[Entry], runs: &Runs, base: usize) {
    let reference = &runs[base];
    let x = format!("x {}", if base == 0 { "ref" } else { "rust" });
    println!(
        "{:<21} | {:>9} {:>7} {:>8} | {:>9} {:>7} {:>8} | {:>9} {:>6}",
        "variant", "ms/call", x, "CPU ms", "calls/s", x, "CPU ms", "peak RSS", x
    );
    println!(
        "{:<21} | {:^26} | {:^26} | {:^16}",
        "",
        "1 session at a time",
        format!("{} at once", o.concurrent),
        format!("{} at once", o.concurrent)
    );
    for (entry, reps) in entries.iter().zip(runs) {
        println!(
            "{:<21} | {:>9.3} {:>7.2} {:>8.3} | {:>9.0} {:>7.2} {:>8.3} | {:>6.1} MiB {:>6.2}",
            entry.label(),
            median(reps.iter().map(|(s, _)| per_call(s)).collect()),
            median_ratio(reps, reference, |(s, _)| per_call(s)),
            median(reps.iter().map(|(s, _)| cpu_per_call(s)).collect()),
            median(reps.iter().map(|(_, c)| rate(c)).collect()),
            median_ratio(reps, reference, |(_, c)| rate(c)),
            median(reps.iter().map(|(_, c)| cpu_per_call(c)).collect()),
            median(reps.iter().map(|(_, c)| rss_mib(c)).collect()),
            median_ratio(reps, reference, |(_, c)| rss_mib(c)),
        );
    }
}

/// The range of every entry's per-repetition ratios to `runs[base]`, for the two figures the
/// targets are set in: time one at a time and throughput at `concurrent`. Where a target lies
/// inside that range, one repetition meets it and another misses it with the same code.
fn range_table(o: &Opts, entries: &[Entry], runs: &Runs, base: usize) {
    let reference = &runs[base];
    println!("{:<21} | {:^17} | {:^17}", "variant", "ms/call", "calls/s");
    println!(
        "{:<21} | {:^17} | {:^17}",
        "",
        "1 at a time",
        format!("{} at once", o.concurrent)
    );
    for (entry, reps) in entries.iter().zip(runs) {
        let (time_low, time_high) = ratio_range(reps, reference, |(s, _)| per_call(s));
        let (rate_low, rate_high) = ratio_range(reps, reference, |(_, c)| rate(c));
        println!(
            "{:<21} | {time_low:>7.2} - {time_high:<7.2} | {rate_low:>7.2} - {rate_high:<7.2}",
            entry.label()
        );
    }
}

/// Each variant of this build against itself from the `--against` build, repetition by
/// repetition.
fn against_table(o: &Opts, entries: &[Entry], runs: &Runs) {
    println!(
        "{:<13} | {:>9} {:>8} | {:>9} {:>8} | {:>9}",
        "variant", "ms/call", "CPU ms", "calls/s", "CPU ms", "peak RSS"
    );
    println!(
        "{:<13} | {:^18} | {:^18} | {:^9}",
        "",
        "1 at a time",
        format!("{} at once", o.concurrent),
        ""
    );
    for (i, entry) in entries.iter().enumerate() {
        let Some((next, before)) = entries.get(i + 1).zip(runs.get(i + 1)) else {
            continue;
        };
        if entry.build != Build::Current || next.build != Build::Before {
            continue;
        }
        let now = &runs[i];
        println!(
            "{:<13} | {:>9.3} {:>8.3} | {:>9.3} {:>8.3} | {:>9.3}",
            entry.variant,
            median_ratio(now, before, |(s, _)| per_call(s)),
            median_ratio(now, before, |(s, _)| cpu_per_call(s)),
            median_ratio(now, before, |(_, c)| rate(c)),
            median_ratio(now, before, |(_, c)| cpu_per_call(c)),
            median_ratio(now, before, |(_, c)| rss_mib(c)),
        );
    }
}

fn run(o: Opts) -> Result<(), String> {
    if o.pin && Command::new("taskset").arg("-V").output().is_err() {
        return Err("taskset is missing (apt install util-linux), or pass --no-pin".into());
    }
    check_against(&o)?;
    let entries = entries(&o);
    let server = start_server(&o)?;
    eprintln!(
        "mock-llm at {} ({} tool steps + the answer per session); {} reps of: {} sessions one at a time, {} x {} at once",
        server.url, o.steps, o.reps, o.sequential, o.rounds, o.concurrent
    );
    let mut runs: Runs = vec![Vec::new(); entries.len()];
    for rep in 0..o.reps {
        // Rotate the order each repetition, so no entry always runs right after another.
        let order: Vec<usize> = (0..entries.len()).map(|i| (i + rep) % entries.len()).collect();
        let mut figures = vec![None; entries.len()];
        for &i in &order {
            let entry = &entries[i];
            let one = client(&o, entry, &server.url, o.sequential, 1)?;
            let many = client(&o, entry, &server.url, o.concurrent * o.rounds, o.concurrent)?;
            eprintln!(
                "rep {}: {:<21} {:.3} ms/call alone, {:.0} calls/s at {}",
                rep + 1,
                entry.label(),
                per_call(&one),
                rate(&many),
                o.concurrent
            );
            figures[i] = Some((one, many));
        }
        for (i, f) in figures.into_iter().enumerate() {
            runs[i].push(f.ok_or("a variant did not run")?);
        }
    }
    report(&o, &entries, &runs);
    Ok(())
}

fn main() {
    if let Err(e) = parse().and_then(run) {
        eprintln!("compare: {e}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn opts(variants: &[&str], against: Option<&Path>) -> Opts {
        Opts {
            against: against.map(Path::to_path_buf),
            reps: 1,
            steps: 1,
            sequential: 1,
            concurrent: 1,
            rounds: 1,
            variants: variants.iter().map(|v| (*v).to_owned()).collect(),
            python: "python3".into(),
            node: "node".into(),
            pin: false,
        }
    }

    fn figures(wall_s: f64) -> ClientFigures {
        ClientFigures {
            calls: 100,
            wall_s,
            cpu_s: wall_s,
            peak_rss_kib: 1024,
            turn_p50_ms: None,
            turn_p99_ms: None,
        }
    }

    #[test]
    fn a_ratios_range_is_its_lowest_and_highest_repetition() {
        let a: Vec<_> = [1.0, 3.0, 2.0].map(|w| (figures(w), figures(w))).into();
        let b: Vec<_> = [2.0, 2.0, 2.0].map(|w| (figures(w), figures(w))).into();
        assert_eq!(ratio_range(&a, &b, |(s, _)| per_call(s)), (0.5, 1.5));
        assert_eq!(median_ratio(&a, &b, |(s, _)| per_call(s)), 1.0);
    }

    #[test]
    fn each_variant_but_the_reference_runs_from_both_builds_side_by_side() {
        let labels = |o: &Opts| entries(o).iter().map(Entry::label).collect::<Vec<_>>();
        let variants = ["reference", "rust", "rust-sqlite"];
        assert_eq!(labels(&opts(&variants, None)), ["reference", "rust", "rust-sqlite"]);
        assert_eq!(
            labels(&opts(&variants, Some(Path::new("/tmp/before")))),
            ["reference", "rust", "rust@before", "rust-sqlite", "rust-sqlite@before"]
        );
    }

    #[test]
    fn a_build_without_what_a_variant_needs_is_refused_before_anything_runs() {
        let dir = std::env::temp_dir().join(format!("compare-against-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let error = check_against(&opts(&["reference", "rust-sqlite"], Some(&dir))).unwrap_err();
        assert!(
            error.contains("compare-client") && error.contains("scripts/bench-baseline"),
            "{error}"
        );
        std::fs::write(dir.join("compare-client"), b"").unwrap();
        check_against(&opts(&["reference", "rust-sqlite"], Some(&dir))).unwrap();
        let error = check_against(&opts(&["python-def"], Some(&dir))).unwrap_err();
        assert!(error.contains("python/agent_core"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
