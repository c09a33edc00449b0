//! Lessons at the moment of action (DESIGN §7e): what a hook before (or,
//! where the harness takes context only there, after) an agent's tool call
//! decides. The call is read from the harness's payload into one shape;
//! the directives that can match it come from the index's corpus; a guard
//! (an `enforce` directive whose tool-call predicate fails, and reviewed)
//! refuses the call, every time; the other matching lessons the agent has
//! not yet seen are added as context, highest priority first, bounded.

use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};

use super::Harness;
use crate::directive::{Enforcement, Priority};
use crate::directive_loop::inject::sanitise;
use crate::pathglob::PathGlob;
use crate::predicate::Predicate;
use crate::reflect::payload::ToolKind;
use crate::retrieve::CallDoc;

/// One tool call, whatever harness makes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Call {
    /// The tool, as the harness names it.
    pub tool: String,
    /// The names `applies_to_tools` is matched against: the harness's name
    /// lowercased, git-swarm's name for what the tool does (`bash`, `edit`,
    /// `write`, `read`, `grep`), and for a shell call the programs its
    /// command line runs (`git`, `cargo`).
    pub names: Vec<String>,
    /// A shell call's command line.
    pub command: Option<String>,
    /// The files the call reads or writes, relative to the repository, `/`
    /// between parts; files outside it are left out.
    pub paths: Vec<String>,
}

/// Most bytes of a command line looked at: a longer one is cut (a guard
/// sees its start, where the program and its options are).
const COMMAND_MAX: usize = 64 * 1024;
/// Most paths of one call looked at.
const PATHS_MAX: usize = 64;

/// Reads the call in `payload` (`harness`'s pre- or post-tool payload, or
/// the opencode plugin's `{tool, args}`). `root`: the work tree, which
/// relative paths are resolved against when the payload names no `cwd`.
pub fn call_of(harness: Harness, payload: &Value, root: &Path) -> Option<Call> {
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let (tool, input) = match harness {
        Harness::Opencode => (s(payload, "tool")?, payload.get("args")),
        // Cursor's beforeShellExecution names no tool: its `command` is the call.
        Harness::Cursor if payload.get("tool_name").is_none() => {
            ("Shell".to_owned(), Some(payload))
        }
        _ => (s(payload, "tool_name")?, payload.get("tool_input")),
    };
    let input = input.unwrap_or(&Value::Null);
    let cwd = s(payload, "cwd").map(PathBuf::from);
    let base = cwd.as_deref().unwrap_or(root);
    let kind = ToolKind::of(&tool);
    let mut call = Call {
        tool: tool.clone(),
        ..Call::default()
    };
    let lower = tool.to_ascii_lowercase();
    push_name(&mut call.names, &lower);
    if let Some(common) = crate::reflect::payload::common_tool_name(&tool) {
        push_name(&mut call.names, common);
    }
    if kind == ToolKind::Shell {
        call.command = command_of(input);
        if let Some(c) = &call.command {
            for p in programs(c) {
                push_name(&mut call.names, &p);
            }
        }
    }
    if matches!(kind, ToolKind::Write | ToolKind::Read) {
        for p in paths_of(input) {
            if call.paths.len() >= PATHS_MAX {
                break;
            }
            if let Some(rel) = relative(root, base, &p)
                && !call.paths.contains(&rel)
            {
                call.paths.push(rel);
            }
        }
    }
    Some(call)
}

