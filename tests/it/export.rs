//! `git swarm export`: the active directives as a marked block in AGENTS.md
//! (and CLAUDE.md), as `.claude/rules/<id>.md` and as `.cursor/rules/<id>.mdc`
//! — round trips with and without paths, idempotence, user content kept,
//! stale files removed, links refused.

use crate::common;

use common::{TestEnv, directive, repo_without_directives};
use serde_json::Value;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/export");

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{name}")).expect("fixture")
}

/// Two active directives (one with paths, one without) and a retired one.
fn store() -> TestEnv {
    let env = repo_without_directives();
    directive(
        &env,
        "lockfile-with-manifest",
        r#"lesson = "Change a lockfile only together with the manifest it locks"
priority = "medium"
applies_to_agents = ["coder"]
paths = ["Cargo.lock", "web/**/package-lock.json"]
required_actions = ["regenerate the lockfile with the package manager"]
verify = ["file_modified:{Cargo.toml,web/**/package.json}"]"#,
    );
    directive(
        &env,
        "no-private-keys",
        r#"lesson = "Never commit private keys or credentials to the repository"
priority = "critical"
enforcement = "enforce"
applies_to_agents = ["coder"]
applies_to_tools = ["write"]
forbidden_actions = ["adding a PEM private key to a tracked file"]"#,
    );
    directive(
        &env,
        "old-script",
        r#"lesson = "Run the old integration script before merging anything"
status = "retired"
applies_to_agents = ["coder"]
required_actions = ["./old-script.sh"]"#,
    );
    env
}

/// The YAML front matter of a rules file, parsed.
fn front_matter(text: &str) -> Value {
    let rest = text
        .strip_prefix("---\n")
        .expect("front matter opens the file");
    let end = rest.find("\n---\n").expect("front matter closes");
    serde_saphyr::from_str(&rest[..end + 1]).expect("front matter is YAML")
}

fn listing(env: &TestEnv, dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(env.path(dir))
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
        .collect();
    names.sort();
    names
}

#[test]
fn agents_md_block_replaces_only_its_own_lines_and_is_idempotent() {
    let env = store();
    let user = fixture("AGENTS.md");
    env.write("AGENTS.md", &user);
    let run = env.swarm(&["export", "agents-md"]);
    run.success();
    assert_eq!(run.stdout, "AGENTS.md: written\n");
    assert!(
        !env.exists("CLAUDE.md"),
        "CLAUDE.md is only written when present"
    );

    let text = env.read("AGENTS.md");
    let (before, _) = user
        .split_once("<!-- git-swarm:begin")
        .expect("fixture block");
    let (_, after) = user
        .split_once("<!-- git-swarm:end -->\n")
        .expect("fixture block");
    assert!(text.starts_with(before), "{text}");
    assert!(text.ends_with(after), "{text}");
    assert!(!text.contains("stale line"), "{text}");
    // Critical before medium; the retired directive left out; scope and checks shown.
    let critical = text.find("### Critical").expect("critical group");
    let medium = text.find("### Medium").expect("medium group");
    assert!(critical < medium, "{text}");
    assert!(text.contains("- **Never commit private keys or credentials to the repository** (`no-private-keys`; roles: coder; tools: write; paths: all; enforce)"), "{text}");
    assert!(
        text.contains("paths: `Cargo.lock`, `web/**/package-lock.json`"),
        "{text}"
    );
    assert!(
        text.contains("  - Don't: adding a PEM private key to a tracked file"),
        "{text}"
    );
    assert!(
        text.contains("`file_modified:{Cargo.toml,web/**/package.json}`"),
        "{text}"
    );
    assert!(!text.contains("old-script"), "{text}");
    assert_eq!(text.matches("<!-- git-swarm:begin").count(), 1);

    let again = env.swarm(&["export", "agents-md"]);
    again.success();
    assert_eq!(
        again.stdout,
        "Nothing to change: 1 file already up to date.\n"
    );
    assert_eq!(env.read("AGENTS.md"), text);
}

