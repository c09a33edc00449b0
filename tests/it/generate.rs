//! `git swarm generate man|completions`, checked the way a user meets them:
//! `man` and `git swarm --help` find the pages, and bash completes both
//! `git-swarm …` and `git swarm …` (through git's own completion).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::TestEnv;

/// PATH with `first` in front and without the folder cargo built the
/// binary into, so that the only git-swarm on it is in `first`.
fn path_with(first: &Path) -> String {
    let built = common::bin().parent().expect("bin dir").to_path_buf();
    let rest = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|p| *p != built && !p.join("git-swarm").exists())
        .collect::<Vec<_>>();
    let all = std::iter::once(first.to_path_buf()).chain(rest);
    std::env::join_paths(all)
        .expect("join PATH")
        .to_string_lossy()
        .into_owned()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Installed as `cargo install` does (`<prefix>/bin/git-swarm`), `git swarm
/// generate man` with no folder writes the pages where `man` looks for that
/// PATH entry, with no MANPATH set.
#[test]
fn man_pages_go_where_man_and_git_help_find_them() {
    let env = TestEnv::new();
    let prefix = env.tmp.path().join("prefix");
    let bin = prefix.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::os::unix::fs::symlink(common::bin(), bin.join("git-swarm")).expect("symlink");
    let path = path_with(&bin);
    let run = |program: &str, args: &[&str], vars: &[(&str, &str)]| {
        let mut cmd = env.command(program, &env.root);
        cmd.args(args).env("PATH", &path);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        cmd.output().expect("run")
    };

    // The environment is cleared (no MANPATH) and HOME is in the temp dir:
    // `man` finds the pages only where the set-up put them.
    let out = run("git", &["swarm", "generate", "man"], &[]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr, "");
    let pages = prefix.join("share/man/man1");
    assert_eq!(
        stdout,
        format!(
            "Wrote the man pages to {}\n`man git-swarm` and `git swarm --help` find them there while {} is on PATH.\n",
            pages.display(),
            bin.display()
        )
    );
    assert!(pages.join("git-swarm.1").is_file());
    assert!(pages.join("git-swarm-hooks-install.1").is_file());
    // The help says where the pages go and when man needs MANPATH.
    let out = run("git", &["swarm", "generate", "man", "--help"], &[]);
    let (stdout, _) = text(&out);
    assert!(
        stdout.contains("~/.cargo/share/man/man1") && stdout.contains("MANPATH"),
        "{stdout}"
    );

    // A MANPATH that leaves them out is said, with what to add.
    let out = run(
        "git",
        &["swarm", "generate", "man"],
        &[("MANPATH", "/usr/share/man")],
    );
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "warning: MANPATH is set and leaves {} out",
            prefix.join("share/man").display()
        )) && stderr.contains("export MANPATH="),
        "{stderr}"
    );
    // An empty entry brings the default path, beside PATH, back.
    let out = run(
        "git",
        &["swarm", "generate", "man"],
        &[("MANPATH", ":/usr/share/man")],
    );
    assert_eq!(text(&out).1, "");

    if !common::has_program("man") {
        common::skipped(
            "man",
            "not installed (apt-get install man-db): the man lookups were not tried",
        );
        return;
    }
    for page in ["git-swarm", "git-swarm-hooks-install"] {
        let out = run("man", &["-w", page], &[]);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "man -w {page}: {stderr}");
        assert_eq!(
            PathBuf::from(stdout.trim()),
            pages.join(format!("{page}.1"))
        );
    }
    // What git runs for `git swarm --help`: `man git-swarm`.
    let out = run(
        "git",
        &["swarm", "--help"],
        &[("MANPAGER", "cat"), ("PAGER", "cat")],
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("NAME")
            && stdout.contains("git-swarm - Keep what your coding agents learn"),
        "{stdout}"
    );
}

/// git turns `git swarm --help` into `man git-swarm`, which finds nothing
/// before `git swarm generate man` (nor does it with MANPATH and HOME
/// isolated, as here): clap's usage errors point to `git swarm help …`
/// instead, which works without the pages, and `-h` says how to install them.
#[test]
fn usage_errors_point_to_help_that_works_without_man_pages() {
    let env = TestEnv::new();
    let empty = env.tmp.path().join("no-man-pages");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let git = |args: &[&str]| {
        let out = env
            .command("git", &env.root)
            .args(args)
            .env("MANPATH", &empty)
            .output()
            .expect("git");
        let (stdout, stderr) = text(&out);
        (out.status.code(), stdout, stderr)
    };
    for (args, help, shown) in [
        (
            &["swarm", "bogus"][..],
            "git swarm help",
            "Usage: git swarm <COMMAND>",
        ),
        (
            &["swarm", "hooks", "instal"],
            "git swarm help hooks",
            "Usage: git swarm hooks <COMMAND>",
        ),
        (
            &["swarm", "check", "--bogus"],
            "git swarm help check",
            "Usage: git swarm check [OPTIONS]",
        ),
    ] {
        let (code, _, stderr) = git(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.ends_with(&format!("\nFor more information, try '{help}'.\n")),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("'--help'"), "{stderr}");
        // The command the hint names works, through git, with no man page.
        let words: Vec<&str> = help.split(' ').skip(1).collect();
        let (code, stdout, stderr) = git(&words);
        assert_eq!(code, Some(0), "{help}: {stderr}");
        assert!(stdout.contains(shown), "{help}: {stdout}");
    }
    let (code, stdout, _) = git(&["swarm", "-h"]);
    assert_eq!(code, Some(0));
    let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("`git swarm help [COMMAND]...`")
            && words.contains("which `git swarm generate man` installs"),
        "{stdout}"
    );
}