/// Adds `name` to `names` when it can be an `applies_to_tools` entry
/// (`-` and `.` read as `_`: `git-lfs` is `git_lfs`).
fn push_name(names: &mut Vec<String>, name: &str) {
    let name: String = (name.chars())
        .map(|c| match c {
            '-' | '.' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    if crate::directive::is_valid_scope_name(&name) && !names.contains(&name) {
        names.push(name);
    }
}

/// A shell tool's command line: a string, or an argument list (a shell's
/// `-c` script when it is one).
fn command_of(input: &Value) -> Option<String> {
    let cut = |s: &str| {
        let mut end = s.len().min(COMMAND_MAX);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s[..end].to_owned()
    };
    match input.get("command").or_else(|| input.get("cmd"))? {
        Value::String(s) => Some(cut(s)),
        Value::Array(words) => {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [shell, flag, script, ..]
                    if matches!(*flag, "-c" | "-lc" | "-ic")
                        && shell.rsplit('/').next().is_some_and(|s| s.ends_with("sh")) =>
                {
                    Some(cut(script))
                }
                _ => Some(cut(
                    &shlex::try_join(words.iter().copied()).unwrap_or_default()
                )),
            }
        }
        _ => None,
    }
}

/// The programs a command line runs: the first word of each simple
/// command, past variable assignments and wrappers (`sudo`, `env`,
/// `time`…), by their file name. Quoted words are no program.
pub fn programs(command: &str) -> Vec<String> {
    let text = crate::predicate::without_quoted(command);
    let mut out: Vec<String> = Vec::new();
    for part in text.split(['&', '|', ';', '\n', '(', ')', '`', '{', '}']) {
        let mut words = part.split_whitespace().peekable();
        let mut program = None;
        while let Some(w) = words.next() {
            match w {
                // Shell keywords: the command follows them.
                "if" | "then" | "elif" | "else" | "do" | "while" | "until" | "!" | "time"
                | "exec" | "command" | "nohup" | "builtin" => {}
                // Wrappers, with the options (and their values) they take.
                "sudo" | "env" | "nice" | "timeout" | "xargs" | "stdbuf" | "ionice" => {
                    while let Some(next) = words.peek() {
                        let takes_value = matches!(*next, "-u" | "-g" | "-n" | "-s" | "-k" | "-c");
                        let is_option = next.starts_with('-')
                            || next.contains('=')
                            || (w == "timeout" && next.starts_with(|c: char| c.is_ascii_digit()));
                        if !is_option {
                            break;
                        }
                        words.next();
                        if takes_value {
                            words.next();
                        }
                    }
                }
                // Assignments before the command.
                w if w.contains('=') && !w.starts_with('=') => {}
                w => {
                    program = Some(w);
                    break;
                }
            }
        }
        let Some(w) = program else { continue };
        if w.contains(['"', '\'']) {
            continue;
        }
        let name = w.rsplit('/').next().unwrap_or(w);
        if !name.is_empty() && !out.iter().any(|o| o == name) {
            out.push(name.to_owned());
        }
        if out.len() >= 64 {
            break;
        }
    }
    out
}

/// The files a call's input names: the harnesses' path fields, and the
/// files of a patch (`*** Update File: …`, as Codex's `apply_patch` writes).
fn paths_of(input: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for key in ["file_path", "filePath", "notebook_path", "absolute_path"] {
        if let Some(p) = input.get(key).and_then(Value::as_str) {
            out.push(p.to_owned());
        }
    }
    if let Some(list) = input.get("paths").and_then(Value::as_array) {
        out.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
    }
    // Codex's `apply_patch` (`input`, `command`), opencode's (`patchText`).
    for key in ["input", "patch", "patchText", "command"] {
        let text = match input.get(key) {
            Some(Value::String(s)) => s.as_str(),
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).next_back().unwrap_or(""),
            _ => continue,
        };
        if !text.contains("*** Begin Patch") {
            continue;
        }
        for line in text.lines().take(10_000) {
            for head in [
                "*** Update File: ",
                "*** Add File: ",
                "*** Delete File: ",
                "*** Move to: ",
            ] {
                if let Some(p) = line.strip_prefix(head) {
                    out.push(p.trim().to_owned());
                }
            }
        }
    }
    out
}

/// `path` (absolute, or relative to `base`) relative to the work tree
/// `root`, `/` between parts; `None` outside it. Lexical, then through the
/// real paths of `root` and of the file's folder (a harness may name
/// `/tmp` where git names `/private/tmp`).
fn relative(root: &Path, base: &Path, path: &str) -> Option<String> {
    let joined = base.join(path);
    let lexical = normalise(&joined)?;
    let rel = lexical
        .strip_prefix(root)
        .ok()
        .map(Path::to_path_buf)
        .or_else(|| {
            let real_root = root.canonicalize().ok()?;
            let parent = lexical.parent()?.canonicalize().ok()?;
            let real = parent.join(lexical.file_name()?);
            real.strip_prefix(&real_root).ok().map(Path::to_path_buf)
        })?;
    let parts: Vec<&str> = rel
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect::<Option<_>>()?;
    (!parts.is_empty() && parts[0] != ".git").then(|| parts.join("/"))
}

/// `path` with `.` and `..` taken out; `None` if it climbs above its root.
fn normalise(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            c => out.push(c),
        }
    }
    Some(out)
}

/// How many lessons, and how many bytes of them, one call may add.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub count: usize,
    pub bytes: usize,
}

