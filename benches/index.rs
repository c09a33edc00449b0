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

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[path = "common/mod.rs"]
mod common;
use common::{env_num, generate_store as generate, median, median_of, ms};

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
    let bin = common::installed_binary(tmp.path());

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
