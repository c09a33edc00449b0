//! The directives a tool call can match (DESIGN §7e), read from the
//! corpus in place: those scoped to one of the call's tools, through the
//! tool postings, then the few with no tool scope that match by `paths` or
//! a tool-call predicate. Nothing else of the corpus is touched, so a
//! hook's work grows with the directives that can match the tool, not
//! with the store.

use super::{Corpus, csr, priority_of};
use crate::directive::{Enforcement, Priority};

/// A directive a tool call may match, as the corpus holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallDoc<'a> {
    pub doc: usize,
    pub id: &'a str,
    pub lesson: &'a str,
    pub priority: Priority,
    pub enforcement: Enforcement,
    /// It names tools, one of which the call is.
    pub by_tool: bool,
    pub paths: Vec<&'a str>,
    /// Its tool-call predicates, as written, each with what a match must
    /// contain ([`crate::predicate::required_literals`]).
    pub predicates: Vec<(&'a str, &'a str)>,
}

impl Corpus {
    /// The documents in scope for `role` that a call of one of `tools`
    /// (lowercase names) can match, by document number: scoped to one of
    /// the tools, or with no tool scope and `paths` or a tool-call
    /// predicate. The caller decides on paths and predicates.
    pub fn call_docs(&self, tools: &[String], role: &str) -> Vec<CallDoc<'_>> {
        self.call_docs_for(tools, role, true, true)
    }

    /// [`Corpus::call_docs`] for a call that touches files (`paths`) or
    /// runs a command (`command`): a directive with no tool scope that
    /// needs what the call lacks is left out before it is read.
    pub fn call_docs_for(
        &self,
        tools: &[String],
        role: &str,
        paths: bool,
        command: bool,
    ) -> Vec<CallDoc<'_>> {
        let v = self.view();
        let mut by_tool: Vec<u32> = Vec::new();
        for t in tools {
            if let Some(s) = v.scopes.find(t) {
                by_tool.extend_from_slice(csr(v.tool_start, v.tool_doc, s));
            }
        }
        by_tool.sort_unstable();
        by_tool.dedup();
        let role_scope = v.scopes.find(role).map(|s| s as u32);
        let for_role = |doc: usize| {
            let agents = csr(v.doc_agent_start, v.doc_agents, doc);
            agents.is_empty() || role_scope.is_some_and(|r| agents.binary_search(&r).is_ok())
        };
        let has = |start: &[u32], doc: usize| start[doc] != start[doc + 1];
        // Paths match only a call with files; a command predicate only one with a command.
        let untooled = (v.untooled_call.iter()).filter(|&&d| {
            let doc = d as usize;
            (paths || !has(v.path_start, doc)) && (command || !has(v.call_start, doc))
        });
        // A directive with a command predicate is about any command line
        // that breaks it, whatever program runs first (`timeout 60 git
        // push`, `cd x && git push`): its regex, not its tool scope, decides.
        let by_command: Vec<u32> = if command {
            (0..v.ids.len() as u32)
                .filter(|&d| has(v.call_start, d as usize) && by_tool.binary_search(&d).is_err())
                .filter(|d| !v.untooled_call.contains(d))
                .collect()
        } else {
            Vec::new()
        };
        let docs = (by_tool.iter().map(|&d| (d, true)))
            .chain(untooled.map(|&d| (d, false)))
            .chain(by_command.into_iter().map(|d| (d, true)));
        docs.filter(|&(d, _)| for_role(d as usize))
            .map(|(d, by_tool)| {
                let doc = d as usize;
                let path_range = v.path_start[doc] as usize..v.path_start[doc + 1] as usize;
                let call_range = v.call_start[doc] as usize..v.call_start[doc + 1] as usize;
                CallDoc {
                    doc,
                    id: v.ids.get(doc),
                    lesson: v.lessons.get(doc),
                    priority: priority_of(v.priority, doc),
                    enforcement: (v.enforcement.get(doc))
                        .and_then(|&e| Enforcement::ALL.get(e as usize))
                        .copied()
                        .unwrap_or_default(),
                    by_tool,
                    paths: path_range.map(|i| v.paths.get(i)).collect(),
                    predicates: call_range
                        .map(|i| (v.call_preds.get(i), v.call_lits.get(i)))
                        .collect(),
                }
            })
            .collect()
    }

    /// Whether any document can match a tool call at all: a hook for a
    /// store without any answers before it reads more.
    pub fn has_call_docs(&self) -> bool {
        let v = self.view();
        !v.untooled_call.is_empty() || !v.tool_doc.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directive::Directive;

    fn directive(id: &str, f: impl FnOnce(&mut Directive)) -> Directive {
        let mut d = Directive::new(id, format!("the lesson of {id}, long enough"));
        f(&mut d);
        d
    }

    #[test]
    fn a_call_matches_by_tool_or_by_paths_and_predicates_in_the_roles_scope() {
        let docs = [
            directive("bash-any", |d| d.applies_to_tools = vec!["bash".into()]),
            directive("git-coder", |d| {
                d.applies_to_tools = vec!["git".into()];
                d.applies_to_agents = vec!["coder".into()];
            }),
            directive("lockfile", |d| {
                d.paths = vec!["Cargo.lock".into()];
                d.enforcement = Enforcement::Enforce;
            }),
            directive("force-push", |d| {
                d.verify = vec!["command:git\\s+push.*--force".into()];
                d.priority = Priority::Critical;
            }),
            directive("general", |d| d.applies_to_agents = vec!["coder".into()]),
        ];
        let refs: Vec<&Directive> = docs.iter().collect();
        let corpus = Corpus::build(&refs);
        assert!(corpus.has_call_docs());
        let ids = |tools: &[&str], role: &str| -> Vec<(String, bool)> {
            let tools: Vec<String> = tools.iter().map(|t| t.to_string()).collect();
            (corpus.call_docs(&tools, role).into_iter())
                .map(|c| (c.id.to_owned(), c.by_tool))
                .collect()
        };
        let untooled = [
            ("lockfile".to_owned(), false),
            ("force-push".to_owned(), false),
        ];
        let mut want = vec![
            ("bash-any".to_owned(), true),
            ("git-coder".to_owned(), true),
        ];
        want.extend(untooled.clone());
        assert_eq!(ids(&["bash", "git"], "coder"), want);
        let mut want = vec![("bash-any".to_owned(), true)];
        want.extend(untooled.clone());
        assert_eq!(ids(&["bash", "git"], "reviewer"), want);
        assert_eq!(ids(&["edit"], "coder"), untooled.to_vec());
        let c = corpus.call_docs(&["edit".into()], "coder");
        assert_eq!(c[0].paths, ["Cargo.lock"]);
        assert_eq!(c[0].enforcement, Enforcement::Enforce);
        assert_eq!(
            c[1].predicates,
            [("command:git\\s+push.*--force", "git\x01--force")]
        );
        assert_eq!(c[1].priority, Priority::Critical);
        assert!(c[1].lesson.starts_with("the lesson of force-push"));
        // Read back from its bytes, the same answers.
        let bytes: super::super::block::Shared = std::sync::Arc::new(corpus.encoded().into_owned());
        let len = corpus.encoded().len();
        let loaded = Corpus::load(bytes, 0..len).expect("loads");
        assert_eq!(loaded.call_docs(&["edit".into()], "coder"), c);
    }
}
