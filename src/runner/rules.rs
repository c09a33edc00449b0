//! What the runner refuses before anything starts: the program, git's
//! options and subcommands, and arguments that lead out of the repository.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use super::{Allowlist, Refusal, RefusalKind};
use crate::safe_fs::is_executable;

/// Global options git may be given before its subcommand. Everything else
/// is refused: `-c`, `--config-env`, `--exec-path`, `-C`, `--git-dir`,
/// `--work-tree` and the rest change which configuration, programs or
/// repository git uses.
const GIT_GLOBAL_OPTIONS: &[&str] = &[
    "--no-pager",
    "-P",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-optional-locks",
    "--no-replace-objects",
    "--no-advice",
];

/// The git subcommands a tool predicate may run: they read the repository
/// and write nothing. Anything else — an alias above all — is refused.
pub const GIT_SUBCOMMANDS: &[&str] = &[
    "blame",
    "cat-file",
    "check-attr",
    "check-ignore",
    "describe",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "for-each-ref",
    "grep",
    "log",
    "ls-files",
    "ls-tree",
    "merge-base",
    "name-rev",
    "rev-list",
    "rev-parse",
    "show",
    "show-ref",
    "status",
];

/// Long options refused after the subcommand, and every abbreviation of
/// them (git accepts unambiguous prefixes of long options): they write
/// files (`--output`), start a program (`--open-files-in-pager`, `--exec`,
/// `--upload-pack`) or point git elsewhere.
const GIT_FORBIDDEN_LONG: &[&str] = &[
    "output",
    "open-files-in-pager",
    "exec",
    "exec-path",
    "upload-pack",
    "receive-pack",
    "config-env",
    "git-dir",
    "work-tree",
    "namespace",
];

/// A program name without any path: no `/`, no `\`, no whitespace or
/// control characters, not `.` or `..`.
pub fn is_bare_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_whitespace() || c.is_control())
}

fn refusal(kind: RefusalKind, message: String, hint: impl Into<String>) -> Refusal {
    Refusal {
        kind,
        message,
        hint: hint.into(),
    }
}

/// Every rule that does not need the file system to find the program.
pub fn check(argv: &[String], root: &Path, allow: &Allowlist) -> Result<(), Refusal> {
    let Some(program) = argv.first() else {
        return Err(refusal(
            RefusalKind::Empty,
            "no program to run".into(),
            "write `tool:<program> <args>`",
        ));
    };
    if let Some(arg) = argv.iter().find(|a| a.contains('\0')) {
        return Err(refusal(
            RefusalKind::Nul,
            format!("argument `{}` contains a NUL byte", arg.escape_debug()),
            "remove the NUL byte",
        ));
    }
    if !is_bare_name(program) {
        return Err(refusal(
            RefusalKind::ProgramPath,
            format!("`{}` is not a bare program name", program.escape_debug()),
            "name a program on PATH without any `/` (for example `git`, not `/usr/bin/git` or `./script`); programs from the repository never run",
        ));
    }
    if !allow.allows(program) {
        return Err(refusal(
            RefusalKind::NotAllowed,
            format!("`{program}` is not on your allowlist of tool programs"),
            format!(
                "if you trust `{program}` to run with arguments from this repository's directives, allow it with `git config --global --add swarm.allowTool {program}`"
            ),
        ));
    }
    if program == "git" {
        check_git(&argv[1..])?;
    }
    for arg in &argv[1..] {
        check_path_arg(arg, root)?;
    }
    Ok(())
}

