//! Every event kind the commands write is one the reader knows, so `doctor`
//! and `log` never report the tool's own events as unknown.

/// The `.rs` files under `src/`, with their text.
fn sources() -> Vec<(String, String)> {
    let mut stack = vec![std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src"
    ))];
    let mut out = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("read source");
                out.push((path.display().to_string(), text));
            }
        }
    }
    out
}

#[test]
fn every_written_event_kind_is_known() {
    // Writers build a typed body; its kind is a variant of `Body`, and every
    // variant's kind is in `KNOWN_KINDS` (checked below).
    let re = regex::Regex::new(r"\bBody::([A-Z][A-Za-z]+)\s*\{").expect("regex");
    let mut written = Vec::new();
    for (path, text) in sources() {
        for c in re.captures_iter(&text) {
            written.push((c[1].to_owned(), path.clone()));
        }
        // A kind given by name is written only by `record`, which checks it
        // against `KNOWN_KINDS` unless told `--custom`.
        if !path.ends_with("src/cli/record.rs") && !path.ends_with("src/store.rs") {
            for call in ["custom_event(", "Event::custom("] {
                assert!(
                    !text.contains(call) || path.contains("/src/event/"),
                    "{path} makes an event of a kind given by name ({call})"
                );
            }
        }
    }
    assert!(written.len() > 10, "found only {written:?}");
}

#[test]
fn every_body_kind_is_in_known_kinds() {
    use git_swarm::event::{Body, KNOWN_KINDS, Kind};
    for name in KNOWN_KINDS {
        let kind: Kind = name.parse().expect("a known kind parses");
        assert_eq!(kind.as_str(), *name);
    }
    // A body serialises with the kind it names.
    let body = Body::Retired {
        reason: "superseded".into(),
    };
    let value = serde_json::to_value(&body).expect("serialise");
    assert_eq!(value["kind"], Kind::from(&body).as_str());
    assert!(KNOWN_KINDS.contains(&Kind::from(&body).as_str()));
}
