//! `git swarm record`: plumbing to append an event from a script or harness.

use std::io::Write;
use std::process::ExitCode;

use git_swarm::Error;
use git_swarm::event::Event;

use super::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The event kind, e.g. `check` or `outcome` (one this version knows, unless --custom).
    kind: String,
    /// Record a kind this version does not know (another tool's: kept, and ignored by git-swarm).
    #[arg(long)]
    custom: bool,
    /// The directive the event is about.
    #[arg(long, value_name = "ID")]
    directive: Option<String>,
    /// The actor's role.
    #[arg(long)]
    role: Option<String>,
    /// An extra field: KEY=VALUE (a JSON value, or else a string). Repeatable.
    #[arg(long = "field", value_name = "KEY=VALUE")]
    fields: Vec<String>,
    /// Append this many events, one append each.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    count: u64,
    /// Print each event's id.
    #[arg(long)]
    print_ids: bool,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let store = super::store(ui)?;
    if !git_swarm::event::is_valid_kind(&args.kind) {
        return Err(Error::usage(
            format!("`{}` is not a valid event kind", args.kind.escape_debug()),
            "kinds are lowercase letters, digits and `_`, starting with a letter",
        )
        .into());
    }
    let known = git_swarm::event::KNOWN_KINDS;
    if !args.custom && !known.contains(&args.kind.as_str()) {
        // Readers keep unknown kinds for forward compatibility; one typed
        // by hand is a typo that no fold would ever count.
        let hint = format!(
            "{}; --custom records a kind of your own",
            super::log::kinds_hint(&args.kind, known)
        );
        let message = format!("`{}` is not an event kind git-swarm knows", args.kind);
        return Err(Error::usage(message, hint).into());
    }
    if let Some(id) = &args.directive
        && !git_swarm::directive::is_valid_id(id)
    {
        return Err(Error::usage(
            format!("`{}` is not a directive id", id.escape_debug()),
            "ids are 2–80 lowercase letters, digits, `.`, `_` and `-`, as in `git swarm list`",
        )
        .into());
    }
    if let Some(role) = &args.role {
        super::args::check_role(role)?;
    }
    let mut fields = Vec::new();
    for f in &args.fields {
        let Some((k, v)) = f.split_once('=') else {
            return Err(Error::usage(
                format!("--field `{f}` has no `=`"),
                "write --field key=value",
            )
            .into());
        };
        let key_ok = !k.is_empty()
            && k.len() <= 64
            && k.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if !key_ok {
            return Err(Error::usage(
                format!("--field `{}` has no usable key", f.escape_debug()),
                "a key is 1–64 ASCII letters, digits, `_`, `-` and `.`: --field key=value",
            )
            .into());
        }
        if matches!(k, "id" | "ts" | "kind" | "actor" | "directive") {
            return Err(Error::usage(
                format!("--field cannot set `{k}`"),
                "use the command's own options for these",
            )
            .into());
        }
        let value =
            serde_json::from_str(v).unwrap_or_else(|_| serde_json::Value::String(v.to_owned()));
        fields.push((k.to_owned(), value));
    }
    let mut violations = false;
    for _ in 0..args.count {
        let mut event: Event = store.custom_event(&args.kind);
        event.directive = args.directive.clone();
        event.actor.role = args.role.clone();
        for (k, v) in &fields {
            event.data.insert(k.clone(), v.clone());
        }
        super::append(&store, std::slice::from_ref(&event), ui)?;
        violations |= git_swarm::fold::EventHead::parse(event.to_line().as_bytes())
            .is_some_and(|h| matches!(h.signal, git_swarm::fold::Signal::Violation { .. }));
        if args.print_ids {
            writeln!(ui.out, "{}", event.id)?;
        }
    }
    // As every command that records a violation: the deciding one also
    // records the escalation it opens.
    if violations {
        let due = git_swarm::directive_loop::escalation::due_from_index(&store)?;
        super::escalate(&store, &due, ui)?;
    }
    Ok(ExitCode::SUCCESS)
}
