//! Directives: one reviewed lesson per TOML file under `.swarm/directives/`.
//!
//! The TOML stays what a human wrote and reviewed: what changes over time
//! (shown, violated, escalated) is derived from the event log by the fold,
//! never written back here. [`lifecycle`] changes a file through commands
//! (`retire`, `edit`), keeping the rest of it as written.

/// An enumeration written as its names (`snake_case`) in files and events.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? } $(default $default:ident)?) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            pub const NAMES: &'static [&'static str] = &[$($text),+];
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        $(impl Default for $name {
            fn default() -> Self { $name::$default }
        })?

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::directive::UnknownName;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err($crate::directive::UnknownName { value: s.to_owned(), names: $name::NAMES }),
                }
            }
        }
    };
}
pub(crate) use string_enum;

mod gate;
pub mod lifecycle;
mod load;
mod slug;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use gate::{
    GateFailure, LineFault, ONE_LINE_HINT, QuarantineReason, ShapeIssue, check_gate, check_lines,
    check_one_line, limits,
};
pub use load::{
    LoadedDirective, key_offset, parse_directive_toml, parse_directive_toml_without_id,
    parse_quarantined_toml,
};
pub use slug::slug_from_lesson;

/// One knowledge entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "git-swarm directive")]
pub struct Directive {
    /// Unique id; equals the file stem.
    #[schemars(pattern(r"^[a-z0-9][a-z0-9._-]{1,79}$"))]
    pub id: String,
    /// What to do or not do: one line, 15–280 characters.
    #[schemars(length(min = 15, max = 280), pattern(r"^[^\r\n]*$"))]
    pub lesson: String,
    /// Why, in free text.
    #[serde(default)]
    #[schemars(length(max = 4000))]
    pub rationale: Option<String>,
    #[serde(default)]
    pub category: Category,
    #[serde(default)]
    pub priority: Priority,
    #[serde(default)]
    pub enforcement: Enforcement,
    #[serde(default)]
    pub status: Status,
    /// How sure the author is, 0..1.
    #[serde(default = "default_confidence")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    /// Agent roles this applies to; empty means no agent scope.
    #[serde(default)]
    #[schemars(length(max = 20), inner(pattern(r"^[a-z][a-z0-9_]{0,63}$")))]
    pub applies_to_agents: Vec<String>,
    /// Tool names this applies to; empty means no tool scope.
    #[serde(default)]
    #[schemars(length(max = 20), inner(pattern(r"^[a-z][a-z0-9_]{0,63}$")))]
    pub applies_to_tools: Vec<String>,
    /// Path globs: the directive applies to changes touching these; empty means all.
    #[serde(default)]
    #[schemars(length(max = 20), inner(length(min = 1, max = 200)))]
    pub paths: Vec<String>,
    /// Phrases that surface the directive in retrieval.
    #[serde(default)]
    #[schemars(length(max = 20), inner(length(min = 1, max = 200)))]
    pub triggers: Vec<String>,
    #[serde(default)]
    #[schemars(length(max = 20), inner(length(min = 1, max = 200)))]
    pub forbidden_actions: Vec<String>,
    #[serde(default)]
    #[schemars(length(max = 20), inner(length(min = 1, max = 200)))]
    pub required_actions: Vec<String>,
    #[serde(default)]
    #[schemars(length(max = 20), inner(length(min = 1, max = 200)))]
    pub verification_checks: Vec<String>,
    /// Machine checks (`kind:argument`); all must hold.
    #[serde(default)]
    #[schemars(
        length(max = 20),
        inner(
            pattern(
                r"^(file_modified|file_not_modified|grep|grep_tree|tool|command|command_raw):"
            ),
            length(max = 1024)
        )
    )]
    pub verify: Vec<String>,
    #[serde(default)]
    #[schemars(length(max = 20), inner(length(min = 1, max = 64)))]
    pub tags: Vec<String>,
    /// When the lesson was minted (a TOML datetime; RFC 3339 in JSON).
    #[serde(default)]
    #[schemars(with = "Option<String>", extend("format" = "date-time"))]
    pub created_at: Option<String>,
    /// Where the lesson came from (a PR, a run, a review).
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub source: Option<String>,
}

