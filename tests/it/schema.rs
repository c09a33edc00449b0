//! The schemas in `schema/` are generated from the Rust types; this checks
//! they are current and that the schemas and the Rust readers agree on
//! every sample file: the template, and the valid and invalid fixtures.

use std::path::{Path, PathBuf};

use git_swarm::config::Config;
use git_swarm::directive::{check_gate, parse_directive_toml};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn schema(name: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("schema").join(name)).expect("schema file");
    let value: serde_json::Value = serde_json::from_str(&text).expect("schema is JSON");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&value)
        .expect("schema compiles")
}

/// TOML → JSON, with datetimes as RFC 3339 strings (as the schemas expect).
fn toml_to_json(v: &toml::Value) -> serde_json::Value {
    match v {
        toml::Value::String(s) => s.clone().into(),
        toml::Value::Integer(i) => (*i).into(),
        toml::Value::Float(f) => {
            serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into)
        }
        toml::Value::Boolean(b) => (*b).into(),
        toml::Value::Datetime(d) => d.to_string().into(),
        toml::Value::Array(a) => a.iter().map(toml_to_json).collect::<Vec<_>>().into(),
        toml::Value::Table(t) => t
            .iter()
            .map(|(k, v)| (k.clone(), toml_to_json(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
    }
}

fn toml_file_as_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("read toml");
    toml_to_json(&toml::from_str::<toml::Value>(&text).expect("toml parses"))
}

#[test]
fn schema_files_match_the_rust_types() {
    let update = std::env::var_os("UPDATE_SCHEMA").is_some();
    for (name, value) in git_swarm::schema::schemas() {
        let path = root().join("schema").join(name);
        let generated = serde_json::to_string_pretty(&value).expect("serialise") + "\n";
        if update {
            std::fs::write(&path, &generated).expect("write schema");
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            committed, generated,
            "{name} is out of date with the Rust types: run `UPDATE_SCHEMA=1 cargo test --test it schema::`"
        );
    }
}

#[test]
fn every_template_file_is_valid() {
    let template = root().join(".swarm-template");
    let directive_schema = schema("directive.schema.json");
    let mut seen = 0;
    for entry in std::fs::read_dir(template.join("directives")).expect("template directives") {
        let path = entry.expect("entry").path();
        let json = toml_file_as_json(&path);
        let errors: Vec<String> = directive_schema
            .iter_errors(&json)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        let text = std::fs::read_to_string(&path).expect("read");
        let loaded = parse_directive_toml(&text, &path.display().to_string());
        assert!(
            loaded.problems.is_empty(),
            "{}: {:?}",
            path.display(),
            loaded.problems
        );
        let d = loaded.directive.expect("loads");
        assert_eq!(
            format!("{}.toml", d.id),
            path.file_name().expect("name").to_string_lossy()
        );
        check_gate(&d)
            .unwrap_or_else(|f| panic!("{} fails the gate: {}", path.display(), f.detail()));
        seen += 1;
    }
    assert!(
        (2..=6).contains(&seen),
        "the template has {seen} example directives"
    );

    let config_path = template.join("config.toml");
    let json = toml_file_as_json(&config_path);
    assert!(schema("config.schema.json").is_valid(&json));
    let text = std::fs::read_to_string(&config_path).expect("read");
    let (config, problems) = Config::parse(&text, "config.toml");
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        config,
        Config::default(),
        "the template config must show every key at its default"
    );
    // Every key of the config type appears in the template, so none is undocumented.
    let documented = toml::from_str::<toml::Table>(&text).expect("parses");
    let defaults = toml::Table::try_from(Config::default()).expect("serialise defaults");
    for (section, table) in &defaults {
        // A project's hives (`[[hive]]`, none by default) are written by
        // `hive add`; a hive's bar (`[promotion]`) is in a hive's own
        // config, which `hive init` writes: docs/hive.md has both.
        if section == "hive" || section == "promotion" {
            continue;
        }
        for key in table.as_table().expect("section is a table").keys() {
            assert!(
                documented.get(section).and_then(|s| s.get(key)).is_some(),
                "config.toml template lacks {section}.{key}"
            );
        }
    }
}

/// Each fixture under tests/fixtures/{valid,invalid}/ is judged the same way
/// by the JSON Schema and by the Rust reader.
#[test]
fn schema_and_reader_agree_on_fixtures() {
    let directive_schema = schema("directive.schema.json");
    let event_schema = schema("event.schema.json");
    for (dir, expect_valid) in [("valid", true), ("invalid", false)] {
        let mut count = 0;
        for entry in std::fs::read_dir(root().join("tests/fixtures").join(dir)).expect("fixtures") {
            let path = entry.expect("entry").path();
            let name = path.display().to_string();
            let text = std::fs::read_to_string(&path).expect("read fixture");
            match path.extension().and_then(|e| e.to_str()) {
                Some("toml") => {
                    let loaded = parse_directive_toml(&text, &name);
                    let rust_ok = loaded.problems.is_empty()
                        && loaded
                            .directive
                            .as_ref()
                            .is_some_and(|d| check_gate(d).is_ok());
                    let schema_ok = toml::from_str::<toml::Value>(&text)
                        .is_ok_and(|v| directive_schema.is_valid(&toml_to_json(&v)));
                    assert_eq!(
                        rust_ok, expect_valid,
                        "Rust reader on {name}: {:?}",
                        loaded.problems
                    );
                    // The schema cannot see gate rules that span fields (a scope and a check), so
                    // it only has to agree on fixtures that are invalid for shape reasons.
                    if expect_valid || !name.contains("gate-") {
                        assert_eq!(schema_ok, expect_valid, "schema on {name}");
                    }
                }
                Some("jsonl") => {
                    for (i, line) in text.lines().enumerate() {
                        let rust_ok =
                            git_swarm::event::parse_event_line(line.as_bytes(), 65536).is_ok();
                        let schema_ok = serde_json::from_str::<serde_json::Value>(line)
                            .is_ok_and(|v| event_schema.is_valid(&v));
                        assert_eq!(rust_ok, expect_valid, "Rust reader on {name}:{}", i + 1);
                        assert_eq!(schema_ok, expect_valid, "schema on {name}:{}", i + 1);
                    }
                }
                _ => continue,
            }
            count += 1;
        }
        assert!(count >= 3, "too few {dir} fixtures");
    }
}

/// The event schema describes each kind's fields: every line of the fixture
/// with every kind validates, except those whose known kind has a field of
/// another type (which readers accept, ignoring the field).
#[test]
fn event_schema_describes_every_kind() {
    let event_schema = schema("event.schema.json");
    let text = std::fs::read_to_string(root().join("tests/fixtures/events/every-kind.jsonl"))
        .expect("read fixture");
    let mistyped = [
        "A13", "A35", "A36", "A37", "A38", "A18", "A24", "A40", "A41", "A42", "A43", "A44", "A45",
        "A46", "A47", "A48", "A49", "A50", "A51", "A52",
    ];
    let mut kinds = std::collections::BTreeSet::new();
    for line in text.lines() {
        let value: serde_json::Value = serde_json::from_str(line).expect("JSON");
        let id = value["id"].as_str().expect("id");
        let expected = !mistyped.iter().any(|m| id.ends_with(m));
        assert_eq!(event_schema.is_valid(&value), expected, "{line}");
        kinds.insert(value["kind"].as_str().expect("kind").to_owned());
    }
    for known in git_swarm::event::KNOWN_KINDS {
        assert!(kinds.contains(*known), "the fixture has no `{known}` event");
    }
}
