//! JSON Schemas of the file formats, generated from the Rust types so the
//! two cannot drift: `schema/*.schema.json` is checked against these by a
//! test, which also rewrites them when `UPDATE_SCHEMA=1`.

use schemars::schema_for;
use serde_json::Value;

use crate::config::Config;
use crate::directive::{Directive, Quarantined};
use crate::event::Event;

/// `(file name, schema)` for every format under `schema/`.
pub fn schemas() -> Vec<(&'static str, Value)> {
    let value = |s: schemars::Schema| s.to_value();
    vec![
        ("config.schema.json", value(schema_for!(Config))),
        ("directive.schema.json", value(schema_for!(Directive))),
        ("quarantined.schema.json", value(schema_for!(Quarantined))),
        ("event.schema.json", value(schema_for!(Event))),
        (
            "check-report.schema.json",
            value(schema_for!(crate::check::Report)),
        ),
    ]
}