/// A directive that failed the actionability gate, kept with the reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "git-swarm quarantined entry", extend("additionalProperties" = false))]
pub struct Quarantined {
    #[serde(flatten)]
    pub directive: Directive,
    pub quarantine_reason: QuarantineReason,
    /// What exactly is missing or wrong, and what to add.
    #[serde(default)]
    pub quarantine_detail: Option<String>,
    /// Why `git swarm harden`'s last attempt with the curator failed.
    #[serde(default)]
    pub harden_reason: Option<String>,
    /// Curator calls made for this entry, over every run of `harden`.
    #[serde(default)]
    pub harden_attempts: u32,
    /// The curator could not make the entry actionable: a person should fix
    /// it by hand or delete it; `harden` no longer sends it to the curator.
    #[serde(default)]
    pub retire_candidate: bool,
}

pub fn default_confidence() -> f64 {
    0.5
}

/// A word that is none of the names of an enumeration ([`Priority`]…).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not one of {}", names.join(", "))]
pub struct UnknownName {
    pub value: String,
    pub names: &'static [&'static str],
}

string_enum!(
    /// What area the lesson is about.
    Category {
        Process => "process",
        Architecture => "architecture",
        Tooling => "tooling",
        Security => "security",
        Testing => "testing",
        Debugging => "debugging",
        Performance => "performance",
        Integration => "integration",
        Other => "other",
    } default Other
);

string_enum!(
    /// How much the lesson matters; ordered low to critical.
    Priority {
        Low => "low",
        Medium => "medium",
        High => "high",
        Critical => "critical",
    } default Medium
);

string_enum!(
    /// What a failed check does: `enforce` blocks in hooks and gates, `warn` prints.
    Enforcement {
        Advisory => "advisory",
        Warn => "warn",
        Enforce => "enforce",
    } default Warn
);

string_enum!(
    /// Whether the directive is in use.
    Status {
        Active => "active",
        Retired => "retired",
    } default Active
);

impl Directive {
    /// A directive with the given id and lesson and every other field at its default.
    pub fn new(id: impl Into<String>, lesson: impl Into<String>) -> Directive {
        Directive {
            id: id.into(),
            lesson: lesson.into(),
            rationale: None,
            category: Category::default(),
            priority: Priority::default(),
            enforcement: Enforcement::default(),
            status: Status::default(),
            confidence: default_confidence(),
            applies_to_agents: Vec::new(),
            applies_to_tools: Vec::new(),
            paths: Vec::new(),
            triggers: Vec::new(),
            forbidden_actions: Vec::new(),
            required_actions: Vec::new(),
            verification_checks: Vec::new(),
            verify: Vec::new(),
            tags: Vec::new(),
            created_at: None,
            source: None,
        }
    }

    /// Renders the directive as the TOML file `git swarm add` writes: fields
    /// in a fixed, reading order, defaults included so a reviewer sees them.
    pub fn to_toml(&self) -> String {
        let mut t = toml::Table::new();
        self.fill_table(&mut t);
        toml::to_string(&t).unwrap_or_default()
    }

    fn fill_table(&self, t: &mut toml::Table) {
        use toml::Value;
        // Serialised in field order; `None` fields are left out.
        let Ok(Value::Table(fields)) = Value::try_from(self) else {
            return;
        };
        for (key, value) in fields {
            match value {
                Value::Array(items) if items.is_empty() => {}
                Value::String(c) if key == "created_at" => {
                    let value = c.parse().map(Value::Datetime);
                    t.insert(key, value.unwrap_or(Value::String(c)));
                }
                value => {
                    t.insert(key, value);
                }
            }
        }
    }

