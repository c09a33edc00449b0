//! What the benchmarks share: a controlled environment for the commands
//! they time, medians, and the formatting of figures.
#![allow(dead_code)]

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The git-swarm binary to time: a copy of the one cargo built, in `dir`,
/// as `cargo install` copies it. The linker writes its output through a
/// memory map, and the kernel keeps the freshly linked file's pages in a
/// form that costs more page faults to run from, which no installed binary
/// pays (docs/performance.md has the figures).
pub fn installed_binary(dir: &Path) -> std::path::PathBuf {
    installed(dir, env!("CARGO_BIN_EXE_git-swarm"))
}

/// `git-swarm-agent-hook`, what the installed agent hooks run, copied into
/// `dir` as [`installed_binary`] copies git-swarm.
pub fn installed_hook_binary(dir: &Path) -> std::path::PathBuf {
    installed(dir, env!("CARGO_BIN_EXE_git-swarm-agent-hook"))
}

fn installed(dir: &Path, built: &str) -> std::path::PathBuf {
    let built = Path::new(built);
    let copy = dir.join(built.file_name().expect("a binary's name"));
    std::fs::copy(built, &copy).unwrap_or_else(|e| panic!("copy {}: {e}", built.display()));
    copy
}

/// Waits until the files just written are older than the index's racy
/// window: a file written within two seconds of an index write is checked
/// by content until a later write settles it (git's racy files). A
/// session's hooks meet that only in the two seconds after a directive is
/// written (a pull, a checkout, `git swarm add`); a bench's rounds would
/// all fall in them.
pub fn let_settle() {
    std::thread::sleep(Duration::from_millis(2_500));
}

/// With `SWARM_BENCH_KEEP=DIR`, a copy of `repo` at `DIR` followed by
/// `suffix`, to profile a command on the store a bench measured.
pub fn keep(repo: &Path, suffix: &str) {
    let Some(mut dest) = std::env::var_os("SWARM_BENCH_KEEP") else {
        return;
    };
    dest.push(suffix);
    let status = Command::new("cp")
        .arg("-a")
        .arg(repo)
        .arg(&dest)
        .status()
        .expect("cp");
    assert!(status.success(), "copy the store to {dest:?}");
}

pub fn env_num(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

pub fn median(n: usize, mut f: impl FnMut() -> Duration) -> Duration {
    median_of((0..n).map(|_| f()).collect())
}

pub fn median_of(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// `program ARGS` in `repo`, with no user or system git config, a fixed
/// identity, the real clock, and its output discarded.
pub fn command(program: &Path, repo: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(repo)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .env_remove("GIT_SWARM_NOW")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// Whole-process time of `program args` fed `input` on stdin, and its
/// stdout; it must exit 0 and print nothing on stderr.
pub fn time_with_stdin(
    program: &Path,
    repo: &Path,
    args: &[&str],
    input: &str,
) -> (Duration, String) {
    use std::io::Write;
    let mut cmd = command(program, repo, args);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write the input");
    let out = child.wait_with_output().expect("wait");
    let elapsed = start.elapsed();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (elapsed, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs a command that must exit with one of `accept`.
pub fn run(program: &Path, repo: &Path, args: &[&str], accept: &[i32]) {
    let out = command(program, repo, args).output().expect("run");
    assert!(
        out.status.code().is_some_and(|c| accept.contains(&c)),
        "{} {args:?} failed: {}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whole-process time of a command that must exit with one of `accept`.
pub fn time(program: &Path, repo: &Path, args: &[&str], accept: &[i32]) -> Duration {
    let start = Instant::now();
    run(program, repo, args, accept);
    start.elapsed()
}

/// Runs `program args` in `repo` and returns its stdout; it must exit 0
/// and print nothing on stderr.
pub fn output(program: &Path, repo: &Path, args: &[&str]) -> String {
    let out = command(program, repo, args)
        .stdout(Stdio::piped())
        .output()
        .expect("run");
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{} {args:?}: {}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs git and returns its stdout; panics if it fails.
pub fn git(repo: &Path, args: &[&str]) -> String {
    let out = command(Path::new("git"), repo, args)
        .stdout(Stdio::piped())
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A small deterministic generator, so every run measures the same data.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
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

/// A repository with `directives` directive files (a quarter of each
/// priority, all for the `coder` role) and `events` events over 24 months,
/// committed.
pub fn generate_store(repo: &Path, directives: usize, events: usize) {
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
