//! JSON Schemas of the file formats, generated from the Rust types so the
//! two cannot drift: `schema/*.schema.json` is checked against these by a
//! test, which also rewrites them when `UPDATE_SCHEMA=1`.

use schemars::schema_for;
use serde_json::{Value, json};

use crate::check::Report;
use crate::config::Config;
use crate::directive::{Directive, Quarantined};
use crate::event::{Body, Event, KNOWN_KINDS};
use crate::harden::curator::{ECHOED, Request};

/// `(file name, schema)` for every format under `schema/`.
pub fn schemas() -> Vec<(&'static str, Value)> {
    vec![
        ("config.schema.json", schema_for!(Config).to_value()),
        ("directive.schema.json", schema_for!(Directive).to_value()),
        (
            "quarantined.schema.json",
            schema_for!(Quarantined).to_value(),
        ),
        ("event.schema.json", event_schema()),
        ("check-report.schema.json", schema_for!(Report).to_value()),
        (
            "curator-request.schema.json",
            schema_for!(Request).to_value(),
        ),
        ("curator-reply.schema.json", curator_reply_schema()),
        (
            "diff.schema.json",
            schema_for!(crate::diff::Report).to_value(),
        ),
        (
            "stats.schema.json",
            schema_for!(crate::stats::Stats).to_value(),
        ),
    ]
}

/// What a curator writes on stdout: any of a directive's fields (those it
/// leaves out keep the entry's values), and the request's own keys, which
/// may be echoed back and are ignored.
fn curator_reply_schema() -> Value {
    let mut reply = schema_for!(Directive).to_value();
    reply["title"] = "git-swarm curator reply".into();
    reply["description"] = "The enriched entry: a directive's fields, each optional (one left out keeps the entry's value); `id`, if given, is the entry's.".into();
    if let Some(fields) = reply.as_object_mut() {
        fields.remove("required");
    }
    for key in ECHOED {
        reply["properties"][*key] =
            json!({ "description": "A key of the request, echoed back: ignored." });
    }
    reply
}

/// The event envelope, and one of: the fields of each kind this version
/// writes (from [`Body`]), or any kind it does not know. A kind's fields are
/// described but none is required: readers ignore a field that is missing,
/// as they ignore one they do not know.
fn event_schema() -> Value {
    let mut event = schema_for!(Event).to_value();
    let mut body = schema_for!(Body).to_value();
    let mut kinds: Vec<Value> = serde_json::from_value(body["oneOf"].take()).unwrap_or_default();
    for kind in kinds.iter_mut().filter_map(Value::as_object_mut) {
        kind.remove("required");
    }
    kinds.push(json!({
        "description": "A kind this version does not know: kept, and ignored.",
        "properties": { "kind": { "not": { "enum": KNOWN_KINDS } } }
    }));
    event["oneOf"] = kinds.into();
    if let (Some(all), Value::Object(defs)) = (event["$defs"].as_object_mut(), body["$defs"].take())
    {
        all.extend(defs);
    }
    event
}