/// A directive as a call met it.
#[derive(Debug, Clone, PartialEq)]
pub struct Lesson {
    pub id: String,
    pub lesson: String,
    pub priority: Priority,
    pub enforcement: Enforcement,
    /// Not on the trusted revision (shown only by the user's choice, marked).
    pub unreviewed: bool,
    /// The tool-call predicates that failed (a guard's, or a warning's).
    pub failed: Vec<String>,
}

/// What the hook does with a call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decision {
    /// Guards that refuse the call: all of them, every time.
    pub refuse: Vec<Lesson>,
    /// Lessons that match, for the agent to see if it has not yet: best
    /// first, not yet bounded.
    pub context: Vec<Lesson>,
    /// Matching directives withheld because they are not reviewed.
    pub withheld: Vec<String>,
}

/// How a candidate stands: its effective priority and enforcement (an
/// escalation raises them), and whether it is reviewed.
pub struct Standing {
    pub priority: Priority,
    pub enforcement: Enforcement,
    pub reviewed: bool,
    /// Shown framed as not yet reviewed (`swarm.injectUnreviewed = mark`).
    pub marked: bool,
}

/// A directive a call matched, and the tool-call predicates it broke.
pub struct Matched<'a> {
    pub doc: CallDoc<'a>,
    pub failed: Vec<String>,
}

/// Of `docs` (from [`crate::retrieve::Corpus::call_docs`]), those that
/// match `call`: its paths touch theirs, and a directive about a command
/// only when the call's command breaks it. Nothing here needs the review
/// or the fold, which a call matching nothing never reads.
/// `admit(doc)`: whether a directive whose command regex the command may
/// match is to be evaluated at all, asked before its regex is compiled (an
/// unreviewed directive under the default policy is not: a pull request's
/// regexes cost a hook nothing).
pub fn matching<'a>(
    call: &Call,
    docs: Vec<CallDoc<'a>>,
    admit: &dyn Fn(&CallDoc<'a>) -> bool,
) -> Vec<Matched<'a>> {
    let mut out = Vec::new();
    let line = call
        .command
        .as_deref()
        .map(crate::predicate::CommandLine::new);
    for doc in docs {
        if !doc.paths.is_empty() && !touches(&call.paths, &doc.paths) {
            continue;
        }
        let mut failed = Vec::new();
        if !doc.predicates.is_empty() {
            // A lesson about a command is for a call whose command breaks it.
            let Some(line) = &line else {
                continue;
            };
            let mut admitted = None;
            for &(p, literals) in &doc.predicates {
                // Most regexes are ruled out by what they must contain,
                // without compiling them.
                if !crate::predicate::literals_allow(literals, line.text_for(p).as_bytes()) {
                    continue;
                }
                if !*admitted.get_or_insert_with(|| admit(&doc)) {
                    break;
                }
                // Checked as `validate` checks it: a regex too large is
                // refused by its shape, not compiled up to the engine's limit.
                let holds = Predicate::parse(p).ok().and_then(|pr| pr.holds_for(line));
                if holds == Some(false) {
                    failed.push(p.to_owned());
                }
            }
            if failed.is_empty() {
                continue;
            }
        }
        out.push(Matched { doc, failed });
    }
    out
}

