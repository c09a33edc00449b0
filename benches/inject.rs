//! `git swarm inject` whole-process, beside `git status` on the same repository.
//!
//! Run: `cargo bench --bench inject`. For 1,000 and 10,000 directives
//! (`SWARM_BENCH_DIRECTIVES` sets the first; the second is ten times it)
//! with 100,000 events (`SWARM_BENCH_EVENTS`), it warms the index, then
//! prints the median of 15 runs of `git swarm inject --role coder --task …`
//! (the block printed, a `shown` event appended each run) beside the median
//! of `git status`, and the ratio; then the same with a watcher running
//! (`git swarm index watch`, Linux), which vouches for the directive files
//! so that `inject` does not stat them. Target: ≤ 10 ms at 10,000 directives.

use std::path::{Path, PathBuf};
use std::time::Instant;

#[path = "common/mod.rs"]
mod common;
use common::{env_num, generate_store, median, ms};

fn main() {
    let first = env_num("SWARM_BENCH_DIRECTIVES", 1_000);
    let events = env_num("SWARM_BENCH_EVENTS", 100_000);
    let tmp = tempfile::Builder::new()
        .prefix("git-swarm-inject-bench-")
        .tempdir()
        .expect("temp dir");
    let base = match std::env::var_os("SWARM_BENCH_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => tmp.path().to_path_buf(),
    };
    let bin = common::installed_binary(tmp.path());
    println!("git swarm inject benchmark: {events} events");
    let task = "fix error handling in module 42 and add a test for the parser";
    let args = [
        "inject", "--role", "coder", "--task", task, "--phase", "bench",
    ];
    for n in [first, first * 10] {
        let repo = base.join(format!("inject-{n}"));
        let _ = std::fs::remove_dir_all(&repo);
        let t = Instant::now();
        generate_store(&repo, n, events);
        println!(
            "\n{n} directives (generated in {:.1} s: {})",
            t.elapsed().as_secs_f64(),
            repo.display()
        );
        common::run(&bin, &repo, &args, &[0]);
        std::thread::sleep(std::time::Duration::from_millis(2100));
        common::run(&bin, &repo, &args, &[0]);
        let ours = median(15, || common::time(&bin, &repo, &args, &[0]));
        let git = median(15, || {
            common::time(Path::new("git"), &repo, &["status", "--porcelain"], &[0])
        });
        println!(
            "  git swarm inject  median {:>8}   git status  median {:>8}   ratio {:.2}x   (target ≤ 10 ms at 10,000 directives)",
            ms(ours),
            ms(git),
            ours.as_secs_f64() / git.as_secs_f64()
        );
        if cfg!(target_os = "linux") {
            common::run(&bin, &repo, &["index", "watch", "--detach"], &[0]);
            // The first command after the watcher started records what it found.
            common::run(&bin, &repo, &args, &[0]);
            let watched = median(15, || common::time(&bin, &repo, &args, &[0]));
            let git = median(15, || {
                common::time(Path::new("git"), &repo, &["status", "--porcelain"], &[0])
            });
            common::run(&bin, &repo, &["index", "watch", "--stop"], &[0]);
            println!(
                "  with the watcher  median {:>8}   git status  median {:>8}   ratio {:.2}x",
                ms(watched),
                ms(git),
                watched.as_secs_f64() / git.as_secs_f64()
            );
        }
    }
}
