//! `.codex/config.toml`: `[mcp_servers.git-swarm]`, edited with toml_edit so
//! every other table, key, comment and blank line stays as the user wrote it.

use toml_edit::{Array, DocumentMut, Item, Table, TableLike, value};

use super::json::{MCP_NAME, Removed};
use crate::problem::Problem;
use crate::{Error, Result};

fn parse(rel: &str, text: &str) -> Result<DocumentMut> {
    text.parse::<DocumentMut>().map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        Error::Invalid(vec![
            Problem::error(
                rel,
                "agents-config-syntax",
                format!("{rel} does not parse: {}", e.message()),
            )
            .at_offset(text, at)
            .with_hint("fix the file (or move it away) and run again; nothing was written"),
        ])
    })
}

fn entry() -> Table {
    let mut t = Table::new();
    t["command"] = value("git");
    let mut args = Array::new();
    args.push("swarm");
    args.push("mcp");
    t["args"] = value(args);
    t
}

/// Is `table` exactly the entry install writes? A `[mcp_servers.git-swarm]`
/// table, or an inline one when install put it into an inline `mcp_servers`.
fn is_ours(table: &dyn TableLike) -> bool {
    table.len() == 2
        && table.get("command").and_then(Item::as_str) == Some("git")
        && table.get("args").and_then(Item::as_array).is_some_and(|a| {
            a.iter().map(|v| v.as_str()).collect::<Vec<_>>() == [Some("swarm"), Some("mcp")]
        })
}

/// Adds `[mcp_servers.git-swarm]`; `None` when an entry of that name is there.
pub fn add_mcp(rel: &str, text: Option<&str>) -> Result<Option<String>> {
    let mut doc = parse(rel, text.unwrap_or(""))?;
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        // A bare `[mcp_servers]` header would be noise: only the sub-table shows.
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let Some(servers) = servers.as_table_like_mut() else {
        return Err(Error::Invalid(vec![
            Problem::error(
                rel,
                "agents-config-shape",
                format!("{rel}: `mcp_servers` is not a table"),
            )
            .with_hint("fix the file (or move it away) and run again; nothing was written"),
        ]));
    };
    if servers.contains_key(MCP_NAME) {
        return Ok(None);
    }
    servers.insert(MCP_NAME, Item::Table(entry()));
    Ok(Some(doc.to_string()))
}

/// Removes `[mcp_servers.git-swarm]` when it is the entry install writes.
pub fn remove_mcp(rel: &str, text: &str) -> Result<Removed> {
    let mut doc = parse(rel, text)?;
    // `mcp_servers = { … }` is as much the user's way as `[mcp_servers.db]`.
    let Some(servers) = doc.get_mut("mcp_servers").and_then(Item::as_table_like_mut) else {
        return Ok(Removed::Absent);
    };
    match servers.get(MCP_NAME) {
        None => return Ok(Removed::Absent),
        Some(item) if !item.as_table_like().is_some_and(is_ours) => {
            return Ok(Removed::Differs);
        }
        Some(_) => {}
    }
    servers.remove(MCP_NAME);
    // Only the implicit table install may have brought goes with its last entry.
    if doc
        .get("mcp_servers")
        .and_then(Item::as_table)
        .is_some_and(|t| t.is_empty() && t.is_implicit())
    {
        doc.remove("mcp_servers");
    }
    Ok(Removed::Yes(doc.to_string()))
}

/// Whose `git-swarm` MCP server entry `text` (the file `rel`) holds, if any.
pub fn mcp_state(rel: &str, text: &str) -> Result<super::McpState> {
    let doc = parse(rel, text)?;
    Ok(
        match doc
            .get("mcp_servers")
            .and_then(Item::as_table_like)
            .and_then(|s| s.get(MCP_NAME))
        {
            None => super::McpState::Absent,
            Some(item) if item.as_table_like().is_some_and(is_ours) => super::McpState::Ours,
            Some(_) => super::McpState::Foreign,
        },
    )
}
