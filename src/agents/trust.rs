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
            // Gemini ranks the rules by the length of the path as written
            // (a TRUST_PARENT rule's, not its parent's).
            let len = path.len();
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

/// One of git-swarm's Codex hooks, as Codex keys and hashes it.
#[derive(Debug, Clone)]
pub struct CodexHook {
    /// `<absolute .codex/hooks.json>:<event in snake case>:<group>:<handler>`.
    pub key: String,
    /// `sha256:<hex>` of the hook's definition, as Codex normalises it.
    pub hash: String,
}

impl CodexHook {
    /// The key and hash of the handler `placed` in `hooks_json`: the SHA-256
    /// of `{"event_name", "hooks": [{"async", "command", "timeout", "type"}],
    /// "matcher"?}` as compact JSON with sorted keys (`timeout` 600 when
    /// the handler names none), which is what Codex 0.171.0 records as
    /// `trusted_hash` (the real-harness suite checks it against Codex).
    pub fn of(hooks_json: &Path, placed: &super::json::Placed) -> CodexHook {
        use sha2::Digest;
        let event = snake(&placed.key);
        let v = &placed.value;
        // Keys inserted in sorted order: the JSON is written as Codex hashes it.
        let mut handler = serde_json::Map::new();
        handler.insert(
            "async".into(),
            v.get("async").cloned().unwrap_or(false.into()),
        );
        handler.insert(
            "command".into(),
            v.get("command").cloned().unwrap_or_default(),
        );
        handler.insert(
            "timeout".into(),
            v.get("timeout").cloned().unwrap_or(600.into()),
        );
        handler.insert("type".into(), "command".into());
        let mut identity = serde_json::Map::new();
        identity.insert("event_name".into(), event.clone().into());
        identity.insert(
            "hooks".into(),
            vec![serde_json::Value::Object(handler)].into(),
        );
        if let Some(m) = &placed.matcher {
            identity.insert("matcher".into(), m.clone().into());
        }
        let json = serde_json::Value::Object(identity).to_string();
        let digest = sha2::Sha256::digest(json.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        CodexHook {
            key: format!(
                "{}:{event}:{}:{}",
                hooks_json.display(),
                placed.group,
                placed.handler
            ),
            hash: format!("sha256:{hex}"),
        }
    }
}

/// `PreToolUse` as `pre_tool_use`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Codex's trust of `root` and of git-swarm's `hooks` from
/// `$CODEX_HOME/config.toml` (`text`): the project must be trusted
/// (`[projects."<root>"] trust_level = "trusted"`, else Codex reads none of
/// `.codex/`), and each hook too (`[hooks.state."<key>"] trusted_hash`
/// equal to its current hash, else Codex skips it without a word).
pub fn codex(text: Option<&str>, file: &Path, root: &Path, hooks: &[CodexHook]) -> Trust {
    let project_todo = format!(
        "trust this project in Codex: run `codex` here and trust it (or `codex exec --trust`), which writes [projects.\"{}\"] trust_level = \"trusted\" to {}",
        root.display(),
        file.display()
    );
    let Some(text) = text else {
        return Trust::NotTrusted { todo: project_todo };
    };
    let doc: toml::Table = match text.parse() {
        Ok(d) => d,
        Err(e) => {
            return Trust::Unknown {
                why: format!("{} does not parse: {}", file.display(), e.message()),
            };
        }
    };
    let projects = doc.get("projects").and_then(toml::Value::as_table);
    let trusted = root.ancestors().find_map(|dir| {
        let entry = projects?.get(dir.to_str()?)?.as_table()?;
        Some(entry.get("trust_level").and_then(toml::Value::as_str) == Some("trusted"))
    });
    if trusted != Some(true) {
        return Trust::NotTrusted { todo: project_todo };
    }
    let state = (doc.get("hooks"))
        .and_then(|h| h.get("state"))
        .and_then(toml::Value::as_table);
    let untrusted = (hooks.iter())
        .filter(|h| {
            let recorded = state
                .and_then(|s| s.get(&h.key))
                .and_then(|e| e.get("trusted_hash"))
                .and_then(toml::Value::as_str);
            recorded != Some(h.hash.as_str())
        })
        .count();
    if untrusted > 0 {
        return Trust::NotTrusted {
            todo: format!(
                "Codex skips {untrusted} of git-swarm's {} hooks, without a word, until you trust them: open `/hooks` in Codex here and trust git-swarm's (again after any change to them)",
                hooks.len()
            ),
        };
    }
    Trust::Trusted {
        why: format!(
            "the project and git-swarm's {} hooks are trusted in {}",
            hooks.len(),
            file.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trusted(t: &Trust) -> bool {
        matches!(t, Trust::Trusted { .. })
    }

    #[test]
    fn codex_wants_the_project_and_every_hook_trusted() {
        let file = Path::new("/h/.codex/config.toml");
        let root = Path::new("/work/repo");
        let hooks = [CodexHook {
            key: "/work/repo/.codex/hooks.json:session_start:0:0".into(),
            hash: "sha256:ab".into(),
        }];
        let c = |text: &str| codex(Some(text), file, root, &hooks);
        assert!(!trusted(&codex(None, file, root, &hooks)));
        assert!(!trusted(&c("model = \"x\"\n")));
        let project = "[projects.\"/work/repo\"]\ntrust_level = \"trusted\"\n";
        let t = c(project);
        assert!(
            matches!(&t, Trust::NotTrusted { todo } if todo.contains("1 of git-swarm's 1 hooks")),
            "{t:?}"
        );
        let state =
            "[hooks.state.\"/work/repo/.codex/hooks.json:session_start:0:0\"]\ntrusted_hash = ";
        assert!(!trusted(&c(&format!("{project}{state}\"sha256:00\"\n"))));
        assert!(trusted(&c(&format!("{project}{state}\"sha256:ab\"\n"))));
        assert!(matches!(c("[["), Trust::Unknown { .. }));
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
        assert!(trusted(&g(
            r#"{"/work/repo/sub": "TRUST_PARENT", "/work/repo": "DO_NOT_TRUST"}"#
        )));
        assert!(!trusted(&gemini(None, file, root, None)));
        assert!(trusted(&gemini(None, file, root, Some("true"))));
        assert!(matches!(g("{"), Trust::Unknown { .. }));
    }
}