/// Decides on the directives `matched`. `shows(reviewed)`: whether the
/// user's policy lets an unreviewed lesson reach an agent. Only a reviewed
/// directive refuses anything.
pub fn decide(
    matched: Vec<Matched<'_>>,
    standing: &dyn Fn(&CallDoc<'_>) -> Standing,
    shows: &dyn Fn(bool) -> bool,
) -> Decision {
    let mut d = Decision::default();
    for Matched { doc, failed } in matched {
        let s = standing(&doc);
        let lesson = Lesson {
            id: doc.id.to_owned(),
            lesson: sanitise(doc.lesson),
            priority: s.priority,
            enforcement: s.enforcement,
            unreviewed: s.marked,
            failed,
        };
        if !lesson.failed.is_empty() && s.enforcement == Enforcement::Enforce && s.reviewed {
            d.refuse.push(lesson);
        } else if shows(s.reviewed) {
            d.context.push(lesson);
        } else {
            d.withheld.push(lesson.id);
        }
    }
    let order = |a: &Lesson, b: &Lesson| b.priority.cmp(&a.priority).then_with(|| a.id.cmp(&b.id));
    d.refuse.sort_by(order);
    d.context.sort_by(order);
    d.withheld.sort();
    d
}

/// Whether one of `paths` matches one of `globs`. A glob's longest
/// literal run must be in the path before the glob is parsed: most globs
/// of a large store are ruled out by a substring search.
fn touches(paths: &[String], globs: &[&str]) -> bool {
    globs.iter().any(|g| {
        let literal = longest_literal(g);
        let maybe: Vec<&String> = paths.iter().filter(|p| p.contains(literal)).collect();
        !maybe.is_empty()
            && PathGlob::parse(g).is_ok_and(|glob| maybe.iter().any(|p| glob.is_match(p)))
    })
}

/// The longest run of `glob` that a matching path must contain as it is:
/// outside wildcards, classes, alternatives and escapes, and without a
/// leading `./` or `/` (which anchor, and are not in a relative path).
fn longest_literal(glob: &str) -> &str {
    let g = glob.strip_prefix("./").unwrap_or(glob);
    let mut best = "";
    let mut depth = 0usize;
    let mut start = 0;
    let mut in_class = false;
    for (i, c) in g.char_indices() {
        let special = match c {
            '[' if depth == 0 => {
                in_class = true;
                true
            }
            ']' if in_class => {
                in_class = false;
                true
            }
            '{' => {
                depth += 1;
                true
            }
            '}' => {
                depth = depth.saturating_sub(1);
                true
            }
            '*' | '?' | '\\' => true,
            _ => in_class || depth > 0,
        };
        if special {
            if i - start > best.len() {
                best = &g[start..i];
            }
            start = i + c.len_utf8();
        }
    }
    if g.len() - start > best.len() && !in_class && depth == 0 {
        best = &g[start..];
    }
    best.trim_start_matches('/')
}

/// The lessons to add, within `limits`, in order; a critical one is kept
/// whatever its length (cut to the room left).
pub fn bounded(lessons: Vec<Lesson>, limits: Limits) -> Vec<Lesson> {
    let mut used = 0;
    let mut out = Vec::new();
    for mut l in lessons {
        if out.len() >= limits.count {
            break;
        }
        let size = entry(&l).len();
        if used + size > limits.bytes {
            if l.priority != Priority::Critical {
                continue;
            }
            let room = limits.bytes.saturating_sub(used + 64).max(80);
            let mut end = room.min(l.lesson.len());
            while !l.lesson.is_char_boundary(end) {
                end -= 1;
            }
            l.lesson.truncate(end);
        }
        used += entry(&l).len();
        out.push(l);
    }
    out
}

/// One lesson as the agent reads it.
fn entry(l: &Lesson) -> String {
    let mark = if l.unreviewed {
        " (not yet reviewed)"
    } else {
        ""
    };
    format!("- [{}{mark}] {} ({})", l.priority.as_str(), l.lesson, l.id)
}

/// The context text for lessons the agent has not seen, before the call
/// of `tool`.
pub fn context_text(tool: &str, lessons: &[Lesson]) -> String {
    let mut out = format!(
        "git-swarm: lessons this team recorded for this {} call:",
        sanitise(tool)
    );
    for l in lessons {
        out.push('\n');
        out.push_str(&entry(l));
    }
    out
}

/// Why the call was refused: the guards' lessons, and what to do.
pub fn refusal_text(guards: &[Lesson]) -> String {
    let mut out =
        String::from("git-swarm refused this tool call: it breaks a lesson this team enforces.");
    for l in guards.iter().take(5) {
        out.push('\n');
        out.push_str(&entry(l));
    }
    out.push_str("\nDo it another way. If the call is right, say so to the user: a person can change or retire the directive.");
    out
}

/// The harness's answer refusing the call with `reason`; `None` where no
/// hook of git-swarm's runs before a call (Cursor).
pub fn refusal_answer(harness: Harness, reason: &str) -> Option<Value> {
    match harness {
        Harness::ClaudeCode | Harness::Codex => Some(json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        })),
        Harness::Gemini => Some(json!({ "decision": "deny", "reason": reason })),
        // The plugin throws an error of the reason.
        Harness::Opencode => Some(json!({ "deny": reason })),
        Harness::Cursor => None,
    }
}

/// Whether `harness` takes a tool call's context before the call (else
/// after it, with the call's result: Gemini CLI's BeforeTool and
/// opencode's `tool.execute.before` have no context to give).
pub fn context_before(harness: Harness) -> bool {
    matches!(harness, Harness::ClaudeCode | Harness::Codex)
}

