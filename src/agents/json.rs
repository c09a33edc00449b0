//! The JSON harness configs, edited through jsonc-parser's concrete syntax
//! tree: what is not git-swarm's keeps its bytes (order, indent, comments).

use jsonc_parser::cst::{CstInputValue, CstNode, CstObject, CstRootNode};
use jsonc_parser::{ParseOptions, ast};
use serde_json::Value;

use super::{BINARY, Form, HOOK_BINARY, Harness, Hook};
use crate::problem::Problem;
use crate::{Error, Result};

/// The key git-swarm's MCP server is registered under.
pub const MCP_NAME: &str = "git-swarm";

/// What removing git-swarm's MCP entry found.
pub enum Removed {
    Yes(String),
    Absent,
    /// A `git-swarm` entry that is not the one install writes: the user's.
    Differs,
}

/// Claude Code and Codex read strict JSON; Gemini CLI and opencode strip
/// comments first, so a comment there is the user's and is kept.
fn options(h: Harness) -> ParseOptions {
    let comments = matches!(h, Harness::Gemini | Harness::Opencode);
    ParseOptions {
        allow_comments: comments,
        allow_loose_object_property_names: false,
        allow_trailing_commas: comments,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// Parses `text` (the file `rel`) to its root object; an error names the
/// file, line and column and says nothing was written.
fn parse(h: Harness, rel: &str, text: &str) -> Result<(CstRootNode, CstObject)> {
    let parsed = parse_root(h, rel, text)?;
    refuse_duplicates(h, rel, text)?;
    Ok(parsed)
}

/// A key twice in one object: the harness's `JSON.parse` keeps the last,
/// while the tree edited here would find (and add to) the first, so status
/// would say installed of hooks the harness never sees. Refused instead,
/// at the second one.
fn refuse_duplicates(h: Harness, rel: &str, text: &str) -> Result<()> {
    let Ok(ast) = jsonc_parser::parse_to_ast(text, &Default::default(), &options(h)) else {
        return Ok(());
    };
    // The first in the file, where the user reads from.
    let mut first: Option<(usize, &str)> = None;
    let mut stack: Vec<&ast::Value> = ast.value.iter().collect();
    while let Some(v) = stack.pop() {
        match v {
            ast::Value::Object(o) => {
                let mut seen = std::collections::HashSet::new();
                for p in &o.properties {
                    let name = p.name.as_str();
                    if !seen.insert(name) && first.is_none_or(|(at, _)| p.range.start < at) {
                        first = Some((p.range.start, name));
                    }
                    stack.push(&p.value);
                }
            }
            ast::Value::Array(a) => stack.extend(a.elements.iter()),
            _ => {}
        }
    }
    let Some((at, name)) = first else {
        return Ok(());
    };
    Err(Error::Invalid(vec![
        Problem::error(
            rel,
            "agents-config-duplicate-key",
            format!(
                "{rel}: the key `{name}` is there twice in one object; the harness would keep only the last"
            ),
        )
        .at_offset(text, at)
        .with_hint(format!(
            "merge the two `{name}` into one, then run again; nothing was written"
        )),
    ]))
}

fn parse_root(h: Harness, rel: &str, text: &str) -> Result<(CstRootNode, CstObject)> {
    let root = CstRootNode::parse(text, &options(h)).map_err(|e| {
        invalid(
            Problem::error(
                rel,
                "agents-config-syntax",
                format!("{} does not parse: {}", rel, e.kind()),
            )
            .at(e.line_display() as u32, e.column_display() as u32),
        )
    })?;
    match root.object_value_or_create() {
        Some(obj) => Ok((root, obj)),
        None => Err(invalid(
            Problem::error(
                rel,
                "agents-config-shape",
                format!("{rel} is not a JSON object"),
            )
            .at(1, 1),
        )),
    }
}

fn invalid(p: Problem) -> Error {
    Error::Invalid(vec![p.with_hint(
        "fix the file (or move it away) and run again; nothing was written",
    )])
}

fn shape(rel: &str, what: &str) -> Error {
    invalid(Problem::error(
        rel,
        "agents-config-shape",
        format!("{rel}: {what}"),
    ))
}

fn s(v: &str) -> CstInputValue {
    CstInputValue::String(v.to_owned())
}

fn n(v: u64) -> CstInputValue {
    CstInputValue::Number(v.to_string())
}

fn obj(fields: Vec<(&str, CstInputValue)>) -> CstInputValue {
    CstInputValue::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// The shell command of git-swarm's hook for `h`'s `event`. It always
/// exits 0: a harness that runs it through a shell sees exit 127 when
/// `git-swarm-agent-hook` is not on its PATH, and Gemini CLI turns any exit but 0 or 1
/// into a deny whose message replaces the tool's result for the model.
/// git-swarm's hook itself exits 0 whatever happens; this covers a missing,
/// old or crashing binary.
pub fn shell_command(h: Harness, event: &str) -> String {
    format!("{HOOK_BINARY} {} {event} || true", h.name())
}

/// The handler git-swarm adds for `hook` (inside an entry's `hooks` array;
/// for Cursor, the entry itself, matcher beside the command).
fn handler(h: Harness, hook: &Hook, form: Form) -> CstInputValue {
    let shell = shell_command(h, hook.event);
    match (h, form) {
        (Harness::ClaudeCode, Form::Exec) => obj(vec![
            ("type", s("command")),
            ("command", s(HOOK_BINARY)),
            (
                "args",
                CstInputValue::Array([h.name(), hook.event].into_iter().map(s).collect()),
            ),
            ("timeout", n(10)),
        ]),
        (Harness::ClaudeCode | Harness::Codex, _) => obj(vec![
            ("type", s("command")),
            ("command", s(&shell)),
            ("timeout", n(10)),
        ]),
        (Harness::Gemini, _) => obj(vec![
            ("type", s("command")),
            ("name", s(&format!("{BINARY} {}", hook.event))),
            ("command", s(&shell)),
            ("timeout", n(10_000)),
        ]),
        (Harness::Cursor | Harness::Opencode, _) => {
            let mut fields = vec![("command", s(&shell))];
            if let Some(m) = hook.matcher {
                fields.push(("matcher", s(m)));
            }
            obj(fields)
        }
    }
}

/// The entry git-swarm adds to `hooks.<key>` for `hook` (contract.md).
fn entry(h: Harness, hook: &Hook, form: Form) -> CstInputValue {
    let handler = handler(h, hook, form);
    if matches!(h, Harness::Cursor | Harness::Opencode) {
        return handler;
    }
    let mut fields = Vec::new();
    if let Some(m) = hook.matcher {
        fields.push(("matcher", s(m)));
    }
    fields.push(("hooks", CstInputValue::Array(vec![handler])));
    obj(fields)
}

/// Whether one of git-swarm's handlers for `h` is not what install would
/// write now (an older git-swarm's, or the other form of Claude Code's).
fn update_in_place(o: &CstObject, h: Harness, form: Form) -> Vec<String> {
    let mut updated = Vec::new();
    let Some(hooks) = o.object_value("hooks") else {
        return updated;
    };
    for hook in h.hooks() {
        let new = handler(h, hook, form);
        let want = to_value(&new);
        let Some(array) = hooks.array_value(hook.key) else {
            continue;
        };
        for e in array.elements() {
            for (node, v) in handlers_of(&e) {
                if our_event(&v).as_deref() == Some(hook.event)
                    && v != want
                    && let Some(obj) = node.as_object()
                {
                    obj.replace_with(new.clone());
                    updated.push(format!("{} (updated)", hook.key));
                }
            }
            // An older git-swarm's matcher (Codex's `spawn_agent` before
            // `collaborationspawn_agent` was added), in an entry that holds
            // only git-swarm's handlers: changed where it stands.
            if let Some(m) = hook.matcher
                && let Some(prop) = stale_matcher(&e, hook)
            {
                prop.set_value(s(m));
                updated.push(format!("{} (updated)", hook.key));
            }
        }
    }
    updated.dedup();
    updated
}

/// The `matcher` of `element` when it is not `hook`'s and the element
/// holds git-swarm's handler for `hook` and no other handler.
fn stale_matcher(element: &CstNode, hook: &Hook) -> Option<jsonc_parser::cst::CstObjectProp> {
    let want = hook.matcher?;
    let prop = element.as_object()?.get("matcher")?;
    let current = prop.value()?.to_serde_value()?;
    let handlers = handlers_of(element);
    let ours = !handlers.is_empty()
        && handlers
            .iter()
            .all(|(_, v)| our_event(v).as_deref() == Some(hook.event));
    (ours && current.as_str() != Some(want)).then_some(prop)
}

fn stale(o: &CstObject, h: Harness, form: Form) -> bool {
    let Some(hooks) = o.object_value("hooks") else {
        return false;
    };
    h.hooks().iter().any(|hook| {
        let want = to_value(&handler(h, hook, form));
        hooks.array_value(hook.key).is_some_and(|a| {
            a.elements().iter().any(|e| {
                stale_matcher(e, hook).is_some()
                    || handlers_of(e)
                        .iter()
                        .any(|(_, v)| our_event(v).as_deref() == Some(hook.event) && *v != want)
            })
        })
    })
}

/// git-swarm's event, when `handler` is one of git-swarm's hook handlers
/// (found by its command, whatever its position or other fields): today's
/// `git-swarm-agent-hook HARNESS EVENT`, or the `git-swarm hook agent
/// HARNESS EVENT` of an older install, which is then stale.
fn our_event(handler: &Value) -> Option<String> {
    let command = handler.get("command")?.as_str()?;
    let words: Vec<&str> = match handler.get("args").and_then(Value::as_array) {
        Some(args) if command == BINARY || command == HOOK_BINARY => std::iter::once(command)
            .chain(args.iter().filter_map(Value::as_str))
            .collect(),
        _ => command.split_whitespace().collect(),
    };
    match words.as_slice() {
        [HOOK_BINARY, _, event, ..] | [BINARY, "hook", "agent", _, event, ..] => {
            Some((*event).to_owned())
        }
        _ => None,
    }
}

/// The handlers inside one element of a `hooks.<key>` array: the element
/// itself for Cursor, its `hooks` array for the others.
fn handlers_of(element: &CstNode) -> Vec<(CstNode, Value)> {
    let Some(o) = element.as_object() else {
        return vec![];
    };
    match o.array_value("hooks") {
        Some(a) => a
            .elements()
            .into_iter()
            .filter_map(|e| e.to_serde_value().map(|v| (e, v)))
            .collect(),
        None => element
            .to_serde_value()
            .map(|v| vec![(element.clone(), v)])
            .unwrap_or_default(),
    }
}

/// Is git-swarm's handler for `hook` in the array of `hooks.<key>`?
fn present(root: &CstObject, hook: &Hook) -> bool {
    let Some(array) = root
        .object_value("hooks")
        .and_then(|hooks| hooks.array_value(hook.key))
    else {
        return false;
    };
    array.elements().iter().any(|e| {
        let matcher = e
            .as_object()
            .and_then(|o| o.get("matcher"))
            .and_then(|p| p.value())
            .and_then(|v| v.to_serde_value());
        let matcher_ok = matcher.as_ref().and_then(Value::as_str) == hook.matcher;
        matcher_ok
            && handlers_of(e)
                .iter()
                .any(|(_, v)| our_event(v).as_deref() == Some(hook.event))
    })
}

/// Refuses a `hooks` that is not an object, or a `hooks.<key>` of `h`'s
/// that is not an array: install could not add to it, and the harness
/// would not read git-swarm's hooks there, so status says so too.
fn check_hooks_shape(h: Harness, rel: &str, o: &CstObject) -> Result<()> {
    let Some(hooks) = o.get("hooks") else {
        return Ok(());
    };
    let Some(hooks) = hooks.value().and_then(|v| v.as_object()) else {
        return Err(shape(rel, "`hooks` is not an object"));
    };
    for hook in h.hooks() {
        if let Some(p) = hooks.get(hook.key)
            && p.value().and_then(|v| v.as_array()).is_none()
        {
            return Err(shape(rel, &format!("`hooks.{}` is not an array", hook.key)));
        }
    }
    Ok(())
}

/// Adds git-swarm's hooks for `h`; returns the new text and the harness
/// events added (none: the text is unchanged).
pub fn add_hooks(
    h: Harness,
    rel: &str,
    text: Option<&str>,
    form: Form,
) -> Result<(String, Vec<String>)> {
    let created = text.is_none();
    let (root, o) = parse(h, rel, text.unwrap_or("{}\n"))?;
    check_hooks_shape(h, rel, &o)?;
    // A handler of an older git-swarm is replaced where it stands: every
    // other hook keeps its place, which is what Codex keys its trust on.
    let mut added = update_in_place(&o, h, form);
    if created && h == Harness::Cursor {
        o.append("version", n(1));
    }
    for hook in h.hooks() {
        if present(&o, hook) {
            continue;
        }
        o.ensure_multiline();
        let hooks = o
            .object_value_or_create("hooks")
            .ok_or_else(|| shape(rel, "`hooks` is not an object"))?;
        hooks.ensure_multiline();
        let array = hooks
            .array_value_or_create(hook.key)
            .ok_or_else(|| shape(rel, &format!("`hooks.{}` is not an array", hook.key)))?;
        array.ensure_multiline();
        array.append(entry(h, hook, form));
        added.push(hook.key.to_owned());
    }
    Ok((root.to_string(), added))
}

/// Whether git-swarm's handlers in `text` are an older git-swarm's (for
/// Claude Code, neither of its two current forms), and the form Claude
/// Code's are in (`None` when there is none, or for another harness).
pub fn handlers_form(h: Harness, rel: &str, text: &str) -> Result<(bool, Option<Form>)> {
    let (_, o) = parse(h, rel, text)?;
    let outdated = match h {
        Harness::ClaudeCode => stale(&o, h, Form::Exec) && stale(&o, h, Form::Shell),
        _ => stale(&o, h, Form::Shell),
    };
    let form = (h == Harness::ClaudeCode)
        .then(|| {
            let hooks = o.object_value("hooks")?;
            let found = h.hooks().iter().find_map(|hook| {
                let a = hooks.array_value(hook.key)?;
                a.elements().iter().find_map(|e| {
                    handlers_of(e)
                        .into_iter()
                        .find(|(_, v)| our_event(v).is_some())
                        .map(|(_, v)| v)
                })
            })?;
            Some(if found.get("args").is_some() {
                Form::Exec
            } else {
                Form::Shell
            })
        })
        .flatten();
    Ok((outdated, form))
}

/// One of git-swarm's handlers where a hooks file has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// The harness event (`PreToolUse`).
    pub key: String,
    /// Its entry's and its own index.
    pub group: usize,
    pub handler: usize,
    pub matcher: Option<String>,
    /// The handler as written.
    pub value: Value,
}

/// git-swarm's handlers in `text`, where they stand.
pub fn placed(h: Harness, rel: &str, text: &str) -> Result<Vec<Placed>> {
    let (_, o) = parse(h, rel, text)?;
    let mut out = Vec::new();
    let Some(hooks) = o.object_value("hooks") else {
        return Ok(out);
    };
    for prop in hooks.properties() {
        let (Some(name), Some(array)) = (prop.name(), prop.array_value()) else {
            continue;
        };
        let Ok(key) = name.decoded_value() else {
            continue;
        };
        for (group, e) in array.elements().iter().enumerate() {
            let matcher = e
                .as_object()
                .and_then(|o| o.get("matcher"))
                .and_then(|p| p.value())
                .and_then(|v| v.to_serde_value())
                .and_then(|v| v.as_str().map(str::to_owned));
            for (handler, (_, v)) in handlers_of(e).into_iter().enumerate() {
                if our_event(&v).is_some() {
                    out.push(Placed {
                        key: key.clone(),
                        group,
                        handler,
                        matcher: matcher.clone(),
                        value: v,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// The harness events of `h` without git-swarm's hook in `text`.
pub fn missing_hooks(h: Harness, rel: &str, text: &str) -> Result<Vec<String>> {
    let (_, o) = parse(h, rel, text)?;
    check_hooks_shape(h, rel, &o)?;
    // A key registered twice (Gemini CLI's BeforeTool) is told apart by git-swarm's event.
    let twice = |key: &str| h.hooks().iter().filter(|o| o.key == key).count() > 1;
    Ok(h.hooks()
        .iter()
        .filter(|hook| !present(&o, hook))
        .map(|hook| match twice(hook.key) {
            true => format!("{} ({})", hook.key, hook.event),
            false => hook.key.to_owned(),
        })
        .collect())
}

/// Removes every git-swarm hook handler (whatever harness or event it
/// names), then the entries and keys that only held them; returns the new
/// text and the harness events it removed from.
pub fn remove_hooks(h: Harness, rel: &str, text: &str) -> Result<(String, Vec<String>)> {
    let (root, o) = parse(h, rel, text)?;
    let mut removed = Vec::new();
    if let Some(hooks) = o.object_value("hooks") {
        for prop in hooks.properties() {
            let Some(array) = prop.array_value() else {
                continue;
            };
            let mut any = false;
            for element in array.elements() {
                let handlers = handlers_of(&element);
                let ours: Vec<CstNode> = handlers
                    .iter()
                    .filter(|(_, v)| our_event(v).is_some())
                    .map(|(n, _)| n.clone())
                    .collect();
                if ours.is_empty() {
                    continue;
                }
                any = true;
                let whole = ours.len() == handlers.len();
                if whole {
                    element.remove();
                } else {
                    ours.into_iter().for_each(CstNode::remove);
                }
            }
            if any {
                removed.push(prop.decoded_name().unwrap_or_default());
                if array.elements().is_empty() {
                    prop.remove();
                }
            }
        }
        if !removed.is_empty()
            && hooks.properties().is_empty()
            && let Some(p) = o.get("hooks")
        {
            p.remove();
        }
    }
    Ok((root.to_string(), removed))
}

/// The key holding MCP servers in `h`'s config.
fn servers_key(h: Harness) -> &'static str {
    if h == Harness::Opencode {
        "mcp"
    } else {
        "mcpServers"
    }
}

/// git-swarm's MCP server entry for `h` (contract.md; research §1–5).
fn mcp_entry(h: Harness) -> CstInputValue {
    let argv = || CstInputValue::Array(vec![s("swarm"), s("mcp")]);
    match h {
        Harness::ClaudeCode => obj(vec![
            ("type", s("stdio")),
            ("command", s("git")),
            ("args", argv()),
        ]),
        Harness::Opencode => obj(vec![
            ("type", s("local")),
            (
                "command",
                CstInputValue::Array(vec![s("git"), s("swarm"), s("mcp")]),
            ),
            ("enabled", CstInputValue::Bool(true)),
        ]),
        _ => obj(vec![("command", s("git")), ("args", argv())]),
    }
}

fn to_value(v: &CstInputValue) -> Value {
    match v {
        CstInputValue::Null => Value::Null,
        CstInputValue::Bool(b) => Value::Bool(*b),
        CstInputValue::Number(n) => serde_json::from_str(n).unwrap_or(Value::Null),
        CstInputValue::String(s) => Value::String(s.clone()),
        CstInputValue::Array(a) => Value::Array(a.iter().map(to_value).collect()),
        CstInputValue::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), to_value(v))).collect())
        }
    }
}

/// Registers git-swarm's MCP server; `None` when a `git-swarm` entry is
/// there already (ours, or the user's, which is kept).
pub fn add_mcp(h: Harness, rel: &str, text: Option<&str>) -> Result<Option<String>> {
    let (root, o) = parse(h, rel, text.unwrap_or("{}\n"))?;
    let key = servers_key(h);
    let servers = o
        .object_value_or_create(key)
        .ok_or_else(|| shape(rel, &format!("`{key}` is not an object")))?;
    if servers.get(MCP_NAME).is_some() {
        return Ok(None);
    }
    // A one-line object would get a multi-line entry inside it.
    o.ensure_multiline();
    servers.ensure_multiline();
    servers.append(MCP_NAME, mcp_entry(h));
    Ok(Some(root.to_string()))
}

/// Removes git-swarm's MCP server entry when it is exactly the one install
/// writes (then the servers key too, if that left it empty).
pub fn remove_mcp(h: Harness, rel: &str, text: &str) -> Result<Removed> {
    let (root, o) = parse(h, rel, text)?;
    let key = servers_key(h);
    let Some(servers) = o.object_value(key) else {
        return Ok(Removed::Absent);
    };
    let Some(prop) = servers.get(MCP_NAME) else {
        return Ok(Removed::Absent);
    };
    if prop.value().and_then(|v| v.to_serde_value()) != Some(to_value(&mcp_entry(h))) {
        return Ok(Removed::Differs);
    }
    prop.remove();
    if servers.properties().is_empty()
        && let Some(p) = o.get(key)
    {
        p.remove();
    }
    Ok(Removed::Yes(root.to_string()))
}

/// Whose `git-swarm` MCP server entry `text` (the file `rel`) holds, if any.
pub fn mcp_state(h: Harness, rel: &str, text: &str) -> Result<super::McpState> {
    let (_, o) = parse(h, rel, text)?;
    let Some(prop) = o.object_value(servers_key(h)).and_then(|s| s.get(MCP_NAME)) else {
        return Ok(super::McpState::Absent);
    };
    Ok(
        if prop.value().and_then(|v| v.to_serde_value()) == Some(to_value(&mcp_entry(h))) {
            super::McpState::Ours
        } else {
            super::McpState::Foreign
        },
    )
}

/// Does `text` hold any git-swarm hook handler, or git-swarm's MCP entry
/// as install writes it for any harness?
pub fn holds_ours(text: &str) -> bool {
    let Ok(root) = CstRootNode::parse(text, &options(Harness::Opencode)) else {
        return true;
    };
    let Some(o) = root.object_value() else {
        return false;
    };
    let hooks = o.object_value("hooks").is_some_and(|hooks| {
        hooks.properties().iter().any(|p| {
            p.array_value().is_some_and(|a| {
                a.elements()
                    .iter()
                    .any(|e| handlers_of(e).iter().any(|(_, v)| our_event(v).is_some()))
            })
        })
    });
    hooks
        || Harness::ALL.iter().any(|&h| {
            o.object_value(servers_key(h))
                .and_then(|s| s.get(MCP_NAME))
                .and_then(|p| p.value())
                .and_then(|v| v.to_serde_value())
                == Some(to_value(&mcp_entry(h)))
        })
}
