//! The `tool:` runner's sandbox, through the real binary: `git swarm
//! run-tool` runs one program exactly as a `tool:` predicate would, and
//! `git swarm trust` records which set of tool predicates may run.
//!
//! Every escape is tried for real: the file it would create, the process it
//! would leave behind or the memory it would take is looked for afterwards.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{Run, TestEnv, assert_no_panic};

/// A repository with `.swarm/`, a short tool timeout, and a global git
/// config (`GIT_CONFIG_GLOBAL`) the test can add `swarm.allowTool` values to.
struct Sandbox {
    env: TestEnv,
    global: PathBuf,
}

impl Sandbox {
    fn new(allow: &[&str]) -> Sandbox {
        let env = TestEnv::initialised();
        let global = env.tmp.path().join("global.gitconfig");
        let mut config = String::from("[swarm]\n");
        for program in allow {
            config.push_str(&format!("\tallowTool = {program}\n"));
        }
        std::fs::write(&global, config).expect("write global config");
        Sandbox { env, global }
    }

    fn timeout(&self, secs: u64) {
        self.env.write(
            ".swarm/config.toml",
            format!("[runner]\ntimeout_secs = {secs}\n"),
        );
    }

    fn global_env(&self) -> (&'static str, &str) {
        (
            "GIT_CONFIG_GLOBAL",
            self.global.to_str().expect("utf-8 temp path"),
        )
    }

    /// `git swarm run-tool -- ARGV` with the test's global config.
    fn run(&self, argv: &[&str]) -> Run {
        self.run_with(argv, &[])
    }

    fn run_with(&self, argv: &[&str], extra: &[(&str, &str)]) -> Run {
        let mut args = vec!["run-tool", "--"];
        args.extend_from_slice(argv);
        let mut env = vec![self.global_env()];
        env.extend_from_slice(extra);
        let run = self.env.swarm_with(&args, &env, None);
        assert_no_panic(&run);
        run
    }

    fn swarm(&self, args: &[&str]) -> Run {
        let run = self.env.swarm_with(args, &[self.global_env()], None);
        assert_no_panic(&run);
        run
    }
}

/// Refused (exit 2) with a message containing `why`, and nothing ran.
#[track_caller]
fn assert_refused(run: &Run, why: &str) {
    run.code(2);
    assert!(
        run.stderr.contains("error: refused to run") && run.stderr.contains(why),
        "expected a refusal naming {why:?}:\n{}",
        run.snapshot()
    );
    assert!(run.stderr.contains("hint: "), "{}", run.snapshot());
}

#[cfg(unix)]
fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Is a process with this argv alive (not a zombie)? The program is
/// compared by its file name: the runner starts it by its full path.
fn running(argv: &[&str]) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    dir.filter_map(Result::ok).any(|e| {
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            return false;
        };
        let mut words = cmdline.split(|b| *b == 0);
        let program = words.next().unwrap_or_default();
        let name = program.rsplit(|b| *b == b'/').next().unwrap_or_default();
        let rest: Vec<&[u8]> = words.collect();
        name == argv[0].as_bytes()
            && rest.len() == argv.len()
            && rest[..argv.len() - 1]
                .iter()
                .zip(&argv[1..])
                .all(|(a, b)| *a == b.as_bytes())
            && rest[argv.len() - 1].is_empty()
    })
}

