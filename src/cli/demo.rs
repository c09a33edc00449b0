//! `git swarm demo`: the whole loop, played by a scripted team in a new
//! repository with the real commands and the real git hooks, printed as a
//! user would read it. Nothing here decides anything: each step runs the
//! binary itself (or git) as a user would, and shows what it said.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use super::{CliError, Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Play it in DIR (created, or an empty folder) rather than a new
    /// temporary folder. Either way the repository is kept, to explore.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// A fixed clock and fixed event ids, so that two runs print the same
    /// (for the demo's own test).
    #[arg(long, hide = true)]
    fixed: bool,
}

/// The demo's first instant with `--fixed`; each command runs a second later.
const FIXED_START: i64 = 1_795_000_000;

/// A lesson the scripted team learns on its own, step 2.
const DBG_ID: &str = "no-dbg-macro";

struct Demo<'u> {
    ui: &'u mut Ui,
    repo: PathBuf,
    exe: PathBuf,
    /// PATH with the running binary's folder first: the git hooks call
    /// `git-swarm` by name.
    path: OsString,
    fixed: bool,
    tick: i64,
}

/// What a command said.
struct Said {
    code: i32,
    /// Standard output, then standard error.
    text: String,
    stdout: String,
}

impl Demo<'_> {
    fn command(&mut self, program: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args).current_dir(&self.repo);
        // The user's own settings (signing, hooks paths, aliases) stay out
        // of the demo's repository, and it of theirs.
        for (key, _) in std::env::vars_os() {
            let k = key.to_string_lossy();
            if k.starts_with("GIT_") {
                cmd.env_remove(&key);
            }
        }
        cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "The demo team")
            .env("GIT_AUTHOR_EMAIL", "team@demo.invalid")
            .env("GIT_COMMITTER_NAME", "The demo team")
            .env("GIT_COMMITTER_EMAIL", "team@demo.invalid")
            .env("PATH", &self.path);
        if self.fixed {
            self.tick += 1;
            let t = FIXED_START + self.tick;
            let now = jiff::Timestamp::from_second(t).unwrap_or_default();
            cmd.env("GIT_SWARM_NOW", now.to_string())
                .env("GIT_SWARM_FIXED_IDS", "1")
                .env("GIT_AUTHOR_DATE", format!("@{t} +0000"))
                .env("GIT_COMMITTER_DATE", format!("@{t} +0000"));
        }
        cmd
    }

    /// Runs `program args` in the repository, with `stdin`.
    fn run(
        &mut self,
        program: &Path,
        args: &[&str],
        stdin: Option<&str>,
    ) -> Result<Said, CliError> {
        let mut cmd = self.command(program, args);
        cmd.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd.spawn()?;
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            pipe.write_all(text.as_bytes())?;
        }
        let out = child.wait_with_output()?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut text = stdout.clone();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        Ok(Said {
            code: out.status.code().unwrap_or(-1),
            text,
            stdout,
        })
    }

    /// `git swarm args`, shown with what it said.
    fn swarm(&mut self, args: &[&str], stdin: Option<&str>) -> Result<Said, CliError> {
        let exe = self.exe.clone();
        let said = self.run(&exe, args, stdin)?;
        self.show(&format!("git swarm {}", shown_args(args)), &said)?;
        Ok(said)
    }

    /// `git args`, shown with what it said unless `quiet`.
    fn git(&mut self, args: &[&str], quiet: bool) -> Result<Said, CliError> {
        let said = self.run(Path::new("git"), args, None)?;
        if !quiet {
            self.show(&format!("git {}", shown_args(args)), &said)?;
        }
        Ok(said)
    }

    fn show(&mut self, command: &str, said: &Said) -> std::io::Result<()> {
        writeln!(self.ui.out, "\n  $ {command}")?;
        for line in said.text.lines() {
            writeln!(self.ui.out, "    {line}")?;
        }
        if said.code != 0 {
            writeln!(self.ui.out, "    [exit {}]", said.code)?;
        }
        Ok(())
    }

    fn say(&mut self, text: &str) -> std::io::Result<()> {
        writeln!(self.ui.out, "{text}")
    }

    fn step(&mut self, n: usize, title: &str, why: &str) -> std::io::Result<()> {
        writeln!(self.ui.out, "\n{n}. {title}")?;
        writeln!(self.ui.out, "   {why}")
    }

    fn write(&self, rel: &str, text: &str) -> Result<(), CliError> {
        let path = self.repo.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, text)?;
        Ok(())
    }

    /// Stops the demo when a step did not go as scripted.
    fn expect(&self, ok: bool, what: &str) -> Result<(), CliError> {
        if ok {
            return Ok(());
        }
        Err(CliError::Swarm(git_swarm::Error::refused(
            "the demo did not go as scripted",
            Some(format!(
                "its repository is kept at {}; please report it, with the output above",
                self.repo.display()
            )),
            what.to_owned(),
        )))
    }
}