    /// The list fields by their TOML keys, in file order.
    pub(crate) fn lists(&self) -> [(&'static str, &Vec<String>); 9] {
        [
            ("applies_to_agents", &self.applies_to_agents),
            ("applies_to_tools", &self.applies_to_tools),
            ("paths", &self.paths),
            ("triggers", &self.triggers),
            ("forbidden_actions", &self.forbidden_actions),
            ("required_actions", &self.required_actions),
            ("verification_checks", &self.verification_checks),
            ("verify", &self.verify),
            ("tags", &self.tags),
        ]
    }

    /// The list field with TOML key `key`.
    fn list_mut(&mut self, key: &str) -> Option<&mut Vec<String>> {
        Some(match key {
            "applies_to_agents" => &mut self.applies_to_agents,
            "applies_to_tools" => &mut self.applies_to_tools,
            "paths" => &mut self.paths,
            "triggers" => &mut self.triggers,
            "forbidden_actions" => &mut self.forbidden_actions,
            "required_actions" => &mut self.required_actions,
            "verification_checks" => &mut self.verification_checks,
            "verify" => &mut self.verify,
            "tags" => &mut self.tags,
            _ => return None,
        })
    }

    /// Is this directive targeted at an agent role or a tool?
    pub fn has_scope(&self) -> bool {
        !self.applies_to_agents.is_empty() || !self.applies_to_tools.is_empty()
    }
}

impl Quarantined {
    /// The quarantined entry `directive`, failing the gate for `reason`,
    /// not yet worked by `harden`.
    pub fn new(
        directive: Directive,
        reason: QuarantineReason,
        detail: Option<String>,
    ) -> Quarantined {
        Quarantined {
            directive,
            quarantine_reason: reason,
            quarantine_detail: detail,
            harden_reason: None,
            harden_attempts: 0,
            retire_candidate: false,
        }
    }

    /// The keys a quarantine file has beyond a directive's, in file order.
    pub const KEYS: &'static [&'static str] = &[
        "quarantine_reason",
        "quarantine_detail",
        "harden_reason",
        "harden_attempts",
        "retire_candidate",
    ];

    pub fn to_toml(&self) -> String {
        let mut t = toml::Table::new();
        t.insert(
            "quarantine_reason".into(),
            toml::Value::String(self.quarantine_reason.as_str().to_owned()),
        );
        if let Some(d) = &self.quarantine_detail {
            t.insert("quarantine_detail".into(), toml::Value::String(d.clone()));
        }
        if let Some(r) = &self.harden_reason {
            t.insert("harden_reason".into(), toml::Value::String(r.clone()));
        }
        if self.harden_attempts > 0 {
            t.insert(
                "harden_attempts".into(),
                toml::Value::Integer(self.harden_attempts.into()),
            );
        }
        if self.retire_candidate {
            t.insert("retire_candidate".into(), toml::Value::Boolean(true));
        }
        self.directive.fill_table(&mut t);
        toml::to_string(&t).unwrap_or_default()
    }
}

/// Is `id` a valid directive id (and so a safe file stem)?
pub fn is_valid_id(id: &str) -> bool {
    let b = id.as_bytes();
    (2..=80).contains(&b.len())
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b[1..].iter().all(|&c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'.' | b'_' | b'-')
        })
}

/// Is `name` a valid agent role or tool name?
pub fn is_valid_scope_name(name: &str) -> bool {
    let b = name.as_bytes();
    (1..=64).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b[1..]
            .iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        for ok in [
            "ab",
            "no-unwrap",
            "0b4c2a1e-9f7d-4e5b-8a3c-2d1e0f9a8b7c",
            "550e8400-e29b-41d4-a716-446655440000",
            "a.b_c-d",
            "no-console.log_v2",
            &"a".repeat(80),
        ] {
            assert!(is_valid_id(ok), "{ok}");
        }
        for bad in [
            "a",
            "-ab",
            ".ab",
            "Ab",
            "../etc",
            "a/b",
            "a b",
            "",
            "<id>",
            &"a".repeat(81),
        ] {
            assert!(!is_valid_id(bad), "{bad}");
        }
    }

    #[test]
    fn toml_round_trips() {
        let mut d = Directive::new("no-unwrap", "Never call unwrap() in library code");
        d.applies_to_agents = vec!["coder".into()];
        d.verify = vec!["grep:\\.unwrap\\(\\):src/**/*.rs".into()];
        d.created_at = Some("2026-11-22T10:00:00Z".into());
        let text = d.to_toml();
        assert!(text.contains("created_at = 2026-11-22T10:00:00Z"), "{text}");
        let loaded = parse_directive_toml(&text, "x.toml");
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        assert_eq!(loaded.directive.expect("loads"), d);
    }
}