#[test]
fn agents_md_is_created_and_claude_md_gets_a_block_when_present() {
    let env = store();
    env.write("CLAUDE.md", "@AGENTS.md\n\nNo trailing newline here");
    env.swarm(&["export", "agents-md"]).success();
    let agents = env.read("AGENTS.md");
    assert!(agents.starts_with("<!-- git-swarm:begin"), "{agents}");
    let claude = env.read("CLAUDE.md");
    assert!(
        claude.starts_with("@AGENTS.md\n\nNo trailing newline here\n\n<!-- git-swarm:begin"),
        "{claude}"
    );
    assert!(claude.ends_with("<!-- git-swarm:end -->\n"), "{claude}");

    // A retired directive leaves the block on the next run.
    directive(
        &env,
        "no-private-keys",
        r#"lesson = "Never commit private keys or credentials to the repository"
status = "retired"
applies_to_agents = ["coder"]
forbidden_actions = ["adding a PEM private key to a tracked file"]"#,
    );
    let run = env.swarm(&["export", "agents-md"]);
    run.success();
    assert_eq!(run.stdout, "AGENTS.md: written\nCLAUDE.md: written\n");
    assert!(!env.read("CLAUDE.md").contains("no-private-keys"));
    assert!(
        env.read("CLAUDE.md")
            .starts_with("@AGENTS.md\n\nNo trailing newline here\n\n")
    );
}