/// Arguments as a shell would take them back: quoted where needed.
fn shown_args(args: &[&str]) -> String {
    shlex::try_join(args.iter().copied()).unwrap_or_else(|_| args.join(" "))
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let repo = match &args.dir {
        Some(dir) => {
            if dir.exists() || dir.is_symlink() {
                let empty = dir.is_dir()
                    && std::fs::read_dir(dir)
                        .map_err(|e| git_swarm::Error::io(dir, e))?
                        .next()
                        .is_none();
                if !empty {
                    return Err(CliError::Swarm(git_swarm::Error::usage(
                        format!("{} is not an empty folder", dir.display()),
                        "name a new folder, or an empty one: the demo makes a repository there",
                    )));
                }
            }
            std::fs::create_dir_all(dir).map_err(|e| git_swarm::Error::io(dir, e))?;
            dir.canonicalize()
                .map_err(|e| git_swarm::Error::io(dir, e))?
        }
        None => tempfile::Builder::new()
            .prefix("git-swarm-demo-")
            .tempdir()?
            .keep(),
    };
    let exe = std::env::current_exe()?;
    let mut path = OsString::from(exe.parent().unwrap_or(Path::new(".")));
    if let Some(p) = std::env::var_os("PATH") {
        path.push(":");
        path.push(p);
    }
    let mut demo = Demo {
        ui,
        repo,
        exe,
        path,
        fixed: args.fixed,
        tick: 0,
    };
    play(&mut demo)?;
    Ok(ExitCode::SUCCESS)
}

