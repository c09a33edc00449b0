//! Whether a harness will run the hooks `agents install` wrote: the trust
//! each harness keeps in a file of its own, outside the repository. The
//! command line finds and reads the files (they are the user's, under their
//! home); this module decides what they say.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// What a harness's trust file says of this work tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum Trust {
    /// The harness runs the project's hooks here.
    Trusted { why: String },
    /// It does not: `todo` says what to do.
    NotTrusted { todo: String },
    /// The file could not be read or parsed.
    Unknown { why: String },
}

/// Gemini CLI's trust of `root` from `~/.gemini/trustedFolders.json`
/// (`text`, `None` when there is no such file): a JSON object (comments
/// allowed) mapping absolute paths to `TRUST_FOLDER` (that folder and
/// below), `TRUST_PARENT` (its parent and below) or `DO_NOT_TRUST`; the
/// longest rule that contains `root` wins. `env_trust` is
/// `GEMINI_CLI_TRUST_WORKSPACE`, which overrides the file for a run.
/// Untrusted, `gemini -p` exits 55 before asking the model anything, and
/// an interactive session runs no project hook.
pub fn gemini(text: Option<&str>, file: &Path, root: &Path, env_trust: Option<&str>) -> Trust {
    match env_trust {
        Some("true") => {
            return Trust::Trusted {
                why: "GEMINI_CLI_TRUST_WORKSPACE=true".into(),
            };
        }
        Some("false") => {
            return Trust::NotTrusted {
                todo: "GEMINI_CLI_TRUST_WORKSPACE=false distrusts every folder: unset it".into(),
            };
        }
        _ => {}
    }
    let todo = format!(
        "trust this folder in Gemini CLI: answer its prompt at the next start, or add \"{}\": \"TRUST_FOLDER\" to {} (for one headless run: GEMINI_CLI_TRUST_WORKSPACE=true)",
        root.display(),
        file.display()
    );
    let Some(text) = text else {
        return Trust::NotTrusted { todo };
    };
    let value = match jsonc_parser::cst::CstRootNode::parse(text, &Default::default()) {
        Ok(root) => match root.value().and_then(|v| v.to_serde_value()) {
            Some(v) => v,
            None => return Trust::NotTrusted { todo },
        },
        Err(e) => {
            return Trust::Unknown {
                why: format!("{} does not parse: {}", file.display(), e.kind()),
            };
        }
    };
    let Some(rules) = value.as_object() else {
        return Trust::Unknown {
            why: format!("{} is not a JSON object", file.display()),
        };
    };
    let mut best: Option<(usize, &str, &str)> = None;
    for (path, level) in rules {
        let Some(level) = level.as_str() else {
            continue;
        };
        let path_buf = PathBuf::from(path);
        let scope = match level {
            "TRUST_PARENT" => path_buf.parent().map(Path::to_path_buf),
            "TRUST_FOLDER" | "DO_NOT_TRUST" => Some(path_buf.clone()),
            _ => None,
        };
        let Some(scope) = scope else { continue };
        if root.starts_with(&scope) {
            let len = scope.as_os_str().len();
            if best.is_none_or(|(l, _, _)| len > l) {
                best = Some((len, path.as_str(), level));
            }
        }
    }
    match best {
        Some((_, path, "DO_NOT_TRUST")) => Trust::NotTrusted {
            todo: format!(
                "{} marks {path} DO_NOT_TRUST: Gemini CLI runs no project hook here; change it to TRUST_FOLDER",
                file.display()
            ),
        },
        Some((_, path, level)) => Trust::Trusted {
            why: format!("{path}: {level} in {}", file.display()),
        },
        None => Trust::NotTrusted { todo },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trusted(t: &Trust) -> bool {
        matches!(t, Trust::Trusted { .. })
    }

    #[test]
    fn gemini_s_longest_rule_wins() {
        let file = Path::new("/h/.gemini/trustedFolders.json");
        let root = Path::new("/work/repo");
        let g = |text: &str| gemini(Some(text), file, root, None);
        assert!(trusted(&g(r#"{"/work/repo": "TRUST_FOLDER"}"#)));
        assert!(trusted(&g(r#"{"/work/repo/x": "TRUST_PARENT"}"#)));
        assert!(trusted(&g(r#"{"/work": "TRUST_FOLDER", // mine
            "/elsewhere": "DO_NOT_TRUST"}"#)));
        assert!(!trusted(&g(
            r#"{"/work": "TRUST_FOLDER", "/work/repo": "DO_NOT_TRUST"}"#
        )));
        assert!(trusted(&g(
            r#"{"/work": "DO_NOT_TRUST", "/work/repo": "TRUST_FOLDER"}"#
        )));
        assert!(!trusted(&g(r#"{"/work/repository": "TRUST_FOLDER"}"#)));
        assert!(!trusted(&gemini(None, file, root, None)));
        assert!(trusted(&gemini(None, file, root, Some("true"))));
        assert!(matches!(g("{"), Trust::Unknown { .. }));
    }
}