fn check_git(args: &[String]) -> Result<(), Refusal> {
    let mut rest = args.iter();
    let subcommand = loop {
        let Some(arg) = rest.next() else {
            return Err(refusal(
                RefusalKind::GitSubcommand,
                "git is given no subcommand".into(),
                format!(
                    "name one of the read-only subcommands: {}",
                    GIT_SUBCOMMANDS.join(", ")
                ),
            ));
        };
        if !arg.starts_with('-') {
            break arg;
        }
        if GIT_GLOBAL_OPTIONS.contains(&arg.as_str()) {
            continue;
        }
        let name = arg.split('=').next().unwrap_or(arg);
        let why = match name {
            "-c" => {
                "sets configuration, which can run any command (an alias `!cmd`, a pager, a diff driver)"
            }
            "--config-env" => "sets configuration from the environment, which can run any command",
            "--exec-path" => "changes where git finds the programs it runs",
            "-C" | "--git-dir" | "--work-tree" | "--namespace" => {
                "points git at another directory or repository"
            }
            "-p" | "--paginate" => "starts a pager",
            _ => "is not one of the global options allowed in a tool predicate",
        };
        return Err(refusal(
            RefusalKind::GitOption,
            format!("git option `{}` {why}", arg.escape_debug()),
            format!(
                "tool predicates run git in the repository root with the user's configuration; the global options allowed are {}",
                GIT_GLOBAL_OPTIONS.join(", ")
            ),
        ));
    };
    if !GIT_SUBCOMMANDS.contains(&subcommand.as_str()) {
        return Err(refusal(
            RefusalKind::GitSubcommand,
            format!(
                "`git {}` is not one of the read-only git subcommands (aliases are refused)",
                subcommand.escape_debug()
            ),
            format!("the subcommands allowed are {}", GIT_SUBCOMMANDS.join(", ")),
        ));
    }
    for arg in rest.take_while(|a| a.as_str() != "--") {
        if let Some(long) = arg.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            if let Some(full) = GIT_FORBIDDEN_LONG.iter().find(|f| f.starts_with(name)) {
                return Err(refusal(
                    RefusalKind::GitOption,
                    format!(
                        "`git {subcommand}` option `{}` (`--{full}`) writes files or runs a program",
                        arg.escape_debug()
                    ),
                    "tool predicates may only read; drop the option",
                ));
            }
        } else if subcommand == "grep" && arg.len() > 1 && arg.starts_with('-') && arg.contains('O')
        {
            return Err(refusal(
                RefusalKind::GitOption,
                format!(
                    "`git grep` option `{}` may open files in a pager (`-O`)",
                    arg.escape_debug()
                ),
                "drop `-O`; to match a pattern that starts with `-`, give it after `-e` as a separate argument without `O`, or use a character class",
            ));
        }
    }
    Ok(())
}

/// The parts of an argument that may name a path, without knowing the
/// program's options (the rule fails closed rather than list them):
///
/// - the argument itself;
/// - what follows each `=` (`--file=PATH`, `if=PATH`, `-fx=PATH`);
/// - for a bundle of short options (`-` then not `-`), every tail after
///   the dash: in `-qf/etc/passwd` any letter may be one that takes the
///   rest of the bundle as its value, so `f/etc/passwd`, `/etc/passwd`,
///   `etc/passwd`… may each be the path a program opens.
fn path_candidates(arg: &str) -> impl Iterator<Item = &str> {
    let after_equals = arg.match_indices('=').map(move |(i, _)| &arg[i + 1..]);
    let bundle = arg.starts_with('-') && !arg.starts_with("--");
    let tails = arg
        .char_indices()
        .skip(1)
        .filter(move |_| bundle)
        .map(move |(i, _)| &arg[i..]);
    std::iter::once(arg).chain(after_equals).chain(tails)
}