/// The harness's answer adding `text` as context at a tool call, before it
/// (`before`) or after it; `None` where the harness has no such field.
pub fn call_context_answer(harness: Harness, before: bool, text: &str) -> Option<Value> {
    match (harness, before) {
        (Harness::ClaudeCode | Harness::Codex, true) => Some(json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "additionalContext": text,
            }
        })),
        (Harness::Gemini, false) => Some(json!({
            "hookSpecificOutput": {
                "hookEventName": "AfterTool",
                "additionalContext": text,
            }
        })),
        (Harness::Opencode, false) => Some(json!({ "append": text })),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_the_first_words_of_simple_commands() {
        assert_eq!(programs("git push --force origin main"), ["git"]);
        assert_eq!(
            programs("cd src && FOO=1 sudo -E ./gradlew build | tee log; cargo test"),
            ["cd", "gradlew", "tee", "cargo"]
        );
        assert_eq!(programs("echo \"git push --force\""), ["echo"]);
        assert_eq!(
            programs("env RUST_LOG=x /usr/bin/python3 -m pytest"),
            ["python3"]
        );
        assert!(programs("\"quoted\" arg").is_empty());
        assert_eq!(
            programs("if git diff --quiet; then git push --force origin main; fi"),
            ["git", "fi"]
        );
        assert_eq!(programs("timeout 60 git push"), ["git"]);
        assert_eq!(programs("sudo -u bob nice -n 5 git push"), ["git"]);
        assert_eq!(
            programs("for r in a; do make -j2; done"),
            ["for", "make", "done"]
        );
        assert_eq!(programs("# don't forget\ngit push -f origin main"), ["git"]);
    }

    #[test]
    fn paths_are_made_relative_to_the_work_tree() {
        let root = Path::new("/w/repo");
        let rel = |p: &str| relative(root, Path::new("/w/repo/src"), p);
        assert_eq!(rel("/w/repo/Cargo.lock").as_deref(), Some("Cargo.lock"));
        assert_eq!(rel("lib.rs").as_deref(), Some("src/lib.rs"));
        assert_eq!(rel("../Cargo.toml").as_deref(), Some("Cargo.toml"));
        assert_eq!(rel("/etc/passwd"), None);
        assert_eq!(rel("../../elsewhere"), None);
        assert_eq!(rel("/w/repo/.git/config"), None);
    }

    #[test]
    fn a_patch_names_its_files() {
        let input = json!({"input": "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: b.txt\n+z\n*** End Patch"});
        assert_eq!(paths_of(&input), ["src/a.rs", "b.txt"]);
    }

    #[test]
    fn the_longest_literal_of_a_glob_is_what_a_match_must_contain() {
        assert_eq!(longest_literal("Cargo.lock"), "Cargo.lock");
        assert_eq!(longest_literal("src/**/*.rs"), "src/");
        assert_eq!(longest_literal("./Makefile"), "Makefile");
        assert_eq!(longest_literal("docs/{a,b}/x[0-9].md"), "docs/");
        assert_eq!(longest_literal("**/vendor/**"), "vendor/");
        for (glob, path) in [
            ("Cargo.lock", "Cargo.lock"),
            ("*.rs", "src/deep/x.rs"),
            ("docs/", "docs/a/b.md"),
            ("vendor", "a/vendor/x.c"),
            ("src/{a,b}.rs", "src/b.rs"),
        ] {
            assert!(touches(&[path.to_owned()], &[glob]), "{glob} {path}");
        }
        assert!(!touches(&["src/lib.rs".to_owned()], &["Cargo.lock"]));
    }

    #[test]
    fn quoted_text_does_not_break_a_command_lesson() {
        let p = Predicate::parse("command:git\\s+push\\b.*--force").expect("parses");
        assert_eq!(
            p.holds_for_command("git push --force origin main"),
            Some(false)
        );
        assert_eq!(p.holds_for_command("echo \"git push --force\""), Some(true));
        assert_eq!(
            p.holds_for_command("git commit -m 'x' && git push origin main --force"),
            Some(false)
        );
        // An apostrophe in a comment or a here-document hides nothing.
        for cmd in [
            "# don't forget the rebase\ngit push --force origin main",
            "cat > NOTES.md <<'EOF'\nIt's done\nEOF\ngit push --force origin main",
            "echo it's && git push --force origin main",
        ] {
            assert_eq!(p.holds_for_command(cmd), Some(false), "{cmd}");
        }
        // A here-document's body is data.
        assert_eq!(
            p.holds_for_command("cat > n.md <<EOF\ngit push --force\nEOF\necho ok"),
            Some(true)
        );
        let raw = Predicate::parse("command_raw:git\\s+push\\b.*--force").expect("parses");
        assert_eq!(
            raw.holds_for_command("echo \"git push --force\""),
            Some(false)
        );
    }
}
