//! Index benchmarks (issue figures), whole-process, each beside its baseline.
//!
//! Run: `cargo bench --bench index` (builds the release binary). Scale with
//! `SWARM_BENCH_EVENTS` (default 1,000,000) and `SWARM_BENCH_DIRECTIVES`
//! (default 10,000). It generates a repository in a temp dir with the
//! directives and the events spread over 24 monthly files, commits them, and
//! measures:
//!
//! 1. `git swarm index rebuild`: a full rebuild (target ≤ 3 s);
//! 2. after appending 100 events, `git swarm index refresh` (target ≤ 50 ms),
//!    beside a refresh with nothing to do;
//! 3. `git swarm list` with a warm index, beside `git status` on the same repository.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[path = "common/mod.rs"]
mod common;
use common::{env_num, git, median, median_of, ms};

fn main() {
    let events: usize = env_num("SWARM_BENCH_EVENTS", 1_000_000);
    let directives: usize = env_num("SWARM_BENCH_DIRECTIVES", 10_000);
    let tmp = tempfile::Builder::new()
        .prefix("git-swarm-bench-")
        .tempdir()
        .expect("temp dir");
    // SWARM_BENCH_DIR keeps the generated repository for a closer look.
    let repo = match std::env::var_os("SWARM_BENCH_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => tmp.path().join("repo"),
    };
    println!(
        "git-swarm index benchmark: {directives} directives, {events} events in 24 monthly files"
    );
    let t = Instant::now();
    generate(&repo, directives, events);
    println!(
        "generated and committed in {:.1} s ({})",
        t.elapsed().as_secs_f64(),
        repo.display()
    );
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_git-swarm"));

    // 1. Full rebuild.
    let rebuild = median(5, || common::time(&bin, &repo, &["index", "rebuild"], &[0]));
    println!();
    println!("full index rebuild ({events} events, {directives} directives)");
    println!(
        "  git swarm index rebuild      median {:>9}   target ≤ 3 s: {}",
        ms(rebuild),
        verdict(rebuild <= Duration::from_secs(3))
    );

    // 2. Incremental refresh after appending 100 events.
    common::time(&bin, &repo, &["index", "refresh"], &[0]);
    std::thread::sleep(Duration::from_millis(2100)); // let the last refresh's files age out of the racy window
    common::time(&bin, &repo, &["index", "refresh"], &[0]);
    let noop = median(9, || common::time(&bin, &repo, &["index", "refresh"], &[0]));
    let mut after_append = Vec::new();
    for _ in 0..9 {
        common::run(
            &bin,
            &repo,
            &[
                "record",
                "check",
                "--directive",
                "d-00042",
                "--count",
                "100",
            ],
            &[0],
        );
        after_append.push(common::time(&bin, &repo, &["index", "refresh"], &[0]));
    }
    let after_append = median_of(after_append);
    println!();
    println!("index refresh after appending 100 events (whole process)");
    println!("  nothing changed              median {:>9}", ms(noop));
    println!(
        "  100 events appended          median {:>9}   target ≤ 50 ms: {}",
        ms(after_append),
        verdict(after_append <= Duration::from_millis(50))
    );

    // 3. list, warm index, beside git status.
    common::time(&bin, &repo, &["list"], &[0]);
    std::thread::sleep(Duration::from_millis(2100));
    common::time(&bin, &repo, &["list"], &[0]);
    let list = median(15, || common::time(&bin, &repo, &["list"], &[0]));
    let status = median(15, || {
        common::time(Path::new("git"), &repo, &["status"], &[0])
    });
    println!();
    println!("list on {directives} directives, warm index (whole process)");
    println!("  git swarm list               median {:>9}", ms(list));
    println!("  git status (reference)       median {:>9}", ms(status));
    println!(
        "  ratio list / git status      {:.2}x",
        list.as_secs_f64() / status.as_secs_f64()
    );
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}

/// A small deterministic generator, so every run measures the same data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

const KINDS: &[&str] = &[
    "shown",
    "ack",
    "check",
    "verdict",
    "unacknowledged",
    "outcome",
];
const CROCKFORD: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

fn ulid(ms: u64, rng: &mut Rng) -> String {
    let value: u128 =
        (u128::from(ms) << 80) | (u128::from(rng.next()) << 16) | u128::from(rng.next() & 0xffff);
    (0..26)
        .rev()
        .map(|i| CROCKFORD[((value >> (i * 5)) & 31) as usize] as char)
        .collect()
}

fn generate(repo: &Path, directives: usize, events: usize) {
    std::fs::create_dir_all(repo.join(".swarm/directives")).expect("mkdir");
    std::fs::create_dir_all(repo.join(".swarm/events")).expect("mkdir");
    git(repo, &["init", "-q"]);
    std::fs::write(
        repo.join(".swarm/.gitattributes"),
        "events/*.jsonl merge=union\n",
    )
    .expect("write");
    for i in 0..directives {
        let id = format!("d-{i:05}");
        let text = format!(
            "id = \"{id}\"\nlesson = \"Synthetic lesson number {i} about module {} and its error handling\"\ncategory = \"testing\"\npriority = \"{}\"\nenforcement = \"warn\"\napplies_to_agents = [\"coder\"]\nverify = [\"file_modified:src/mod{}/**\"]\ntags = [\"t{}\"]\n",
            i % 97,
            ["low", "medium", "high", "critical"][i % 4],
            i % 97,
            i % 13
        );
        std::fs::write(repo.join(format!(".swarm/directives/{id}.toml")), text)
            .expect("write directive");
    }
    // 24 months ending 2026-10; events in time order within each month.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let per_month = events / 24;
    for m in 0..24 {
        let (year, month) = (2024 + (m + 10) / 12, (m + 10) % 12 + 1);
        let start: jiff::Timestamp = format!("{year:04}-{month:02}-01T00:00:00Z")
            .parse()
            .expect("date");
        let count = if m == 23 {
            events - per_month * 23
        } else {
            per_month
        };
        let step = 28 * 86_400_000 / count.max(1) as i64;
        let mut buf = String::with_capacity(count * 170);
        for n in 0..count {
            let ts = jiff::Timestamp::from_millisecond(start.as_millisecond() + n as i64 * step)
                .expect("ts");
            let kind = KINDS[(rng.next() % KINDS.len() as u64) as usize];
            let d = rng.next() as usize % directives.max(1);
            let ts_text = jiff::fmt::temporal::DateTimePrinter::new()
                .precision(Some(3))
                .timestamp_to_string(&ts);
            let _ = writeln!(
                buf,
                "{{\"id\":\"{}\",\"ts\":\"{ts_text}\",\"kind\":\"{kind}\",\"actor\":{{\"role\":\"coder\"}},\"directive\":\"d-{d:05}\",\"phase\":\"p{}\"}}",
                ulid(ts.as_millisecond() as u64, &mut rng),
                n % 7
            );
        }
        std::fs::write(
            repo.join(format!(".swarm/events/{year:04}-{month:02}.jsonl")),
            buf,
        )
        .expect("write events");
    }
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "synthetic store"]);
}