fn check_path_arg(arg: &str, root: &Path) -> Result<(), Refusal> {
    for candidate in path_candidates(arg) {
        // Where the path is only part of the argument, say which part and how to
        // write the argument so that only the intended path is checked.
        let (shown, split) = if candidate == arg {
            (String::new(), "")
        } else {
            (
                format!(
                    " (`{}` may be a path: {})",
                    candidate.escape_debug(),
                    if arg.starts_with('-') && !arg.starts_with("--") {
                        "in a bundle of short options, any letter may take the rest as its value"
                    } else {
                        "a value after `=`"
                    }
                ),
                "; give an option's value as an argument of its own (`-f FILE`, not `-fFILE` or `-qfFILE`)",
            )
        };
        let hint = format!("{PATH_HINT}{split}");
        if candidate.starts_with('/') {
            return Err(refusal(
                RefusalKind::AbsolutePath,
                format!(
                    "argument `{}` is an absolute path{shown}",
                    arg.escape_debug()
                ),
                hint,
            ));
        }
        if candidate.split('/').any(|c| c == "..") {
            return Err(refusal(
                RefusalKind::ParentPath,
                format!(
                    "argument `{}` climbs out with `..`{shown}",
                    arg.escape_debug()
                ),
                hint,
            ));
        }
        // Options are checked too: after `--`, or for a program that does not
        // parse options, `-lnk` names the file `-lnk`.
        if let Some(link) = symlink_outside(candidate, root) {
            return Err(refusal(
                RefusalKind::SymlinkOutside,
                format!(
                    "argument `{}` goes through the symlink `{link}`, which leads outside the repository (or nowhere){shown}",
                    arg.escape_debug()
                ),
                format!("{SYMLINK_HINT}{split}"),
            ));
        }
    }
    Ok(())
}

const SYMLINK_HINT: &str =
    "name a file inside the repository; tools may not read through links that leave it";

const PATH_HINT: &str = "name files relative to the repository root, where tools run; nothing outside the repository is reachable";

/// Walks `candidate` down from the root; every symlink on the way must
/// resolve to a place inside the root. Stops at the first part that does
/// not exist. Returns the first link that leads elsewhere, relative to the
/// root.
fn symlink_outside(candidate: &str, root: &Path) -> Option<String> {
    let mut path = root.to_path_buf();
    for component in Path::new(candidate).components() {
        match component {
            Component::Normal(part) => path.push(part),
            Component::CurDir => continue,
            // Absolute paths and `..` were refused before.
            Component::RootDir | Component::Prefix(_) | Component::ParentDir => return None,
        }
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if meta.file_type().is_symlink()
            && !std::fs::canonicalize(&path).is_ok_and(|target| target.starts_with(root))
        {
            let link = path.strip_prefix(root).unwrap_or(&path);
            return Some(link.display().to_string());
        }
    }
    None
}

/// The absolute directories of `path` that lie outside the repository: the
/// only ones searched for the program and passed on as its `PATH`. A
/// relative entry (`.`, an empty one, `node_modules/.bin`) would find
/// programs in the repository.
pub fn search_path(path: Option<&OsStr>, root: &Path) -> Vec<PathBuf> {
    let Some(path) = path else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in std::env::split_paths(path) {
        if !dir.is_absolute() {
            continue;
        }
        let Ok(real) = std::fs::canonicalize(&dir) else {
            continue;
        };
        if real.starts_with(root) || dirs.contains(&dir) {
            continue;
        }
        dirs.push(dir);
    }
    dirs
}

/// Why a program could not be resolved.
pub enum Resolve {
    NotFound,
    Refused(Refusal),
}