fn play(d: &mut Demo<'_>) -> Result<(), CliError> {
    let repo = d.repo.display().to_string();
    d.say("git swarm demo: a scripted team of agents makes mistakes, and the repository learns.")?;
    d.say(&format!(
        "Every step below is a real command (or a real git hook) run in a new repository:\n  {repo}"
    ))?;

    // The project, and the team's first lessons, reviewed on main.
    d.git(&["init", "-q", "-b", "main"], true)?;
    d.write(
        "README.md",
        "# parser\n\nA small parser, kept by a team of agents.\n",
    )?;
    d.write(
        "src/lib.rs",
        "pub fn parse(s: &str) -> usize {\n    s.len()\n}\n",
    )?;
    d.git(&["add", "-A"], true)?;
    d.git(&["commit", "-q", "-m", "The project"], true)?;
    d.step(
        0,
        "Set up",
        "The team's lessons live in .swarm/, committed: on main, they count as reviewed.",
    )?;
    d.swarm(&["init"], None)?;
    d.swarm(&["hooks", "install"], None)?;
    d.git(&["add", "-A"], true)?;
    let said = d.git(&["commit", "-q", "-m", "The team's first lessons"], false)?;
    d.expect(said.code == 0, "the lessons were not committed")?;
    let start = d.git(&["rev-parse", "HEAD"], true)?.text.trim().to_owned();

    d.step(
        1,
        "A coder commits a private key",
        "The pre-commit hook checks the change against the lessons: this one is enforced.",
    )?;
    d.write(
        "deploy/key.pem",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEdemoNOTaREALkey\n-----END RSA PRIVATE KEY-----\n",
    )?;
    d.git(&["add", "deploy/key.pem"], true)?;
    let said = d.git(&["commit", "-q", "-m", "Add the deploy key"], false)?;
    d.expect(
        said.code != 0,
        "the commit of a private key was not blocked",
    )?;
    d.git(&["rm", "-q", "--cached", "deploy/key.pem"], true)?;
    std::fs::remove_file(d.repo.join("deploy/key.pem"))?;
    d.say("   Blocked before it reached history. The coder loads the key from the environment instead.")?;

    d.step(
        2,
        "A lesson is broken twice, and escalates",
        "A reviewer adds a lesson as a warning. Each commit that breaks it is recorded; the second occasion escalates it to critical + enforce.",
    )?;
    d.swarm(
        &[
            "add",
            "--id",
            DBG_ID,
            "--lesson",
            "Never leave a dbg! macro in committed code; log through the log crate",
            "--agents",
            "coder",
            "--verify",
            "grep:dbg!",
            "--priority",
            "medium",
            "--enforcement",
            "warn",
        ],
        None,
    )?;
    d.git(&["add", "-A"], true)?;
    d.git(
        &["commit", "-q", "-m", "Lesson: no dbg! in committed code"],
        true,
    )?;
    d.write("src/a.rs", "pub fn a(x: u8) -> u8 {\n    dbg!(x)\n}\n")?;
    d.git(&["add", "src/a.rs"], true)?;
    let said = d.git(&["commit", "-q", "-m", "Add a"], false)?;
    d.expect(said.code == 0, "a warning blocked a commit")?;
    d.write("src/b.rs", "pub fn b(x: u8) -> u8 {\n    dbg!(x) + 1\n}\n")?;
    d.git(&["add", "src/b.rs"], true)?;
    let said = d.git(&["commit", "-q", "-m", "Add b"], false)?;
    d.expect(
        said.code != 0 && said.text.contains("escalated"),
        "the second violation did not escalate and block",
    )?;
    d.write("src/b.rs", "pub fn b(x: u8) -> u8 {\n    x + 1\n}\n")?;
    d.write("src/a.rs", "pub fn a(x: u8) -> u8 {\n    x\n}\n")?;
    d.git(&["add", "-A"], true)?;
    let said = d.git(&["commit", "-q", "-m", "Add b, without dbg!"], false)?;
    d.expect(said.code == 0, "the fixed commit was blocked")?;

    d.step(
        3,
        "Two tasks fail the same way, and a lesson is minted",
        "Each failed tool call an agent makes is kept as a candidate (the harness's post-tool hook runs `reflect micro`). Two tasks failing the same way become a lesson, through the same gate as one written by hand.",
    )?;
    d.swarm(&["phase", "start", "sprint-1"], None)?;
    for task in ["task-1", "task-2"] {
        let payload = serde_json::json!({
            "session_id": task,
            "cwd": d.repo,
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": "cargo clippy -- -D warnings"},
            "tool_use_id": format!("toolu_{task}"),
            "agent_id": format!("{task}-coder"),
            "agent_type": "coder",
            "error": "Exit code 101\nerror: unused variable: `count`\n  --> src/lib.rs:2:9\nerror: could not compile `parser` due to 1 previous error",
        });
        d.swarm(
            &["reflect", "micro", "--payload", "claude", "--task", task],
            Some(&payload.to_string()),
        )?;
    }
    let said = d.swarm(&["reflect", "meso", "--phase", "sprint-1"], None)?;
    let minted = said
        .text
        .lines()
        .find_map(|l| l.strip_prefix("added "))
        .and_then(|l| l.split_whitespace().next())
        .map(str::to_owned);
    d.expect(minted.is_some(), "reflection minted no lesson")?;
    let minted = minted.unwrap_or_default();
    d.say("   A person reviews the new lesson and merges it: from then on it reaches agents.")?;
    d.git(&["add", ".swarm"], true)?;
    d.git(&["commit", "-q", "-m", "Lesson from sprint 1"], false)?;

    d.step(
        4,
        "The next coder is told, and says it applied the lesson",
        "A delegation's block carries the lessons for its role and task; the delegate's final message acknowledges them.",
    )?;
    let said = d.swarm(
        &[
            "inject",
            "--role",
            "coder",
            "--task",
            "Fix the clippy warnings in src/lib.rs and run clippy before handing off",
        ],
        None,
    )?;
    d.expect(
        said.text.contains(&format!("id: {minted}")),
        "the minted lesson is not in the next block",
    )?;
    let delegation = said
        .text
        .split("delegation=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_default()
        .to_owned();
    let report = format!(
        "Fixed the warning; clippy is clean.\nKNOWLEDGE_APPLIED:{minted}\nKNOWLEDGE_APPLIED:{DBG_ID}\nKNOWLEDGE_APPLIED:no-private-keys\n"
    );
    let said = d.swarm(&["ack", "--delegation", &delegation], Some(&report))?;
    d.expect(said.code == 0, "the ack was refused")?;

    d.step(
        5,
        "A guard stops a mistake before it happens",
        "Before each tool call the harness asks git-swarm (its pre-tool hook). The template's guard refuses a force-push to main; the agent reads the lesson as the reason.",
    )?;
    let payload = serde_json::json!({
        "session_id": "task-3",
        "cwd": d.repo,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git push --force origin main"},
        "tool_use_id": "toolu_push",
    });
    let exe = d.exe.clone();
    let said = d.run(
        &exe,
        &["hook", "agent", "claude-code", "pre-tool-use"],
        Some(&payload.to_string()),
    )?;
    let answer: serde_json::Value = serde_json::from_str(&said.stdout).unwrap_or_default();
    let reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    d.expect(
        !reason.is_empty(),
        "the guard did not refuse the force-push",
    )?;
    d.say("\n  agent: git push --force origin main")?;
    d.say("  harness: refused by the pre-tool hook:")?;
    for line in reason.lines() {
        d.say(&format!("    {line}"))?;
    }

    d.step(
        6,
        "What was learned",
        "The events wait in the git dir until `git swarm commit` shares them; `stats` and `diff` show the loop.",
    )?;
    d.swarm(&["commit"], None)?;
    d.swarm(&["stats"], None)?;
    let range = format!("{start}..HEAD");
    d.swarm(&["diff", &range], None)?;

    d.say(&format!(
        "\nThat was the loop: a mistake blocked, a lesson escalated, one learned from failures, \
         delivered and acknowledged, a mistake prevented.\nThe repository is kept at {repo}. Next:\n  \
         cd {repo} && git swarm serve      # a page onto the loop\n  \
         git swarm log                    # every event, in order\n  \
         git swarm agents install claude-code   # in your own repository (or codex, gemini, cursor, opencode)"
    ))?;
    Ok(())
}
