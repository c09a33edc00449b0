//! Test harness: the real `git-swarm` binary against real temporary git
//! repositories, in a controlled environment (cleared env, HOME in the temp
//! dir, no global or system git config, fixed dates, UTC, C locale).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The fixed "now" of every test unless a test says otherwise.
pub const NOW: &str = "2026-11-22T10:00:00Z";

pub struct TestEnv {
    pub tmp: tempfile::TempDir,
    /// The repository's work tree.
    pub root: PathBuf,
}

/// What a command printed and how it exited, with paths and ids normalised.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// `[exit N]`, stdout and stderr in one block, for snapshots.
    pub fn snapshot(&self) -> String {
        let mut s = format!("[exit {}]\n", self.code);
        if !self.stdout.is_empty() {
            s.push_str("--- stdout\n");
            s.push_str(&self.stdout);
        }
        if !self.stderr.is_empty() {
            s.push_str("--- stderr\n");
            s.push_str(&self.stderr);
        }
        s
    }

    #[track_caller]
    pub fn success(&self) -> &Run {
        assert_eq!(self.code, 0, "expected success:\n{}", self.snapshot());
        self
    }

    #[track_caller]
    pub fn code(&self, code: i32) -> &Run {
        assert_eq!(
            self.code,
            code,
            "expected exit {code}:\n{}",
            self.snapshot()
        );
        self
    }
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_git-swarm"))
}

/// `git-swarm-agent-hook`, what the installed agent hooks run.
pub fn hook_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_git-swarm-agent-hook"))
}

impl TestEnv {
    /// A new temp dir holding an empty git repository at `repo/`.
    pub fn new() -> TestEnv {
        let tmp = tempfile::Builder::new()
            .prefix("git-swarm-test-")
            .tempdir()
            .expect("temp dir");
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(&root).expect("create repo dir");
        let env = TestEnv { tmp, root };
        env.git(&["init", "-q", "-b", "main"]);
        // The directives a test writes are shown to agents uncommitted: what
        // reaches agents unreviewed is tested in `reviewed.rs`, which unsets it.
        env.git(&["config", "swarm.injectUnreviewed", "allow"]);
        env
    }

    /// A repository with `git swarm init` run and committed.
    pub fn initialised() -> TestEnv {
        let env = TestEnv::new();
        env.swarm(&["init"]).success();
        env.git(&["add", "-A"]);
        env.git(&["commit", "-q", "-m", "init swarm"]);
        env
    }

    pub fn home(&self) -> PathBuf {
        self.tmp.path().join("home")
    }