/// Waits (a few seconds at most: SIGKILL is delivered asynchronously) for
/// every process with this argv to be gone.
#[track_caller]
fn assert_gone(argv: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(argv) {
        assert!(
            Instant::now() < deadline,
            "{argv:?} is still running after the runner returned"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_allowed_read_only_git_command_runs_and_its_failure_is_reported() {
    let sb = Sandbox::new(&[]);
    let run = sb.run(&["git", "status", "--short"]);
    run.success();
    sb.env.write("a.txt", "trailing space \n");
    sb.env.git(&["add", "a.txt"]);
    let run = sb.run(&["git", "diff", "--cached", "--check"]);
    run.code(1);
    assert!(
        run.stdout.contains("a.txt:1: trailing whitespace"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stderr
            .contains("`git diff --cached --check` exited with status"),
        "{}",
        run.snapshot()
    );
}

#[test]
fn a_program_not_on_the_allowlist_is_refused() {
    let sb = Sandbox::new(&[]);
    let run = sb.run(&["sh", "-c", "touch pwned"]);
    assert_refused(&run, "`sh` is not on your allowlist");
    assert!(
        run.stderr
            .contains("git config --global --add swarm.allowTool sh")
    );
    assert!(!sb.env.exists("pwned"));
}

#[test]
fn an_empty_allow_tool_value_removes_the_defaults() {
    let sb = Sandbox::new(&["", "sleep"]);
    assert_refused(&sb.run(&["true"]), "`true` is not on your allowlist");
}

#[test]
fn the_allowlist_never_comes_from_the_repository() {
    let sb = Sandbox::new(&[]);
    // A `.gitconfig` in the work tree (git reads it only when the user
    // includes it) and the repository's own settings: neither allows anything.
    sb.env.write(".gitconfig", "[swarm]\n\tallowTool = sh\n");
    sb.env
        .write(".swarm/config.toml", "[runner]\ntimeout_secs = 5\n");
    assert_refused(&sb.run(&["sh", "-c", "true"]), "not on your allowlist");
}

#[test]
fn a_program_given_as_a_path_is_refused() {
    let sb = Sandbox::new(&[]);
    write_script(&sb.env.path("script"), "touch pwned");
    assert_refused(
        &sb.run(&["./script"]),
        "`./script` is not a bare program name",
    );
    assert_refused(
        &sb.run(&["/bin/true"]),
        "`/bin/true` is not a bare program name",
    );
    assert!(!sb.env.exists("pwned"));
}

#[test]
fn a_program_in_the_repository_never_runs_even_first_on_path() {
    let sb = Sandbox::new(&["mytool"]);
    write_script(&sb.env.path("bin/true"), "touch pwned; exit 1");
    write_script(&sb.env.path("bin/mytool"), "touch pwned");
    let bin = sb.env.path("bin");
    let path = format!(
        "{}:bin:.:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // `true` is found outside the repository; the repository's copy is skipped.
    sb.run_with(&["true"], &[("PATH", &path)]).success();
    // `mytool` exists only in the repository.
    let run = sb.run_with(&["mytool"], &[("PATH", &path)]);
    run.code(3);
    assert!(
        run.stderr
            .contains("`mytool` is allowed but not found on PATH"),
        "{}",
        run.snapshot()
    );
    assert!(!sb.env.exists("pwned"));
}

#[test]
fn git_with_c_is_refused() {
    let sb = Sandbox::new(&[]);
    let run = sb.run(&["git", "-c", "alias.x=!touch pwned", "x"]);
    assert_refused(&run, "git option `-c`");
    assert!(!sb.env.exists("pwned"));
}

#[test]
fn git_aliases_from_the_users_config_are_refused_too() {
    let sb = Sandbox::new(&[]);
    std::fs::write(
        &sb.global,
        "[alias]\n\tst = !touch pwned\n\tlg = log --oneline\n",
    )
    .expect("write global config");
    assert_refused(
        &sb.run(&["git", "st"]),
        "`git st` is not one of the read-only git subcommands",
    );
    assert_refused(&sb.run(&["git", "lg"]), "(aliases are refused)");
    assert!(!sb.env.exists("pwned"));
}

#[test]
fn git_exec_path_and_config_env_are_refused() {
    let sb = Sandbox::new(&[]);
    let tmp = sb.env.tmp.path().display().to_string();
    assert_refused(
        &sb.run(&["git", &format!("--exec-path={tmp}"), "x"]),
        "git option `--exec-path=",
    );
    assert_refused(
        &sb.run(&["git", "--exec-path=bin", "status"]),
        "`--exec-path=bin`",
    );
    assert_refused(&sb.run(&["git", "--exec-path"]), "`--exec-path`");
    assert_refused(
        &sb.run(&["git", "--config-env=core.pager=HOME", "log"]),
        "git option `--config-env=core.pager=HOME`",
    );
    assert_refused(&sb.run(&["git", "-C", "..", "status"]), "git option `-C`");
}

#[test]
fn git_commands_that_write_or_start_programs_are_refused() {
    let sb = Sandbox::new(&[]);
    assert_refused(
        &sb.run(&["git", "commit", "-m", "x"]),
        "`git commit` is not one of",
    );
    assert_refused(
        &sb.run(&["git", "log", "--output=out.txt"]),
        "`--output=out.txt`",
    );
    assert_refused(&sb.run(&["git", "log", "--out=out.txt"]), "(`--output`)");
    assert_refused(
        &sb.run(&["git", "grep", "-Otouch pwned", "x"]),
        "may open files in a pager",
    );
    assert_refused(
        &sb.run(&["git", "grep", "--open-files-in-pager=touch pwned", "x"]),
        "writes files or runs a program",
    );
    assert!(!sb.env.exists("out.txt"));
    assert!(!sb.env.exists("pwned"));
}

#[test]
fn parent_and_absolute_path_arguments_are_refused() {
    let sb = Sandbox::new(&[]);
    std::fs::write(sb.env.tmp.path().join("secret.txt"), "hunter2\n").expect("write secret");
    let run = sb.run(&["grep", "-r", "hunter2", "../"]);
    assert_refused(&run, "argument `../` climbs out with `..`");
    assert!(!run.stdout.contains("hunter2"));
    assert_refused(
        &sb.run(&["grep", "-r", "hunter2", "src/../.."]),
        "climbs out with `..`",
    );
    let secret = sb.env.tmp.path().join("secret.txt").display().to_string();
    let run = sb.run(&["grep", "hunter2", &secret]);
    assert_refused(&run, "is an absolute path");
    assert!(!run.stdout.contains("hunter2"));
    assert_refused(
        &sb.run(&["grep", &format!("--file={secret}"), "x"]),
        "is an absolute path",
    );
    assert_refused(
        &sb.run(&["grep", &format!("-f{secret}"), "x"]),
        "is an absolute path",
    );
    assert_refused(
        &sb.run(&["git", "diff", "--no-index", &secret, "a"]),
        "is an absolute path",
    );
}

#[test]
fn a_symlink_leading_out_of_the_repository_is_refused() {
    let sb = Sandbox::new(&[]);
    let outside = sb.env.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).expect("mkdir outside");
    std::fs::write(outside.join("secret.txt"), "hunter2\n").expect("write secret");
    std::os::unix::fs::symlink(&outside, sb.env.path("evil")).expect("symlink");
    std::os::unix::fs::symlink("../outside/secret.txt", sb.env.path("evil-file")).expect("symlink");
    std::os::unix::fs::symlink("nowhere", sb.env.path("dangling")).expect("symlink");
    for argv in [
        &["grep", "-r", "hunter2", "evil"][..],
        &["grep", "hunter2", "evil/secret.txt"],
        &["grep", "hunter2", "./evil-file"],
        &["grep", "--file=evil-file", "x"],
        &["grep", "hunter2", "dangling"],
    ] {
        let run = sb.run(argv);
        assert_refused(&run, "which leads outside the repository");
        assert!(!run.stdout.contains("hunter2"), "{}", run.snapshot());
    }
    // A link that stays inside is fine.
    sb.env.write("src/a.txt", "needle\n");
    std::os::unix::fs::symlink("src", sb.env.path("inside")).expect("symlink");
    let run = sb.run(&["grep", "-r", "needle", "inside/"]);
    run.success();
    assert!(run.stdout.contains("needle"), "{}", run.snapshot());
}

#[test]
fn the_environment_is_minimal_and_stdin_is_closed() {
    let sb = Sandbox::new(&["env", "cat"]);
    let run = sb.run_with(
        &["env"],
        &[("SECRET_TOKEN", "hunter2"), ("GIT_EXTERNAL_DIFF", "touch")],
    );
    run.success();
    let mut names: Vec<&str> = run
        .stdout
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "GIT_ATTR_NOSYSTEM",
            "GIT_CONFIG_NOSYSTEM",
            "GIT_NO_LAZY_FETCH",
            "GIT_OPTIONAL_LOCKS",
            "GIT_PAGER",
            "GIT_TERMINAL_PROMPT",
            "HOME",
            "LANG",
            "LC_ALL",
            "NO_COLOR",
            "PAGER",
            "PATH",
            "TERM",
            "TZ",
        ],
        "{}",
        run.snapshot()
    );
    assert!(run.stdout.contains("GIT_CONFIG_NOSYSTEM=1\n"));
    // `cat` reads the closed stdin: it ends at once, whatever the runner's own stdin holds.
    let run = sb.env.swarm_with(
        &["run-tool", "--", "cat"],
        &[sb.global_env()],
        Some(b"the runner's stdin\n"),
    );
    run.success();
    assert_eq!(run.stdout, "", "{}", run.snapshot());
}

#[test]
fn sleep_60_is_killed_at_the_timeout_and_leaves_no_process() {
    let sb = Sandbox::new(&["sleep"]);
    sb.timeout(1);
    // An unusual duration, to find exactly this test's process.
    let argv = ["sleep", "60.31337"];
    let start = Instant::now();
    let run = sb.run(&argv);
    let took = start.elapsed();
    run.code(1);
    assert!(
        run.stderr
            .contains("`sleep 60.31337` timed out after 1 s; its process group was killed"),
        "{}",
        run.snapshot()
    );
    assert!(took < Duration::from_secs(30), "took {took:?}");
    assert_gone(&argv);
}

#[test]
fn the_whole_process_group_is_killed_on_timeout_and_on_exit() {
    let sb = Sandbox::new(&["sh"]);
    sb.timeout(1);
    // A child left running in the background, and the program itself waiting on another.
    let run = sb.run(&["sh", "-c", "sleep 61.31337 & sleep 62.31337"]);
    run.code(1);
    assert!(run.stderr.contains("timed out"), "{}", run.snapshot());
    assert_gone(&["sleep", "61.31337"]);
    assert_gone(&["sleep", "62.31337"]);
    // The program exits 0 at once but leaves a child behind: it is killed too.
    let run = sb.run(&["sh", "-c", "sleep 63.31337 & echo started"]);
    run.success();
    assert!(run.stdout.contains("started"), "{}", run.snapshot());
    assert_gone(&["sleep", "63.31337"]);
}

impl Sandbox {
    /// `run`, and git-swarm's peak resident set in bytes, read from
    /// `/proc/PID/status` (VmHWM) until it exits. Not getrusage's ru_maxrss:
    /// on exec Linux carries over the parent's high-water mark, and the
    /// parent is the one process every integration test shares, which
    /// reaches hundreds of MB on its own.
    fn run_measuring_rss(&self, argv: &[&str]) -> (Run, u64) {
        use std::io::Read;
        let mut cmd = self.env.command(common::bin(), &self.env.root);
        let (key, value) = self.global_env();
        cmd.args(["run-tool", "--"])
            .args(argv)
            .env(key, value)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("spawn git-swarm");
        let drain = |mut pipe: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                pipe.read_to_end(&mut bytes).map(|_| bytes)
            })
        };
        let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
        let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
        // The child is reaped only after this loop, so its pid cannot be
        // reused meanwhile; a zombie's status has no VmHWM line.
        let status_file = format!("/proc/{}/status", child.id());
        let mut peak_kb = 0u64;
        while let Some(kb) = vm_hwm_kb(&status_file) {
            peak_kb = peak_kb.max(kb);
            std::thread::sleep(Duration::from_millis(10));
        }
        let status = child.wait().expect("wait git-swarm");
        let read = |h: std::thread::JoinHandle<std::io::Result<Vec<u8>>>| {
            let bytes = h.join().expect("pipe reader").expect("read pipe");
            self.env.normalise(&String::from_utf8_lossy(&bytes))
        };
        let run = Run {
            code: status.code().unwrap_or(-1),
            stdout: read(stdout),
            stderr: read(stderr),
        };
        assert_no_panic(&run);
        assert!(peak_kb > 0, "no VmHWM read from {status_file}");
        (run, peak_kb * 1024)
    }
}