/// The first executable file named `name` in `search`.
pub fn resolve(name: &str, search: &[PathBuf], root: &Path) -> Result<PathBuf, Resolve> {
    for dir in search {
        let candidate = dir.join(name);
        let Ok(meta) = std::fs::metadata(&candidate) else {
            continue;
        };
        if !meta.is_file() || !is_executable(&meta) {
            continue;
        }
        let real = std::fs::canonicalize(&candidate).unwrap_or_else(|_| candidate.clone());
        if real.starts_with(root) {
            return Err(Resolve::Refused(refusal(
                RefusalKind::ProgramInRepository,
                format!(
                    "`{name}` on PATH is {}, a file in the repository",
                    candidate.display()
                ),
                "programs from the repository never run; install the tool outside it",
            )));
        }
        return Ok(candidate);
    }
    Err(Resolve::NotFound)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::UserEnv;
    use RefusalKind::*;

    fn argv(s: &str) -> Vec<String> {
        shlex::split(s).expect("test argv quotes")
    }

    fn kind(s: &str) -> Option<RefusalKind> {
        let allow = Allowlist::new(Vec::new(), UserEnv::default());
        check(&argv(s), Path::new("/nonexistent-root"), &allow)
            .err()
            .map(|r| r.kind)
    }

    /// Each command line, and the refusal it meets (`None`: it may run).
    fn expect(cases: &[(&str, Option<RefusalKind>)]) {
        for (line, want) in cases {
            assert_eq!(kind(line), *want, "{line}");
        }
    }

    #[test]
    fn git_global_options_are_refused_but_the_harmless_ones() {
        expect(&[
            ("git -c alias.x=!sh x", Some(GitOption)),
            ("git --config-env=core.pager=X log", Some(GitOption)),
            ("git --exec-path=bin log", Some(GitOption)),
            ("git --exec-path", Some(GitOption)),
            ("git -C sub log", Some(GitOption)),
            ("git --git-dir=x log", Some(GitOption)),
            ("git -p log", Some(GitOption)),
            ("git --no-pager --literal-pathspecs log -1", None),
        ]);
    }

    #[test]
    fn only_read_only_subcommands_run() {
        expect(&[
            ("git", Some(GitSubcommand)),
            ("git x", Some(GitSubcommand)),
            ("git commit -m x", Some(GitSubcommand)),
            ("git config core.pager x", Some(GitSubcommand)),
            ("git diff --cached --quiet", None),
        ]);
    }

    #[test]
    fn options_that_write_or_run_are_refused_in_every_abbreviation() {
        expect(&[
            ("git log --output=x", Some(GitOption)),
            ("git diff --out x", Some(GitOption)),
            ("git grep --open-files x", Some(GitOption)),
            ("git grep -Ovi x", Some(GitOption)),
            ("git grep -nO x", Some(GitOption)),
            ("git diff --output-indicator-new=+ HEAD", None),
            ("git log --oneline -- --output", None),
            ("git grep -n TODO", None),
        ]);
    }

    #[test]
    fn paths_may_not_leave_the_repository() {
        expect(&[
            ("grep x /etc/passwd", Some(AbsolutePath)),
            ("grep -f/etc/passwd x", Some(AbsolutePath)),
            ("grep --file=/etc/passwd x", Some(AbsolutePath)),
            ("grep x ../y", Some(ParentPath)),
            ("grep x a/../../y", Some(ParentPath)),
            ("grep -f../y x", Some(ParentPath)),
            ("grep x ..", Some(ParentPath)),
            ("git log main..HEAD", None),
            ("git diff HEAD...", None),
            ("grep -r http://x src/", None),
        ]);
    }

    #[test]
    fn every_tail_of_a_short_option_bundle_is_a_path() {
        expect(&[
            ("grep -qf/etc/passwd x", Some(AbsolutePath)),
            ("diff -qX/etc/passwd a b", Some(AbsolutePath)),
            ("grep -qf../y x", Some(ParentPath)),
            ("grep -qfa=/etc/passwd x", Some(AbsolutePath)),
            ("grep --x=a=/etc/passwd x", Some(AbsolutePath)),
            // A value with a `/` in a bundle could be split anywhere: refused.
            ("grep -fsrc/pat x", Some(AbsolutePath)),
            ("grep -f src/pat x", None),
            ("grep -qin x src/", None),
            // Long options are not bundles.
            ("git log --format=%H/%s", None),
        ]);
    }

    #[test]
    fn programs_are_bare_allowlisted_names() {
        expect(&[
            ("", Some(Empty)),
            ("./true", Some(ProgramPath)),
            ("/bin/true", Some(ProgramPath)),
            ("..", Some(ProgramPath)),
            ("sh -c x", Some(NotAllowed)),
            ("true", None),
        ]);
    }

    #[test]
    fn an_empty_value_clears_the_allowlist() {
        let allow = Allowlist::new(
            ["sleep".into(), String::new(), "yes".into(), "a b".into()],
            UserEnv::default(),
        );
        assert_eq!(allow.programs().collect::<Vec<_>>(), ["yes"]);
        assert_eq!(allow.ignored(), ["a b"]);
    }
}
