//! The project's own directives (`.swarm/directives/`) name files of this
//! repository in their `paths` and predicates. A directive whose globs
//! match no file is never in scope again, and its lesson is lost without a
//! word: moving a file must move the directives that name it.

use std::path::Path;
use std::process::Command;

use git_swarm::pathglob::PathGlob;
use git_swarm::predicate::Predicate;

#[test]
fn every_directive_path_matches_a_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .expect("git ls-files");
    if !listed.status.success() {
        eprintln!("skipped: {} is not a git checkout", root.display());
        return;
    }
    let files: Vec<String> = listed
        .stdout
        .split(|&b| b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    let matches_a_file = |glob: &PathGlob| files.iter().any(|f| glob.is_match(f));
    let mut lost = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(root.join(".swarm/directives"))
        .expect("the project's directives")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    dirs.sort();
    for path in dirs {
        let text = std::fs::read_to_string(&path).expect("a directive file");
        let doc: toml::Table = toml::from_str(&text).expect("a directive that parses");
        let name = path
            .file_name()
            .expect("a file name")
            .to_string_lossy()
            .into_owned();
        let strings = |key: &str| -> Vec<String> {
            doc.get(key)
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        for glob in strings("paths") {
            let parsed = PathGlob::parse(&glob).expect("a glob that parses");
            // The lockfile lesson is about the npm projects git-swarm is used in.
            if !matches_a_file(&parsed) && name != "lockfile-with-manifest.toml" {
                lost.push(format!("{name}: paths `{glob}`"));
            }
        }
        for source in strings("verify") {
            let glob = match Predicate::parse(&source).expect("a predicate that parses") {
                // A `file_not_modified` glob may match no file: it keeps
                // files from appearing there (a new one counts as modified).
                Predicate::FileNotModified(_) => None,
                Predicate::FileModified(g)
                | Predicate::Grep { glob: Some(g), .. }
                | Predicate::GrepTree { glob: Some(g), .. } => Some(g),
                Predicate::Tool { argv } => {
                    // `git grep … -- PATH`: the path it searches.
                    argv.iter()
                        .skip_while(|a| *a != "--")
                        .nth(1)
                        .map(|p| PathGlob::parse(p).expect("a path that parses"))
                }
                _ => None,
            };
            if let Some(g) = glob
                && !matches_a_file(&g)
            {
                lost.push(format!("{name}: verify `{source}`"));
            }
        }
    }
    assert!(
        lost.is_empty(),
        "these directives name files that are not in the repository (moved or renamed?): {lost:#?}"
    );
}

/// `docs/architecture.md` tells a newcomer in which file each command
/// decides: every source path it names (`src/…`, `cli/…`, `tests/…`) must
/// exist, or the map leads nowhere after a file moves.
#[test]
fn the_architecture_names_files_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/architecture.md")).expect("architecture.md");
    let mut missing = Vec::new();
    for quoted in text.split('`').skip(1).step_by(2) {
        let is_path = (quoted.ends_with(".rs") || quoted.ends_with('/'))
            && !quoted.starts_with('.')
            && !quoted.contains(['*', '{', ' ', '<']);
        if !is_path {
            continue;
        }
        let path = if quoted.starts_with("src/") || quoted.starts_with("tests/") {
            root.join(quoted)
        } else {
            root.join("src").join(quoted)
        };
        if !path.exists() {
            missing.push(quoted.to_owned());
        }
    }
    assert!(
        missing.is_empty(),
        "docs/architecture.md names files that do not exist: {missing:?}"
    );
}