#[test]
fn unbalanced_markers_are_refused_with_file_and_line_and_nothing_is_written() {
    let env = store();
    let bad = "# Guide\n<!-- git-swarm:begin -->\nold\n<!-- git-swarm:begin -->\n<!-- git-swarm:end -->\n";
    env.write("AGENTS.md", bad);
    env.write("CLAUDE.md", "mine\n");
    let run = env.swarm(&["export", "agents-md"]);
    run.code(2);
    assert!(run.stderr.contains("AGENTS.md:4"), "{}", run.stderr);
    assert!(
        run.stderr.contains("2 begin and 1 end git-swarm markers"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("hint:"), "{}", run.stderr);
    assert_eq!(env.read("AGENTS.md"), bad);
    assert_eq!(env.read("CLAUDE.md"), "mine\n");

    env.write("AGENTS.md", "<!-- git-swarm:end -->\n");
    let run = env.swarm(&["export", "agents-md"]);
    run.code(2);
    assert!(run.stderr.contains("AGENTS.md:1"), "{}", run.stderr);
    assert!(
        run.stderr.contains("end marker without a begin marker"),
        "{}",
        run.stderr
    );
}

#[test]
fn claude_rules_round_trip_paths_and_remove_only_their_own_stale_files() {
    let env = store();
    env.write(
        ".claude/rules/mine.md",
        "---\npaths:\n  - docs/**\n---\nMy own rule.\n",
    );
    let run = env.swarm(&["export", "claude-rules"]);
    run.success();
    assert_eq!(
        run.stdout,
        ".claude/rules/no-private-keys.md: written\n.claude/rules/lockfile-with-manifest.md: written\n"
    );
    assert_eq!(
        listing(&env, ".claude/rules"),
        ["lockfile-with-manifest.md", "mine.md", "no-private-keys.md"]
    );
    let with_paths = env.read(".claude/rules/lockfile-with-manifest.md");
    assert_eq!(
        front_matter(&with_paths),
        serde_json::json!({"paths": ["Cargo.lock", "web/**/package-lock.json"]})
    );
    assert!(with_paths.contains("# Change a lockfile only together with the manifest it locks"));
    assert!(with_paths.contains("- Do: regenerate the lockfile with the package manager"));
    let without = env.read(".claude/rules/no-private-keys.md");
    // No paths: no `paths:` key, so Claude loads the rule at launch.
    assert!(
        without.starts_with("---\n# git-swarm:generated"),
        "{without}"
    );
    assert!(front_matter(&without).get("paths").is_none(), "{without}");

    let again = env.swarm(&["export", "claude-rules"]);
    again.success();
    assert_eq!(
        again.stdout,
        "Nothing to change: 2 files already up to date.\n"
    );

    std::fs::remove_file(env.path(".swarm/directives/no-private-keys.toml")).expect("rm");
    let run = env.swarm(&["export", "claude-rules"]);
    run.success();
    assert_eq!(
        run.stdout,
        ".claude/rules/no-private-keys.md: removed\n1 file unchanged.\n"
    );
    assert_eq!(
        listing(&env, ".claude/rules"),
        ["lockfile-with-manifest.md", "mine.md"]
    );
    assert_eq!(
        env.read(".claude/rules/mine.md"),
        "---\npaths:\n  - docs/**\n---\nMy own rule.\n"
    );
}

#[test]
fn cursor_rules_set_globs_or_always_apply_and_skip_a_users_file() {
    let env = store();
    let mine = fixture("mine.mdc");
    env.write(".cursor/rules/mine.mdc", &mine);
    // A hand-written file where a directive's rule would go is left alone.
    env.write(".cursor/rules/no-private-keys.mdc", &mine);
    let run = env.swarm(&["export", "cursor-rules", "--format", "json"]);
    run.success();
    let report: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(report["target"], "cursor-rules");
    assert_eq!(
        report["files"][0]["path"],
        ".cursor/rules/no-private-keys.mdc"
    );
    assert_eq!(report["files"][0]["action"], "skipped");
    assert_eq!(report["files"][1]["action"], "written");
    assert_eq!(env.read(".cursor/rules/no-private-keys.mdc"), mine);
    assert_eq!(env.read(".cursor/rules/mine.mdc"), mine);

    // Cursor reads the front matter line by line: globs one bare comma list.
    let rule = env.read(".cursor/rules/lockfile-with-manifest.mdc");
    assert!(
        rule.contains(
            "\ndescription: Change a lockfile only together with the manifest it locks\n\
             globs: Cargo.lock,web/**/package-lock.json\nalwaysApply: false\n---\n"
        ),
        "{rule}"
    );

    // Without the user's file, the pathless directive is always applied.
    std::fs::remove_file(env.path(".cursor/rules/no-private-keys.mdc")).expect("rm");
    let text = env.swarm(&["export", "cursor-rules"]);
    text.success();
    assert_eq!(
        text.stdout,
        ".cursor/rules/no-private-keys.mdc: written\n1 file unchanged.\n"
    );
    let always = front_matter(&env.read(".cursor/rules/no-private-keys.mdc"));
    assert_eq!(always["alwaysApply"], true);
    assert!(always.get("globs").is_none(), "{always}");
}

#[test]
fn a_link_at_a_target_is_refused_and_nothing_is_written() {
    let env = store();
    let outside = env.tmp.path().join("outside.mdc");
    std::fs::write(&outside, "not yours\n").expect("write");
    std::fs::create_dir_all(env.path(".cursor/rules")).expect("mkdir");
    std::os::unix::fs::symlink(&outside, env.path(".cursor/rules/no-private-keys.mdc"))
        .expect("symlink");
    let run = env.swarm(&["export", "cursor-rules"]);
    run.code(2);
    assert!(
        run.stderr
            .contains(".cursor/rules/no-private-keys.mdc is a symbolic link"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("hint:"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(&outside).expect("read"),
        "not yours\n"
    );
    assert_eq!(listing(&env, ".cursor/rules"), ["no-private-keys.mdc"]);

    std::os::unix::fs::symlink(&outside, env.path("AGENTS.md")).expect("symlink");
    env.swarm(&["export", "agents-md"]).code(2);
    assert_eq!(
        std::fs::read_to_string(&outside).expect("read"),
        "not yours\n"
    );
}

#[test]
fn dry_run_lists_the_changes_and_writes_nothing() {
    let env = store();
    let run = env.swarm(&["export", "claude-rules", "--dry-run"]);
    run.success();
    assert_eq!(
        run.stdout,
        ".claude/rules/no-private-keys.md: would be written\n.claude/rules/lockfile-with-manifest.md: would be written\n"
    );
    assert!(!env.exists(".claude"));
    let run = env.swarm(&["export", "agents-md", "--dry-run", "--format", "json"]);
    run.success();
    let report: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(report["dry_run"], true);
    assert_eq!(report["files"][0]["action"], "written");
    assert!(!env.exists("AGENTS.md"));
}

/// The store's index drops a file whose `id` is invalid or not its stem, so
/// such an entry is not exported at all (and so never names a file).
#[test]
fn a_directive_file_with_a_bad_id_is_left_out_of_the_export() {
    let env = store();
    env.write(
        ".swarm/directives/escape.toml",
        r#"id = "../../escape"
lesson = "A directive whose id field tries to leave the folder"
applies_to_agents = ["coder"]
required_actions = ["nothing"]
"#,
    );
    let run = env.swarm(&["export", "claude-rules"]);
    run.success();
    assert!(!run.stdout.contains("escape"), "{}", run.stdout);
    assert!(!env.exists("escape.md"));
    assert_eq!(
        listing(&env, ".claude/rules"),
        ["lockfile-with-manifest.md", "no-private-keys.md"]
    );
}

#[test]
fn cursor_front_matter_is_one_line_per_key_and_brace_globs_are_expanded_or_skipped() {
    let env = repo_without_directives();
    directive(
        &env,
        "long-lesson",
        r#"lesson = "When a migration changes a column type, write the backfill: it runs before the new code reads the column, and it must be idempotent #always"
applies_to_agents = ["coder"]
paths = ["src/{api,db}/*.rs", "docs/*.md"]"#,
    );
    directive(
        &env,
        "nested-braces",
        r#"lesson = "Nested alternatives cannot be listed"
applies_to_agents = ["coder"]
paths = ["src/{a,{b,c}}.rs"]"#,
    );
    let run = env.swarm(&["export", "cursor-rules"]);
    run.success();
    assert!(
        run.stderr.contains(".cursor/rules/nested-braces.mdc")
            && run.stderr.contains("comma or nested braces"),
        "{}",
        run.stderr
    );
    assert!(!env.path(".cursor/rules/nested-braces.mdc").exists());
    let rule = env.read(".cursor/rules/long-lesson.mdc");
    let front: Vec<&str> = rule.lines().skip(2).take_while(|l| *l != "---").collect();
    assert_eq!(
        front,
        [
            "description: \"When a migration changes a column type, write the backfill: it runs \
             before the new code reads the column, and it must be idempotent #always\"",
            "globs: src/api/*.rs,src/db/*.rs,docs/*.md",
            "alwaysApply: false",
        ]
    );
    assert_eq!(
        front_matter(&rule)["description"],
        "When a migration changes a column type, write the backfill: it runs before the new \
         code reads the column, and it must be idempotent #always"
    );
}

#[test]
fn markers_inside_a_fenced_code_example_are_not_the_block() {
    let env = store();
    let example = "# Notes\n\nThe block looks like this:\n\n````markdown\n<!-- git-swarm:begin example -->\n```\nnested\n```\n<!-- git-swarm:end -->\n````\n\n~~~\n<!-- git-swarm:end -->\n~~~\n";
    env.write(
        "AGENTS.md",
        format!("{example}\n<!-- git-swarm:begin old -->\nstale line\n<!-- git-swarm:end -->\n\nAfter.\n"),
    );
    env.swarm(&["export", "agents-md"]).success();
    let text = env.read("AGENTS.md");
    assert!(text.starts_with(example), "{text}");
    assert!(!text.contains("stale line"), "{text}");
    assert!(
        text.ends_with("<!-- git-swarm:end -->\n\nAfter.\n"),
        "{text}"
    );
    assert!(text.contains("no-private-keys"), "{text}");

    // Only a fenced example: the real block is appended, the example kept.
    env.write("AGENTS.md", example);
    env.swarm(&["export", "agents-md"]).success();
    let text = env.read("AGENTS.md");
    assert!(text.starts_with(example), "{text}");
    assert_eq!(text.matches("<!-- git-swarm:begin").count(), 2, "{text}");
}

#[test]
fn a_byte_order_mark_does_not_hide_a_marker_and_crlf_files_stay_crlf() {
    let env = store();
    env.write(
        "AGENTS.md",
        "\u{feff}<!-- git-swarm:begin old -->\nstale line\n<!-- git-swarm:end -->\nAfter.\n",
    );
    env.swarm(&["export", "agents-md"]).success();
    let text = env.read("AGENTS.md");
    assert!(text.starts_with("\u{feff}<!-- git-swarm:begin"), "{text}");
    assert!(!text.contains("stale line"), "{text}");
    assert_eq!(text.matches("<!-- git-swarm:begin").count(), 1, "{text}");
    assert!(text.ends_with("<!-- git-swarm:end -->\nAfter.\n"), "{text}");

    // A CRLF file without a final newline: the block is appended in CRLF.
    env.write("AGENTS.md", "# Rules\r\n\r\nBe kind.");
    env.swarm(&["export", "agents-md"]).success();
    let text = env.read("AGENTS.md");
    assert!(
        text.starts_with("# Rules\r\n\r\nBe kind.\r\n\r\n<!-- git-swarm:begin"),
        "{text:?}"
    );
    assert!(!text.replace("\r\n", "").contains('\n'), "{text:?}");
    let again = env.swarm(&["export", "agents-md"]);
    again.success();
    assert_eq!(
        again.stdout,
        "Nothing to change: 1 file already up to date.\n"
    );
}

/// Lesson text is written by whoever opened a pull request: whatever it
/// holds (`<!--` with any number of dashes, `-->`, `--!>`, `<!-->`, a
/// marker split over two fields), no field can open or close an HTML
/// comment in the exported Markdown or make a line that reads as
/// git-swarm's begin or end marker.
#[test]
fn lesson_text_cannot_open_or_close_a_comment_or_forge_a_marker() {
    let env = repo_without_directives();
    directive(
        &env,
        "hidden-comment",
        r#"lesson = "Review every change <!--- and hide this from the rendered page"
rationale = "<!--- git-swarm:end --->"
priority = "critical"
applies_to_agents = ["coder"]
forbidden_actions = ["closing it here ---> visible again", "bang close --!> here", "<!-->empty comment", "<!---->", "<!- split over two items"]
required_actions = ["- git-swarm:end --->", "---!> and <!--- git-swarm:begin x --->"]
verification_checks = ["<!-- git-swarm:begin -->"]
verify = ["grep:<!---:docs/**"]"#,
    );
    directive(
        &env,
        "marker-lesson",
        r#"lesson = "<!-- git-swarm:end --> is a line of its own here"
rationale = "<!--- git-swarm:begin --->"
applies_to_agents = ["coder"]
required_actions = ["<!--"]"#,
    );
    for target in ["agents-md", "claude-rules", "cursor-rules"] {
        env.swarm(&["export", target]).success();
    }
    /// Lines that read as a marker, and whether any text outside them
    /// could open or close a comment.
    #[track_caller]
    fn assert_inert(name: &str, text: &str, markers: usize) {
        let marker_lines: Vec<&str> = text
            .lines()
            .filter(|l| {
                let l = l.trim();
                l.starts_with("<!-- git-swarm:begin") || l.starts_with("<!-- git-swarm:end")
            })
            .collect();
        assert_eq!(marker_lines.len(), markers, "{name}:\n{text}");
        let prose: String = text
            .lines()
            .filter(|l| !marker_lines.contains(l))
            .collect::<Vec<_>>()
            .join("\n");
        for opener_or_closer in ["<!", "-->", "--!>"] {
            assert!(
                !prose.contains(opener_or_closer),
                "{name} holds `{opener_or_closer}`:\n{text}"
            );
        }
    }
    let agents = env.read("AGENTS.md");
    assert_inert("AGENTS.md", &agents, 2);
    // Still readable: the characters are there, escaped as Markdown escapes them.
    assert!(
        agents.contains("- **Review every change \\<\\!--- and hide this from the rendered page**"),
        "{agents}"
    );
    assert!(
        agents.contains("  - Don't: closing it here ---\\> visible again\n"),
        "{agents}"
    );
    assert!(
        agents.contains("  - Don't: bang close --!\\> here\n"),
        "{agents}"
    );
    for name in ["hidden-comment", "marker-lesson"] {
        let claude = env.read(&format!(".claude/rules/{name}.md"));
        assert_inert(name, &claude, 0);
        let cursor = env.read(&format!(".cursor/rules/{name}.mdc"));
        assert_inert(name, &cursor, 0);
    }
    assert!(
        env.read(".claude/rules/hidden-comment.md")
            .contains("\n\\<\\!--- git-swarm:end ---\\>\n"),
        "the rationale stays a line of text"
    );
    // The block is still found and replaced as one on the next run.
    let again = env.swarm(&["export", "agents-md"]);
    again.success();
    assert_eq!(
        again.stdout,
        "Nothing to change: 1 file already up to date.\n"
    );
}
