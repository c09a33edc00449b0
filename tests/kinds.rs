//! Every event kind the commands write is one the reader knows, so `doctor`
//! and `log` never report the tool's own events as unknown.

#[test]
fn every_written_event_kind_is_known() {
    let re = regex::Regex::new(r#"\.event\(\s*"([a-z_]+)"\s*\)"#).expect("regex");
    let mut stack = vec![std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src"
    ))];
    let mut written = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("read source");
                for c in re.captures_iter(&text) {
                    written.push((c[1].to_owned(), path.display().to_string()));
                }
            }
        }
    }
    assert!(written.len() > 10, "found only {written:?}");
    let unknown: Vec<_> = written
        .iter()
        .filter(|(k, _)| !git_swarm::event::KNOWN_KINDS.contains(&k.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "kinds written but not in KNOWN_KINDS: {unknown:?}"
    );
}
