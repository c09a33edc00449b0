//! `git swarm init`: lays out `.swarm/` from the template built into the binary.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::store::{Repo, SWARM_DIR, create_new};

/// The files of `.swarm-template/`, embedded at build time.
pub const TEMPLATE: &[(&str, &str)] = &[
    ("README.md", include_str!("../.swarm-template/README.md")),
    (
        "config.toml",
        include_str!("../.swarm-template/config.toml"),
    ),
    (
        ".gitattributes",
        include_str!("../.swarm-template/.gitattributes"),
    ),
    (".gitignore", include_str!("../.swarm-template/.gitignore")),
    (
        "directives/run-tests-before-handoff.toml",
        include_str!("../.swarm-template/directives/run-tests-before-handoff.toml"),
    ),
    (
        "directives/no-private-keys.toml",
        include_str!("../.swarm-template/directives/no-private-keys.toml"),
    ),
    (
        "directives/lockfile-with-manifest.toml",
        include_str!("../.swarm-template/directives/lockfile-with-manifest.toml"),
    ),
    (
        "directives/no-force-push-default-branch.toml",
        include_str!("../.swarm-template/directives/no-force-push-default-branch.toml"),
    ),
    (
        "directives/no-verify-bypass.toml",
        include_str!("../.swarm-template/directives/no-verify-bypass.toml"),
    ),
    (
        "directives/no-hard-reset-over-work.toml",
        include_str!("../.swarm-template/directives/no-hard-reset-over-work.toml"),
    ),
    ("events/.gitkeep", ""),
    ("quarantine/.gitkeep", ""),
];

/// What `init` did, file by file.
#[derive(Debug, Default)]
pub struct InitReport {
    pub swarm_dir: PathBuf,
    /// Paths (relative to the repository root) created now.
    pub created: Vec<String>,
    /// Paths that existed and were left as they were.
    pub kept: Vec<String>,
}

/// Creates whatever of the template is missing; never touches a file that exists.
pub fn init(repo: &Repo) -> Result<InitReport> {
    let swarm_dir = repo.root.join(SWARM_DIR);
    let mut report = InitReport {
        swarm_dir: swarm_dir.clone(),
        ..InitReport::default()
    };
    if let Some(kind @ crate::safe_fs::FileKind::Symlink) = crate::safe_fs::not_a_folder(&swarm_dir)
    {
        return Err(Error::LinkedFolder {
            path: swarm_dir,
            kind,
        });
    }
    if swarm_dir.exists() && !swarm_dir.is_dir() {
        return Err(Error::usage(
            format!("{} exists and is not a directory", swarm_dir.display()),
            "move the file away, then run `git swarm init` again",
        ));
    }
    // The example directives come with a new store only: one a user deleted stays deleted.
    let fresh = !swarm_dir.join("directives").exists();
    for (rel, contents) in TEMPLATE {
        let path = swarm_dir.join(rel);
        if rel.starts_with("directives/") && !fresh {
            continue;
        }
        let shown = format!("{SWARM_DIR}/{rel}");
        // Anything there is kept, a dangling link too.
        if path.symlink_metadata().is_ok() {
            report.kept.push(shown);
            continue;
        }
        // A directive whose id is taken in quarantine/ stays out: ids are unique across both.
        if let Some(stem) = rel
            .strip_prefix("directives/")
            .and_then(|f| f.strip_suffix(".toml"))
            && swarm_dir
                .join("quarantine")
                .join(format!("{stem}.toml"))
                .exists()
        {
            report.kept.push(shown);
            continue;
        }
        match create_new(&swarm_dir, &path, contents.as_bytes(), &shown, rel) {
            Ok(()) => report.created.push(shown),
            Err(Error::AlreadyExists { .. }) => report.kept.push(shown),
            Err(e) => return Err(e),
        }
    }
    Ok(report)
}