    /// A command with the controlled environment, run in `dir`.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(dir).env_clear();
        let path = format!(
            "{}:{}",
            bin().parent().expect("bin dir").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        std::fs::create_dir_all(self.home()).expect("home");
        // Programs that leave files in TMPDIR (opencode's Bun runtime leaves a
        // 5 MB library per run) leave them in the test's dir, removed with it.
        let tmpdir = self.tmp.path().join("tmp");
        std::fs::create_dir_all(&tmpdir).expect("tmpdir");
        cmd.env("PATH", path)
            .env("HOME", self.home())
            .env("TMPDIR", tmpdir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test Author")
            .env("GIT_AUTHOR_EMAIL", "author@example.com")
            .env("GIT_COMMITTER_NAME", "Test Committer")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("GIT_AUTHOR_DATE", "2026-11-22T10:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-11-22T10:00:00Z")
            .env("GIT_SWARM_NOW", NOW)
            .env("TZ", "UTC")
            .env("LC_ALL", "C")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        cmd
    }

    /// Runs git in the repository and returns stdout; panics on failure.
    #[track_caller]
    pub fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.root, args)
    }

    #[track_caller]
    pub fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let out = self
            .command("git", dir)
            .args(args)
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "git {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `git merge BRANCH`, which must stop on a conflict.
    #[track_caller]
    pub fn merge_stopping_on_conflict(&self, branch: &str) {
        let merge = self
            .command("git", &self.root)
            .args(["merge", "-q", branch])
            .output()
            .expect("git merge");
        assert!(!merge.status.success(), "the merge stops on a conflict");
    }

    /// Runs `git swarm ARGS` (through git, as users do) in the repository.
    pub fn swarm(&self, args: &[&str]) -> Run {
        self.swarm_in(&self.root, args)
    }

    pub fn swarm_in(&self, dir: &Path, args: &[&str]) -> Run {
        let out = self
            .command("git", dir)
            .arg("swarm")
            .args(args)
            .output()
            .expect("run git swarm");
        self.finish(out)
    }

    /// Runs the binary directly with extra environment and optional stdin.
    pub fn swarm_with(&self, args: &[&str], env: &[(&str, &str)], stdin: Option<&[u8]>) -> Run {
        let mut cmd = self.command(bin(), &self.root);
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = match stdin {
            None => cmd.output().expect("run git-swarm"),
            Some(input) => {
                use std::io::Write;
                cmd.stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                let mut child = cmd.spawn().expect("spawn git-swarm");
                let written = child.stdin.take().expect("stdin").write_all(input);
                // A command may stop reading (an error found early) and exit
                // first: the broken pipe is its business, its output is the test's.
                if let Err(e) = written
                    && e.kind() != std::io::ErrorKind::BrokenPipe
                {
                    panic!("write stdin: {e}");
                }
                child.wait_with_output().expect("wait git-swarm")
            }
        };
        self.finish(out)
    }

    fn finish(&self, out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: self.normalise(&String::from_utf8_lossy(&out.stdout)),
            stderr: self.normalise(&String::from_utf8_lossy(&out.stderr)),
        }
    }

    /// Replaces the temp dir with `$TMP` and event ids with `[ULID]`.
    pub fn normalise(&self, s: &str) -> String {
        let tmp = self.tmp.path().to_string_lossy().into_owned();
        let canonical = std::fs::canonicalize(self.tmp.path())
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| tmp.clone());
        let s = s.replace(&canonical, "$TMP").replace(&tmp, "$TMP");
        let ulid = regex::Regex::new(r"\b[0-9A-HJKMNP-TV-Z]{26}\b").expect("ulid regex");
        ulid.replace_all(&s, "[ULID]").into_owned()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, contents).expect("write file");
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
    }

    /// The bytes of the derived index, to tell whether a command wrote it.
    pub fn index_bytes(&self) -> Vec<u8> {
        std::fs::read(self.path(".git/swarm/index")).expect("the index")
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }

    /// Every line of every event file, tracked (`.swarm/events/`) then
    /// pending (`.git/swarm/pending/`, where commands record), in file order.
    pub fn event_lines(&self) -> Vec<String> {
        let list = |dir: &str| {
            let mut files: Vec<_> = std::fs::read_dir(self.path(dir))
                .map(|d| {
                    d.filter_map(|e| e.ok())
                        .map(|e| e.path())
                        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                        .collect()
                })
                .unwrap_or_default();
            files.sort();
            files
        };
        let mut files = list(".swarm/events");
        files.extend(list(PENDING));
        files
            .iter()
            .flat_map(|f| {
                std::fs::read_to_string(f)
                    .expect("read events")
                    .lines()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

/// Where recorded events wait until `git swarm commit`, relative to the
/// work tree of a repository whose git dir is `.git`.
pub const PENDING: &str = ".git/swarm/pending";

/// The pending month file of November 2026, where the tests' fixed clock
/// records.
pub const PENDING_NOV: &str = ".git/swarm/pending/2026-11.jsonl";

/// Makes a FIFO at `path` (with the `mkfifo` program).
#[track_caller]
pub fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// A directive that passes the gate, as TOML.
pub fn directive_toml(id: &str, lesson: &str) -> String {
    format!(
        "id = \"{id}\"\nlesson = \"{lesson}\"\npriority = \"high\"\napplies_to_agents = [\"coder\"]\nverify = [\"file_modified:src/**\"]\n"
    )
}

/// Records an event (so that there is an event file) and holds the log's
/// lock, as another process appending would, until the file is dropped.
pub fn hold_the_logs_lock(env: &TestEnv) -> std::fs::File {
    env.swarm(&["record", "--custom", "note"]).success();
    let log = std::fs::read_dir(env.path(PENDING))
        .expect("pending events")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("an event file");
    let held = std::fs::File::open(&log).expect("open the log");
    held.lock().expect("hold the log's lock");
    held
}

/// No panic and no debug dump reached the user, and the exit code is one of ours.
#[track_caller]
pub fn assert_no_panic(run: &Run) {
    for text in [&run.stdout, &run.stderr] {
        assert!(
            !text.contains("panicked") && !text.contains("RUST_BACKTRACE"),
            "{}",
            run.snapshot()
        );
    }
    assert!(
        (0..=3).contains(&run.code),
        "killed or crashed:\n{}",
        run.snapshot()
    );
}

/// A clock that moves one second per call, for `GIT_SWARM_NOW`: events of
/// one test are then ordered as its commands ran (events in the same
/// millisecond from different processes have no order of their own).
pub fn tick() -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    format!(
        "2026-11-22T{:02}:{:02}:{:02}Z",
        10 + n / 3600,
        n / 60 % 60,
        n % 60
    )
}

/// Sets the mtime of `rel` (a file or a folder) an hour back, so that the
/// index trusts it rather than treating it as just changed.
pub fn age(env: &TestEnv, rel: &str) {
    age_path(&env.path(rel));
}

fn age_path(path: &std::path::Path) {
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::open(path)
        .and_then(|f| f.set_modified(hour_ago))
        .unwrap_or_else(|e| panic!("cannot age {}: {e}", path.display()));
}

pub fn age_directives(env: &TestEnv) {
    age_directives_in(&env.root);
}

/// The directive files of the work tree `root`, and their folder, an hour
/// old: settled, so that a hook may trust the index while the folder's
/// stamp is unchanged.
pub fn age_directives_in(root: &std::path::Path) {
    let dir = root.join(".swarm/directives");
    for entry in std::fs::read_dir(&dir).expect("list") {
        age_path(&entry.expect("entry").path());
    }
    age_path(&dir);
}

/// `git swarm ARGS` at the next [`tick`] of the clock.
pub fn swarm(env: &TestEnv, args: &[&str]) -> Run {
    env.swarm_with(args, &[("GIT_SWARM_NOW", &tick())], None)
}

/// The events of the log of one kind, in file order.
pub fn of_kind(env: &TestEnv, kind: &str) -> Vec<serde_json::Value> {
    env.event_lines()
        .iter()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("event json"))
        .filter(|e| e["kind"] == kind)
        .collect()
}

/// The ids of the directives `git swarm init` writes, in the template's
/// order: from the template built into the binary, so that a test about
/// "the template's directives" follows the template as it grows.
pub fn template_directive_ids() -> Vec<&'static str> {
    git_swarm::init::TEMPLATE
        .iter()
        .filter_map(|(rel, _)| rel.strip_prefix("directives/")?.strip_suffix(".toml"))
        .collect()
}