/// The `VmHWM` (peak resident set, in kB) of a `/proc/PID/status` file:
/// none once the process has exited.
fn vm_hwm_kb(status_file: &str) -> Option<u64> {
    let status = std::fs::read_to_string(status_file).ok()?;
    status.lines().find_map(|l| {
        let kb = l.strip_prefix("VmHWM:")?.trim().strip_suffix(" kB")?;
        kb.parse().ok()
    })
}

#[test]
fn a_program_printing_without_end_is_capped_and_killed() {
    let sb = Sandbox::new(&["yes"]);
    sb.timeout(2);
    let start = Instant::now();
    let (run, rss) = sb.run_measuring_rss(&["yes", "a line of output that fills the pipe quickly"]);
    let took = start.elapsed();
    run.code(1);
    assert!(
        run.stderr.contains("timed out after 2 s"),
        "{}",
        run.snapshot()
    );
    assert!(took < Duration::from_secs(60), "took {took:?}");
    // 1 MiB of stdout is kept: the first and last 512 KiB, and a marker.
    assert!(
        run.stdout.len() <= 1024 * 1024 + 200,
        "{} bytes",
        run.stdout.len()
    );
    assert!(run.stdout.contains(" bytes not kept …]"), "no marker");
    // The rest was read (so `yes` never blocked) and thrown away: far more than was kept.
    let discarded: u64 = run
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("warning: ")?.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no 'bytes not kept' warning:\n{}", run.stderr));
    assert!(
        discarded > 64 * 1024 * 1024,
        "only {discarded} bytes produced"
    );
    // Memory stayed bounded: git-swarm did not grow large.
    assert!(
        rss < 256 * 1024 * 1024,
        "git-swarm reached {rss} bytes resident"
    );
    assert_gone(&["yes", "a line of output that fills the pipe quickly"]);
}