/// `generate completions` without a shell says which shells there are.
#[test]
fn completions_without_a_shell_list_the_shells() {
    let env = TestEnv::new();
    let run = env.swarm(&["generate", "completions"]);
    run.code(2);
    assert!(
        run.stderr
            .contains("[possible values: bash, elvish, fish, powershell, zsh]"),
        "{}",
        run.snapshot()
    );
    assert_eq!(run.stdout, "");
}

/// Runs `script` in bash after sourcing git's completion (when `with_git`)
/// and git-swarm's; `c WORD…` prints `WORDS -> candidates` for completing the
/// last word.
fn bash_complete(env: &TestEnv, with_git: bool, lines: &[&str]) -> String {
    let script = env.tmp.path().join("git-swarm.bash");
    let run = env.swarm_with(&["generate", "completions", "bash"], &[], None);
    run.success();
    std::fs::write(&script, &run.stdout).expect("write script");
    let mut body = String::new();
    if with_git {
        body.push_str(". /usr/share/bash-completion/completions/git\n");
    }
    body.push_str(&format!(". '{}'\n", script.display()));
    body.push_str(
        r#"c() {
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
    if [ "$1" = git ]; then f=__git_wrap__git_main; else f=_git__swarm; fi
    "$f" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    echo "$* -> ${COMPREPLY[*]}"
}
"#,
    );
    for line in lines {
        body.push_str(line);
        body.push('\n');
    }
    let out = env
        .command("bash", env.tmp.path())
        .args(["--norc", "--noprofile", "-c", &body])
        .output()
        .expect("run bash");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    stdout
}

const HIDDEN: [&str; 3] = ["hook", "run-tool", "changes"];

fn words_after_arrow(line: &str) -> Vec<&str> {
    line.split_once(" -> ")
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default()
}

#[test]
fn bash_completes_git_swarm_and_git_dash_swarm_without_hidden_commands() {
    if !common::has_program("bash") {
        common::skipped("bash", "not installed");
        return;
    }
    let env = TestEnv::new();
    let out = bash_complete(
        &env,
        false,
        &[
            "c git-swarm ''",
            "c git-swarm help ''",
            "c git-swarm hooks in",
            "c git-swarm check --st",
            "c git-swarm check --format ''",
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    for line in &lines[..2] {
        let words = words_after_arrow(line);
        assert!(
            words.contains(&"hooks") && words.contains(&"check"),
            "{line}"
        );
        for hidden in HIDDEN {
            assert!(!words.contains(&hidden), "{hidden} offered: {line}");
        }
    }
    assert_eq!(
        &lines[2..],
        [
            "git-swarm hooks in -> install",
            "git-swarm check --st -> --staged --strict",
            "git-swarm check --format  -> text json github sarif codequality",
        ]
    );

    let git_completion = Path::new("/usr/share/bash-completion/completions/git");
    if !git_completion.is_file() {
        common::skipped(
            "git-completion",
            &format!(
                "git's bash completion is not at {}: `git swarm` completion was not tried",
                git_completion.display()
            ),
        );
        return;
    }
    let out = bash_complete(
        &env,
        true,
        &[
            "c git swarm ''",
            "c git swarm hooks in",
            "c git swarm check --st",
            "c git -C . swarm check --format ''",
            "c git swarm r",
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    let words = words_after_arrow(lines[0]);
    assert!(
        words.contains(&"hooks") && words.contains(&"inject"),
        "{}",
        lines[0]
    );
    for hidden in HIDDEN {
        assert!(!words.contains(&hidden), "{hidden} offered: {}", lines[0]);
    }
    assert_eq!(
        &lines[1..],
        [
            "git swarm hooks in -> install",
            "git swarm check --st -> --staged --strict",
            "git -C . swarm check --format  -> text json github sarif codequality",
            "git swarm r -> review retire reflect record",
        ]
    );
}

/// The README's instruction: the script saved as
/// `~/.local/share/bash-completion/completions/git-swarm` is loaded on
/// demand by bash-completion, for `git-swarm` and for `git swarm`.
#[test]
fn bash_completion_loads_the_script_from_the_user_folder() {
    let main = Path::new("/usr/share/bash-completion/bash_completion");
    if !common::has_program("bash") || !main.is_file() {
        common::skipped(
            "bash-completion",
            &format!(
                "{} is missing (apt-get install bash-completion)",
                main.display()
            ),
        );
        return;
    }
    let env = TestEnv::new();
    let run = env.swarm_with(&["generate", "completions", "bash"], &[], None);
    run.success();
    let folder = env.home().join(".local/share/bash-completion/completions");
    std::fs::create_dir_all(&folder).expect("mkdir");
    std::fs::write(folder.join("git-swarm"), &run.stdout).expect("write script");
    let body = format!(
        ". {}\n{}",
        main.display(),
        r#"c() {
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
    complete -p "$1" >/dev/null 2>&1 || _completion_loader "$1"
    f=$(complete -p "$1" | sed 's/.*-F \([^ ]*\) .*/\1/')
    "$f" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    echo "$* -> ${COMPREPLY[*]}"
}
c git swarm hooks in
c git-swarm hooks st
"#
    );
    let out = env
        .command("bash", env.tmp.path())
        .args(["--norc", "--noprofile", "-c", &body])
        .output()
        .expect("run bash");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stdout,
        "git swarm hooks in -> install\ngit-swarm hooks st -> status\n"
    );
}