/// An initialised repository without the template's directives; tests add
/// their own with [`directive`].
pub fn repo_without_directives() -> TestEnv {
    let env = TestEnv::initialised();
    env.git(&["rm", "-q", "-r", ".swarm/directives"]);
    env.git(&["commit", "-q", "-m", "no template directives"]);
    env
}

/// Writes `.swarm/directives/ID.toml` with `fields` after its id.
pub fn directive(env: &TestEnv, id: &str, fields: &str) {
    env.write(
        &format!(".swarm/directives/{id}.toml"),
        format!("id = \"{id}\"\n{fields}\n"),
    );
}

/// Whether `name` is a program on PATH.
pub fn has_program(name: &str) -> bool {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|dir| dir.join(name).is_file())
}

/// Says that the running test leaves (some of) its checks out because
/// `tool` is missing on this machine, `why` saying what to install. The
/// caller then returns, or carries on without that part.
///
/// Said three ways, so that a skip never passes for a pass: `SKIPPED: …` on
/// stderr at once (shown with `--nocapture`); one line per skip in the
/// summary the test binary prints to stderr as it exits, which plain
/// `cargo test` shows; and, when `GIT_SWARM_REQUIRE_TOOLS` names `tool` (a
/// comma-separated list, or `all`), a failure instead: `.ci/run` lists
/// there the tools it installed, so a test that fails to find one of them
/// fails CI rather than skipping.
///
/// The tools are named: `man`, `bash`, `bash-completion`, `git-completion`
/// (git's bash completion script), `shellcheck`, `node`, `actionlint`,
/// `prometheus_client`, `chromium`, `ipv6` (a loopback), `history` (this
/// repository's own, cloned in full) and the agent harnesses by their
/// executables (`claude`, `codex`, `gemini`, `opencode`).
#[track_caller]
pub fn skipped(tool: &str, why: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let required = std::env::var("GIT_SWARM_REQUIRE_TOOLS").unwrap_or_default();
    if required
        .split(',')
        .map(str::trim)
        .any(|t| t == tool || t == "all")
    {
        panic!("`{tool}` is missing, and GIT_SWARM_REQUIRE_TOOLS={required} requires it: {why}");
    }
    let line = format!("SKIPPED {test}: `{tool}` is missing: {why}");
    eprintln!("{line}");
    let mut skips = SKIPS.lock().unwrap_or_else(|e| e.into_inner());
    if skips.is_empty() {
        // SAFETY: registers a plain function with no arguments, as atexit
        // expects; it runs once, when the test binary exits.
        unsafe {
            libc::atexit(summarise_skips);
        }
    }
    skips.push(line);
}

static SKIPS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Run as the test binary exits, past libtest's capture of each test's
/// output: the skips, after `test result:`, where a reader looks.
extern "C" fn summarise_skips() {
    use std::io::Write;
    let skips = SKIPS.lock().unwrap_or_else(|e| e.into_inner());
    let mut text = format!(
        "\nSKIPPED: {} check{} of this run, for a missing tool (GIT_SWARM_REQUIRE_TOOLS=all fails them instead):\n",
        skips.len(),
        if skips.len() == 1 { "" } else { "s" }
    );
    for line in skips.iter() {
        text.push_str("  ");
        text.push_str(line);
        text.push('\n');
    }
    let _ = std::io::stderr().write_all(text.as_bytes());
}