const TOOL_DIRECTIVE: &str = r#"id = "whitespace-check"
lesson = "Run the whitespace check before committing any change"
applies_to_agents = ["coder"]
verify = ["tool:git diff --cached --check", "file_modified:src/**"]
"#;

#[test]
fn trust_records_the_set_of_tool_predicates_and_a_change_needs_trust_again() {
    let sb = Sandbox::new(&[]);
    let run = sb.swarm(&["trust", "--show"]);
    run.success();
    assert!(
        run.stdout.contains("nothing to trust"),
        "{}",
        run.snapshot()
    );

    sb.env
        .write(".swarm/directives/whitespace-check.toml", TOOL_DIRECTIVE);
    sb.env.write(
        ".swarm/directives/lint.toml",
        "id = \"lint\"\nlesson = \"Keep the lint tool passing on every change\"\napplies_to_agents = [\"coder\"]\nverify = [\"tool:cargo clippy -- -D warnings\"]\n",
    );
    let run = sb.swarm(&["trust", "--show"]);
    run.code(1);
    assert!(
        run.stdout.contains("The 2 tool predicates are not trusted"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stdout
            .contains("whitespace-check  tool:git diff --cached --check"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stdout.contains("`cargo` is not on your allowlist"),
        "{}",
        run.snapshot()
    );
    assert!(
        run.stderr
            .contains("hint: review them, then run `git swarm trust`")
    );

    let run = sb.swarm(&["trust"]);
    run.success();
    assert!(
        run.stdout.starts_with("Trusted 2 tool predicates"),
        "{}",
        run.snapshot()
    );
    let recorded = sb
        .env
        .git(&["config", "--local", "--get-all", "swarm.trustedTools"]);
    assert!(
        recorded.starts_with("sha1:") && recorded.lines().count() == 1,
        "{recorded}"
    );
    assert!(
        std::fs::read_to_string(sb.env.path(".git/config"))
            .expect("read .git/config")
            .contains("trustedTools = sha1:")
    );
    sb.swarm(&["trust", "--show"]).success();
    let run = sb.swarm(&["trust"]);
    run.success();
    assert!(
        run.stdout.contains("were already trusted"),
        "{}",
        run.snapshot()
    );

    // A pulled branch changes one tool predicate: no longer trusted.
    sb.env.write(
        ".swarm/directives/whitespace-check.toml",
        TOOL_DIRECTIVE.replace("--check", "--check --stat"),
    );
    sb.swarm(&["trust", "--show"]).code(1);
    // Changing anything but a tool predicate does not matter.
    sb.env.write(
        ".swarm/directives/whitespace-check.toml",
        TOOL_DIRECTIVE.replace("src/**", "lib/**"),
    );
    sb.swarm(&["trust", "--show"]).success();
    // A tool predicate that arrives with a pull needs trust too.
    sb.env.write(".swarm/directives/extra.toml", "id = \"extra\"\nlesson = \"Another tool predicate arrives with a pull\"\napplies_to_agents = [\"coder\"]\nverify = [\"tool:true\"]\n");
    sb.swarm(&["trust", "--show"]).code(1);
}

#[test]
fn bundled_short_options_cannot_smuggle_a_path_out() {
    let sb = Sandbox::new(&[]);
    let outside = sb.env.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).expect("mkdir outside");
    // A pattern file outside the repository that matches the file inside:
    // a grep that read it would exit 0.
    std::fs::write(outside.join("pat"), "hunter2\n").expect("write pattern");
    let pat = outside.join("pat").display().to_string();
    std::os::unix::fs::symlink("../outside/pat", sb.env.path("lnk")).expect("symlink");
    sb.env.write("f.txt", "hunter2\n");
    for (argv, why) in [
        (
            vec!["grep".to_owned(), format!("-qf{pat}"), "f.txt".into()],
            "is an absolute path (`",
        ),
        (
            vec!["grep".into(), "-qf../outside/pat".into(), "f.txt".into()],
            "climbs out with `..` (`../outside/pat` may be a path",
        ),
        (
            vec!["grep".into(), "-iflnk".into(), "f.txt".into()],
            "goes through the symlink `lnk`, which leads outside the repository",
        ),
        (
            vec![
                "grep".into(),
                "-qe".into(),
                "x".into(),
                "--".into(),
                "lnk".into(),
            ],
            "goes through the symlink `lnk`",
        ),
        (
            vec!["grep".into(), format!("-qfx={pat}"), "f.txt".into()],
            "is an absolute path",
        ),
        (
            vec![
                "diff".to_owned(),
                format!("-qX{pat}"),
                "f.txt".into(),
                "f.txt".into(),
            ],
            "is an absolute path",
        ),
    ] {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let run = sb.run(&argv);
        assert_refused(&run, why);
        assert!(
            run.stderr
                .contains("give an option's value as an argument of its own")
                || argv.contains(&"--"),
            "{}",
            run.snapshot()
        );
    }
    // Bundles that name no path, and a value given on its own, still run.
    sb.env.write("pat.txt", "hunter2\n");
    sb.run(&["grep", "-qin", "hunter2", "f.txt"]).success();
    sb.run(&["grep", "-q", "-f", "pat.txt", "f.txt"]).success();
    sb.run(&["grep", "-qfpat.txt", "f.txt"]).success();
}

/// `git-swarm ARGS` started as a terminal's shell starts a command: the
/// signals it is sent below take their default action unless it handles them
/// (a test harness started in the background may have inherited SIGINT ignored).
fn spawn_swarm(sb: &Sandbox, args: &[&str]) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    let mut cmd = sb.env.command(common::bin(), &sb.env.root);
    cmd.args(args)
        .env(sb.global_env().0, sb.global_env().1)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SAFETY: signal(2) is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(|| {
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(signal, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    cmd.spawn().expect("spawn git-swarm")
}

/// Waits (10 s at most) for a process with this argv to be running.
#[track_caller]
fn wait_running(argv: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !running(argv) {
        assert!(Instant::now() < deadline, "{argv:?} never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_signal_to_git_swarm_kills_the_tool_and_ends_git_swarm_by_that_signal() {
    use std::os::unix::process::ExitStatusExt;
    let sb = Sandbox::new(&["sleep", "sh"]);
    // Long enough that only the signal can end the run.
    sb.timeout(120);
    // Durations unique to this run, so as not to find another run's processes.
    let pid = std::process::id();
    for (signal, seconds) in [
        (libc::SIGINT, format!("72.1{pid}")),
        (libc::SIGTERM, format!("72.2{pid}")),
        (libc::SIGHUP, format!("72.3{pid}")),
    ] {
        let seconds = seconds.as_str();
        // The program and a child of its own in the background.
        let script = format!("sleep {seconds}1 & sleep {seconds}");
        let child = spawn_swarm(&sb, &["run-tool", "--", "sh", "-c", &script]);
        wait_running(&["sleep", &format!("{seconds}1")]);
        wait_running(&["sleep", seconds]);
        let pid = libc::pid_t::try_from(child.id()).expect("pid");
        // SAFETY: kill(2) signals our own unreaped child; it touches no memory.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let start = Instant::now();
        let out = child.wait_with_output().expect("wait git-swarm");
        assert_eq!(
            out.status.signal(),
            Some(signal),
            "{:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(start.elapsed() < Duration::from_secs(10));
        assert_gone(&["sleep", seconds]);
        assert_gone(&["sleep", &format!("{seconds}1")]);
    }

    // The same in `git swarm check`, with a trusted tool predicate.
    sb.env.write(
        ".swarm/directives/slow.toml",
        format!("id = \"slow\"\nlesson = \"Run the slow tool on every change\"\napplies_to_agents = [\"coder\"]\nverify = [\"tool:sleep 73.{pid}\"]\n"),
    );
    let seconds = format!("73.{pid}");
    sb.swarm(&["trust"]).success();
    sb.env.write("a.txt", "a\n");
    sb.env.git(&["add", "-A"]);
    let child = spawn_swarm(&sb, &["check"]);
    wait_running(&["sleep", &seconds]);
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let out = child.wait_with_output().expect("wait git-swarm");
    assert_eq!(out.status.signal(), Some(libc::SIGTERM), "{:?}", out.status);
    assert_gone(&["sleep", &seconds]);
}

#[test]
fn a_commit_from_a_temporary_index_is_checked_by_tools_on_what_it_commits() {
    let sb = Sandbox::new(&[]);
    sb.env.write(
        ".swarm/directives/whitespace-check.toml",
        "id = \"whitespace-check\"\nlesson = \"Commit no trailing whitespace, checked by git itself\"\napplies_to_agents = [\"coder\"]\nenforcement = \"enforce\"\nverify = [\"tool:git diff --cached --check\"]\n",
    );
    sb.env.write("a.txt", "clean\n");
    sb.env.git(&["add", "-A"]);
    sb.env.git(&["commit", "-q", "-m", "a whitespace check"]);
    sb.swarm(&["trust"]).success();
    sb.swarm(&["hooks", "install"]).success();
    let head = sb.env.git(&["rev-parse", "HEAD"]);

    // Only in the working tree: the real index is clean, the one `commit -a`
    // builds (GIT_INDEX_FILE) is not.
    sb.env.write("a.txt", "trailing space \n");
    let commit = |args: &[&str]| {
        let out = sb
            .env
            .command("git", &sb.env.root)
            .args(args)
            .env(sb.global_env().0, sb.global_env().1)
            .output()
            .expect("run git commit");
        (
            out.status.code(),
            sb.env.normalise(&String::from_utf8_lossy(&out.stderr)),
        )
    };
    let (code, stderr) = commit(&["commit", "-q", "-am", "with whitespace"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("a.txt:1: trailing whitespace"), "{stderr}");
    assert_eq!(sb.env.git(&["rev-parse", "HEAD"]), head);
    // `git commit PATH` too.
    let (code, stderr) = commit(&["commit", "-q", "-m", "with whitespace", "a.txt"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("a.txt:1: trailing whitespace"), "{stderr}");
    assert_eq!(sb.env.git(&["rev-parse", "HEAD"]), head);
    // Fixed in the working tree, the same commit goes through.
    sb.env.write("a.txt", "no trailing space\n");
    let (code, stderr) = commit(&["commit", "-q", "-am", "clean"]);
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn only_stdin_stdout_and_stderr_reach_the_tool() {
    let sb = Sandbox::new(&["sh"]);
    let leaked = sb.env.tmp.path().join("leaked");
    let leaked_shown = leaked.display().to_string();
    // The caller leaves fd 7 open without close-on-exec, as `exec 7>file` does.
    let out = sb
        .env
        .command("sh", &sb.env.root)
        .args([
            "-c",
            "exec 7>\"$1\"; exec git-swarm run-tool -- sh -c 'echo hi >&7'",
            "sh",
            &leaked_shown,
        ])
        .env(sb.global_env().0, sb.global_env().1)
        .output()
        .expect("run sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("`sh -c 'echo hi >&7'` exited with status"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&leaked).expect("read"), "");
}
