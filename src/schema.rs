//! JSON Schemas of the file formats, generated from the Rust types so the
//! two cannot drift: `schema/*.schema.json` is checked against these by a
//! test, which also rewrites them when `UPDATE_SCHEMA=1`.

use schemars::schema_for;
use serde_json::{Value, json};

use crate::check::Report;
use crate::config::Config;
use crate::directive::{Directive, Quarantined};
use crate::event::{Body, Event, KNOWN_KINDS};

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
    ]
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
