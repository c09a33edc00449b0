//! Which git-swarm role a harness's agent type is.
//!
//! The harnesses name their own agents (Claude Code's `general-purpose`,
//! Codex's `default`, Gemini CLI's `generalist`, opencode's `general`…),
//! and none of those is a role a directive is scoped to: without a mapping,
//! a user who installs the hooks and spawns the harness's default subagent
//! gets no lesson at all. So the built-in table below maps each harness's
//! own types to the roles the template's directives use, and
//! `.swarm/config.toml`'s `[agent_types]` extends or overrides it. A type
//! that neither names is read as a role itself (lowercased, `-` as `_`).

use std::collections::BTreeMap;

/// The built-in mapping: an agent type (as [`key`] normalises it), the
/// role it maps to, and the harness(es) whose type it is (for the docs and
/// for messages).
pub const BUILTIN: &[(&str, &str, &str)] = &[
    // Claude Code's built-in subagents: `general-purpose` is the `Agent`
    // tool's default, `claude` (2.1.332) the catch-all.
    ("general_purpose", "coder", "Claude Code"),
    ("claude", "coder", "Claude Code"),
    ("explore", "explorer", "Claude Code, opencode"),
    ("plan", "planner", "Claude Code, opencode"),
    // Codex: `spawn_agent` without `agent_type` starts a `default` agent.
    ("default", "coder", "Codex"),
    ("worker", "coder", "Codex"),
    ("explorer", "explorer", "Codex"),
    // Gemini CLI's subagents.
    ("generalist", "coder", "Gemini CLI"),
    ("codebase_investigator", "explorer", "Gemini CLI"),
    ("cli_help", "explorer", "Gemini CLI"),
    // opencode: `general` is the task tool's default; `build` is the main agent.
    ("general", "coder", "opencode"),
    ("build", "coordinator", "opencode"),
];

/// How an agent type is looked up: a plugin agent's `plugin:name` by its
/// name, lowercase, `-` and spaces as `_`.
pub fn key(agent_type: &str) -> String {
    let name = agent_type.rsplit(':').next().unwrap_or(agent_type).trim();
    name.to_lowercase().replace(['-', ' '], "_")
}

/// Where a role came from, for `agents status` and messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `.swarm/config.toml`'s `[agent_types]`.
    Config,
    /// The built-in table.
    Builtin,
    /// The type names a role itself.
    Itself,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Config => "config",
            Source::Builtin => "built-in",
            Source::Itself => "itself",
        }
    }
}

/// The role `agent_type` maps to, with where the mapping came from; `None`
/// when nothing maps it and it is no role name. `overrides` is the
/// config's `[agent_types]`, looked up by the type as written, then as
/// [`key`] normalises it.
pub fn resolve(overrides: &BTreeMap<String, String>, agent_type: &str) -> Option<(String, Source)> {
    let k = key(agent_type);
    if let Some(role) = overrides
        .get(agent_type)
        .or_else(|| overrides.get(&k))
        .or_else(|| {
            overrides
                .iter()
                .find(|(name, _)| key(name) == k)
                .map(|(_, r)| r)
        })
        && crate::directive::is_valid_scope_name(role)
    {
        return Some((role.clone(), Source::Config));
    }
    if let Some((_, role, _)) = BUILTIN.iter().find(|(t, _, _)| *t == k) {
        return Some(((*role).to_owned(), Source::Builtin));
    }
    crate::directive::is_valid_scope_name(&k).then_some((k, Source::Itself))
}

/// The role of `agent_type`, however it was found.
pub fn role_for(overrides: &BTreeMap<String, String>, agent_type: &str) -> Option<String> {
    resolve(overrides, agent_type).map(|(role, _)| role)
}

/// When `name` is a harness's agent type that maps to another role (not a
/// role name as written), that role and whose type it is: so that
/// `--agents general-purpose` can say what it means.
pub fn harness_type(overrides: &BTreeMap<String, String>, name: &str) -> Option<(String, String)> {
    let (role, source) = resolve(overrides, name)?;
    if source == Source::Itself || role == name {
        return None;
    }
    let whose = match source {
        Source::Builtin => BUILTIN
            .iter()
            .find(|(t, _, _)| *t == key(name))
            .map_or("a harness", |(_, _, h)| h)
            .to_owned(),
        _ => "this repository's [agent_types]".to_owned(),
    };
    Some((role, whose))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_harnesses_default_subagents_are_coders() {
        let none = BTreeMap::new();
        for t in [
            "general-purpose",
            "default",
            "generalist",
            "general",
            "worker",
        ] {
            assert_eq!(role_for(&none, t).as_deref(), Some("coder"), "{t}");
        }
        assert_eq!(role_for(&none, "Explore").as_deref(), Some("explorer"));
        assert_eq!(role_for(&none, "Plan").as_deref(), Some("planner"));
        assert_eq!(role_for(&none, "build").as_deref(), Some("coordinator"));
    }

    #[test]
    fn other_types_are_roles_themselves_or_nothing() {
        let none = BTreeMap::new();
        assert_eq!(role_for(&none, "reviewer").as_deref(), Some("reviewer"));
        assert_eq!(
            role_for(&none, "Test-Engineer").as_deref(),
            Some("test_engineer")
        );
        assert_eq!(
            role_for(&none, "my-plugin:reviewer").as_deref(),
            Some("reviewer")
        );
        assert_eq!(role_for(&none, "9lives"), None);
        assert_eq!(role_for(&none, ""), None);
    }

    #[test]
    fn the_config_overrides_and_extends() {
        let mut config = BTreeMap::new();
        config.insert("general-purpose".to_owned(), "generalist".to_owned());
        config.insert("db-expert".to_owned(), "sme".to_owned());
        config.insert("broken".to_owned(), "Not A Role".to_owned());
        assert_eq!(
            resolve(&config, "general-purpose"),
            Some(("generalist".to_owned(), Source::Config))
        );
        assert_eq!(role_for(&config, "DB-Expert").as_deref(), Some("sme"));
        assert_eq!(role_for(&config, "broken").as_deref(), Some("broken"));
        assert_eq!(
            harness_type(&BTreeMap::new(), "general-purpose"),
            Some(("coder".to_owned(), "Claude Code".to_owned()))
        );
        assert_eq!(harness_type(&BTreeMap::new(), "coder"), None);
    }
}
