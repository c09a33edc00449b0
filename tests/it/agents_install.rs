//! `git swarm agents install|uninstall|status`: git-swarm's hooks merged
//! into each harness's project config beside the user's own, idempotent,
//! taken out again to the byte; malformed configs and links refused with
//! nothing written.

use crate::common;

use common::TestEnv;
use serde_json::Value;

const HARNESSES: [&str; 5] = ["claude-code", "codex", "gemini", "cursor", "opencode"];

/// A config of the user's per harness: their own hooks and other keys, in
/// an indent of their own, so a test sees both kept.
fn user_config(harness: &str) -> (&'static str, &'static str) {
    match harness {
        "claude-code" => (
            ".claude/settings.json",
            r#"{
    "model": "opus",
    "permissions": {"allow": ["Bash(cargo test:*)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/guard.sh"}]}
        ],
        "Stop": [
            {"hooks": [{"type": "command", "command": "say done"}]}
        ]
    }
}
"#,
        ),
        "codex" => (
            ".codex/hooks.json",
            "{\n\t\"hooks\": {\n\t\t\"PostToolUse\": [\n\t\t\t{\"hooks\": [{\"type\": \"command\", \"command\": \"./log.sh\", \"timeout\": 5}]}\n\t\t]\n\t}\n}\n",
        ),
        "gemini" => (
            ".gemini/settings.json",
            r#"{
  // the user's comment stays
  "theme": "GitHub",
  "hooks": {
    "BeforeTool": [
      {"matcher": "write_file", "hooks": [{"type": "command", "command": "./check.sh"}]}
    ]
  },
  "mcpServers": {"docs": {"command": "docs-mcp"}}
}
"#,
        ),
        "cursor" => (
            ".cursor/hooks.json",
            r#"{
  "version": 1,
  "hooks": {
    "afterFileEdit": [{"command": "./format.sh"}],
    "preToolUse": [{"command": "./audit.sh", "matcher": "Shell"}]
  }
}
"#,
        ),
        _ => (
            ".opencode/plugins/mine.ts",
            "export const Mine = async () => ({})\n",
        ),
    }
}

fn install(env: &TestEnv, args: &[&str]) -> common::Run {
    let mut all = vec!["agents", "install"];
    all.extend_from_slice(args);
    env.swarm(&all)
}

fn uninstall(env: &TestEnv, args: &[&str]) -> common::Run {
    let mut all = vec!["agents", "uninstall"];
    all.extend_from_slice(args);
    env.swarm(&all)
}

/// Every file of the work tree, `.git` left out, folders with a `/`.
fn listing(env: &TestEnv) -> Vec<String> {
    fn walk(dir: &std::path::Path, base: &std::path::Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).expect("read dir").flatten() {
            let path = e.path();
            let rel = path
                .strip_prefix(base)
                .expect("inside")
                .display()
                .to_string();
            if rel == ".git" {
                continue;
            }
            if path.is_dir() {
                out.push(format!("{rel}/"));
                walk(&path, base, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(&env.root, &env.root, &mut out);
    out.sort();
    out
}

#[test]
fn each_harness_installs_beside_the_users_hooks_once_and_uninstalls_to_the_byte() {
    // A user's hook entry, written on one line.
    let theirs = regex::Regex::new(r#"\{"(?:matcher|hooks|command)"[^\n]*\}"#).expect("regex");
    for harness in HARNESSES {
        let env = TestEnv::new();
        let (rel, original) = user_config(harness);
        env.write(rel, original);

        install(&env, &[harness]).success();
        let written_path = if harness == "opencode" {
            ".opencode/plugins/git-swarm.ts"
        } else {
            rel
        };
        let written = env.read(written_path);
        insta::assert_snapshot!(format!("installed-{harness}"), written);
        // Every entry of the user's is still there, as it was written.
        let entries: Vec<&str> = theirs.find_iter(original).map(|m| m.as_str()).collect();
        assert_eq!(
            entries.is_empty(),
            harness == "opencode",
            "{harness}: {entries:?}"
        );
        for e in entries {
            assert!(written.contains(e), "{harness}: kept {e:?}");
        }
        assert_eq!(
            env.read(rel),
            if harness == "opencode" {
                original.to_owned()
            } else {
                written.clone()
            }
        );

        let again = install(&env, &[harness]);
        again.success();
        assert!(
            again
                .stdout
                .contains(&format!("{harness}: already installed; nothing changed.")),
            "{}",
            again.snapshot()
        );
        assert_eq!(
            env.read(written_path),
            written,
            "{harness}: a second install writes nothing"
        );

        let out = uninstall(&env, &[harness]);
        out.success();
        assert!(
            out.stdout
                .contains(&format!("{harness}: {written_path}: removed")),
            "{}",
            out.snapshot()
        );
        assert_eq!(
            env.read(rel),
            original,
            "{harness}: the user's file is back to the byte"
        );
        assert!(!env.exists(".opencode/plugins/git-swarm.ts"));
    }
}

#[test]
fn the_installed_output_names_the_files_and_the_trust_step() {
    let env = TestEnv::new();
    let out = install(&env, &["codex", "claude-code"]);
    insta::assert_snapshot!(out.success().snapshot());
}

#[test]
fn installing_into_no_config_then_uninstalling_leaves_nothing() {
    let env = TestEnv::new();
    let mut args = HARNESSES.to_vec();
    args.push("--mcp");
    install(&env, &args).success();
    insta::assert_snapshot!(listing(&env).join("\n"));
    for harness in HARNESSES {
        let status: Value = serde_json::from_str(
            &env.swarm(&["agents", "status", "--format", "json"])
                .success()
                .stdout,
        )
        .expect("json");
        let s = status["harnesses"]
            .as_array()
            .expect("harnesses")
            .iter()
            .find(|s| s["harness"] == harness)
            .expect("listed");
        assert_eq!(s["state"], "installed", "{harness}");
        assert_eq!(s["mcp_registered"], true, "{harness}");
    }
    uninstall(&env, &args).success();
    assert_eq!(
        listing(&env),
        Vec::<String>::new(),
        "no file and no folder left"
    );
}

#[test]
fn folders_shared_by_two_files_go_with_the_last_of_them() {
    let env = TestEnv::new();
    install(&env, &["cursor", "--mcp"]).success();
    uninstall(&env, &["cursor"]).success();
    assert_eq!(listing(&env), [".cursor/", ".cursor/mcp.json"]);
    uninstall(&env, &["cursor", "--mcp"]).success();
    assert_eq!(listing(&env), Vec::<String>::new());
}

#[test]
fn mcp_servers_are_registered_beside_the_users_and_removed_to_the_byte() {
    let env = TestEnv::new();
    let files = [
        (
            ".mcp.json",
            "{\n  \"mcpServers\": {\n    \"db\": {\"command\": \"db-mcp\"}\n  }\n}\n",
        ),
        (
            ".codex/config.toml",
            "# my codex settings\nmodel = \"o3\"\n\n[mcp_servers.db]\ncommand = \"db-mcp\" # local\n",
        ),
        (".gemini/settings.json", "{\n  \"theme\": \"GitHub\"\n}\n"),
        (".cursor/mcp.json", "{\"mcpServers\": {}}\n"),
        (
            "opencode.json",
            "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"model\": \"x/y\"\n}\n",
        ),
    ];
    for (rel, text) in files {
        env.write(rel, text);
    }
    let mut args = HARNESSES.to_vec();
    args.push("--mcp");
    install(&env, &args).success();
    let mut shown = String::new();
    for (rel, _) in files {
        shown.push_str(&format!("=== {rel}\n{}", env.read(rel)));
    }
    insta::assert_snapshot!(shown);
    // A second install changes no byte of any of them.
    install(&env, &args).success();
    let mut again = String::new();
    for (rel, _) in files {
        again.push_str(&format!("=== {rel}\n{}", env.read(rel)));
    }
    assert_eq!(again, shown);

    uninstall(&env, &args).success();
    for (rel, text) in files {
        assert_eq!(env.read(rel), text, "{rel} back to the byte");
    }
    assert!(!env.exists(".claude"));
}

#[test]
fn without_mcp_install_says_how_to_register_it() {
    let env = TestEnv::new();
    let out = install(&env, &["gemini"]);
    assert!(
        out.success()
            .stdout
            .contains("To register the MCP server too: git swarm agents install gemini --mcp"),
        "{}",
        out.snapshot()
    );
    assert!(!env.exists(".mcp.json"));
}

#[test]
fn uninstall_after_the_user_edited_the_file_takes_out_only_git_swarms_entries() {
    let env = TestEnv::new();
    let (rel, original) = user_config("claude-code");
    env.write(rel, original);
    install(&env, &["claude-code", "--mcp"]).success();
    // The user adds a key of their own after install.
    let edited = env.read(rel).replacen(
        "\"model\": \"opus\",",
        "\"model\": \"opus\",\n    \"env\": {\"RUST_LOG\": \"debug\"},",
        1,
    );
    env.write(rel, &edited);

    uninstall(&env, &["claude-code", "--mcp"]).success();
    let left = env.read(rel);
    assert!(!left.contains("git-swarm"), "{left}");
    let expected = original.replacen(
        "\"model\": \"opus\",",
        "\"model\": \"opus\",\n    \"env\": {\"RUST_LOG\": \"debug\"},",
        1,
    );
    assert_eq!(
        left, expected,
        "the user's edit kept, every other byte as before"
    );
    assert!(!env.exists(".mcp.json"), "the file install created is gone");
}

#[test]
fn a_users_own_git_swarm_mcp_entry_is_left_alone() {
    let env = TestEnv::new();
    let mine = "{\"mcpServers\": {\"git-swarm\": {\"command\": \"/opt/git-swarm\", \"args\": [\"mcp\"]}}}\n";
    env.write(".cursor/mcp.json", mine);
    install(&env, &["cursor", "--mcp"]).success();
    assert_eq!(env.read(".cursor/mcp.json"), mine);
    // Registered, but status does not pass it off as git-swarm's.
    let s = status_of(&env, "cursor");
    assert_eq!(s["mcp_registered"], true, "{s}");
    assert_eq!(s["mcp_foreign"], true, "{s}");
    let text = env.swarm(&["agents", "status"]);
    assert!(
        text.success().stdout.contains(
            "MCP server registered, but not git-swarm's entry (yours, left alone) (.cursor/mcp.json)"
        ),
        "{}",
        text.snapshot()
    );
    let out = uninstall(&env, &["cursor", "--mcp"]);
    out.success();
    assert!(
        out.stderr.contains("not the one install writes"),
        "{}",
        out.snapshot()
    );
    assert_eq!(env.read(".cursor/mcp.json"), mine);
}

#[test]
fn a_malformed_config_is_refused_at_its_line_and_column_and_nothing_is_written() {
    let env = TestEnv::new();
    let bad = "{\n  \"model\": \"opus\",\n}\n";
    env.write(".claude/settings.json", bad);
    let out = install(&env, &["codex", "claude-code"]);
    out.code(2);
    assert!(
        out.stderr
            .contains(".claude/settings.json:2:18: error: .claude/settings.json does not parse"),
        "{}",
        out.snapshot()
    );
    assert!(out.stderr.contains("hint: "), "{}", out.snapshot());
    assert_eq!(env.read(".claude/settings.json"), bad);
    assert!(
        !env.exists(".codex"),
        "no harness is installed when one config is bad"
    );

    let toml = "[mcp_servers\ncommand = 1\n";
    env.write(".codex/config.toml", toml);
    let out = install(&env, &["codex", "--mcp"]);
    out.code(2);
    assert!(
        out.stderr.contains(".codex/config.toml:1:13: error:"),
        "{}",
        out.snapshot()
    );
    assert_eq!(env.read(".codex/config.toml"), toml);
    assert!(!env.exists(".codex/hooks.json"));

    let status = env.swarm(&["agents", "status"]);
    assert!(
        status.success().stdout.contains("claude-code  unreadable:"),
        "{}",
        status.snapshot()
    );
}

#[test]
fn a_symlinked_config_or_folder_is_refused() {
    let env = TestEnv::new();
    let outside = env.tmp.path().join("outside.json");
    std::fs::write(&outside, "{}\n").expect("write");
    std::fs::create_dir_all(env.path(".claude")).expect("mkdir");
    std::os::unix::fs::symlink(&outside, env.path(".claude/settings.json")).expect("symlink");
    let out = install(&env, &["claude-code"]);
    out.code(2);
    assert!(
        out.stderr
            .contains(".claude/settings.json is a symbolic link"),
        "{}",
        out.snapshot()
    );
    assert_eq!(std::fs::read_to_string(&outside).expect("read"), "{}\n");

    let elsewhere = env.tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    std::os::unix::fs::symlink(&elsewhere, env.path(".cursor")).expect("symlink");
    let out = install(&env, &["cursor"]);
    out.code(2);
    assert!(
        out.stderr.contains(".cursor is a symbolic link"),
        "{}",
        out.snapshot()
    );
    assert_eq!(std::fs::read_dir(&elsewhere).expect("list").count(), 0);
}

#[test]
fn an_opencode_plugin_of_the_users_at_git_swarms_path_is_not_overwritten() {
    let env = TestEnv::new();
    let theirs = "export const Theirs = async () => ({})\n";
    env.write(".opencode/plugins/git-swarm.ts", theirs);
    let out = install(&env, &["opencode"]);
    out.code(2);
    assert!(
        out.stderr.contains("is not git-swarm's plugin"),
        "{}",
        out.snapshot()
    );
    let out = uninstall(&env, &["opencode"]);
    out.success();
    assert_eq!(env.read(".opencode/plugins/git-swarm.ts"), theirs);
}

#[test]
fn an_unknown_harness_is_a_usage_error_listing_the_known_ones() {
    let env = TestEnv::new();
    let out = install(&env, &["vscode"]);
    out.code(2);
    assert!(
        out.stderr
            .contains("[possible values: claude-code, codex, gemini, cursor, opencode]"),
        "{}",
        out.snapshot()
    );
}

#[test]
fn status_before_and_after_install_and_for_a_partial_install() {
    let env = TestEnv::new();
    let before = env.swarm(&["agents", "status"]);
    insta::assert_snapshot!("status-before", before.success().snapshot());

    install(&env, &["claude-code", "opencode", "--mcp"]).success();
    // A user took one of git-swarm's hooks out by hand.
    let settings = env.read(".claude/settings.json");
    let mut v: Value = serde_json::from_str(&settings).expect("json");
    v["hooks"]
        .as_object_mut()
        .expect("hooks")
        .remove("SubagentStop");
    env.write(
        ".claude/settings.json",
        serde_json::to_string_pretty(&v).expect("json"),
    );
    let after = env.swarm(&["agents", "status"]);
    insta::assert_snapshot!("status-after", after.success().snapshot());

    let json: Value = serde_json::from_str(
        &env.swarm(&["agents", "status", "--format", "json"])
            .success()
            .stdout,
    )
    .expect("json");
    let claude = &json["harnesses"][0];
    assert_eq!(claude["state"], "partial");
    assert_eq!(claude["missing"], serde_json::json!(["SubagentStop"]));
    assert_eq!(json["binary_on_path"], true);

    let off_path = env.swarm_with(
        &["agents", "status", "--format", "json"],
        &[("PATH", "/nonexistent")],
        None,
    );
    let json: Value = serde_json::from_str(&off_path.success().stdout).expect("json");
    assert_eq!(json["binary_on_path"], false);
}

#[test]
fn each_worktree_keeps_its_own_record() {
    let env = TestEnv::new();
    // A one-line array install spreads over lines: only the record gives
    // the bytes back, so the two worktrees' records must not mix.
    let (rel, original) = user_config("cursor");
    env.write(rel, original);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "settings"]);
    let linked = env.tmp.path().join("linked");
    env.git(&[
        "worktree",
        "add",
        "-q",
        linked.to_str().expect("utf-8"),
        "-b",
        "other",
    ]);
    let edited = original.replace("format.sh", "fmt.sh");
    std::fs::write(linked.join(rel), &edited).expect("write");

    env.swarm(&["agents", "install", "cursor"]).success();
    env.swarm_in(&linked, &["agents", "install", "cursor"])
        .success();
    env.swarm_in(&linked, &["agents", "uninstall", "cursor"])
        .success();
    assert_eq!(
        std::fs::read_to_string(linked.join(rel)).expect("read"),
        edited
    );
    env.swarm(&["agents", "uninstall", "cursor"]).success();
    assert_eq!(env.read(rel), original);
}

/// The harness entry of `agents status --format json`.
fn status_of(env: &TestEnv, harness: &str) -> Value {
    let status: Value = serde_json::from_str(
        &env.swarm(&["agents", "status", "--format", "json"])
            .success()
            .stdout,
    )
    .expect("json");
    status["harnesses"]
        .as_array()
        .expect("harnesses")
        .iter()
        .find(|s| s["harness"] == harness)
        .expect("listed")
        .clone()
}

/// Runs each of `commands` (`git-swarm ARGS`) at the same time; each must succeed.
fn all_at_once(env: &TestEnv, commands: &[&[&str]]) {
    let children: Vec<_> = commands
        .iter()
        .map(|args| {
            env.command(common::bin(), &env.root)
                .args(*args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    for (child, args) in children.into_iter().zip(commands) {
        let out = child.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn installs_and_uninstalls_run_at_the_same_time_lose_nothing() {
    for round in 0..6 {
        let env = TestEnv::new();
        all_at_once(
            &env,
            &[
                &["agents", "install", "gemini"],
                &["agents", "install", "gemini", "--mcp"],
                &["agents", "install", "cursor", "--mcp"],
                &["agents", "install", "cursor"],
                &["agents", "install", "codex", "--mcp"],
                &["agents", "install", "codex"],
            ],
        );
        for harness in ["gemini", "cursor", "codex"] {
            let s = status_of(&env, harness);
            assert_eq!(s["state"], "installed", "round {round}: {harness}: {s}");
            assert_eq!(s["mcp_registered"], true, "round {round}: {harness}: {s}");
        }
        all_at_once(
            &env,
            &[
                &["agents", "uninstall", "gemini", "--mcp"],
                &["agents", "uninstall", "cursor", "--mcp"],
                &["agents", "uninstall", "codex", "--mcp"],
            ],
        );
        assert_eq!(
            listing(&env),
            Vec::<String>::new(),
            "round {round}: no file and no folder left"
        );
    }
}

#[test]
fn a_codex_inline_mcp_servers_table_gets_the_entry_and_loses_it_again() {
    let env = TestEnv::new();
    let original = "model = \"o3\"\nmcp_servers = { db = { command = \"db-mcp\" } }\n";
    env.write(".codex/config.toml", original);
    install(&env, &["codex", "--mcp"]).success();
    let installed = env.read(".codex/config.toml");
    assert!(installed.contains("git-swarm"), "{installed}");
    assert_eq!(status_of(&env, "codex")["mcp_registered"], true);
    // The user edits the file, so the record cannot simply give the bytes back.
    env.write(
        ".codex/config.toml",
        installed.replace("model = \"o3\"", "model = \"o4\""),
    );
    let out = uninstall(&env, &["codex", "--mcp"]);
    out.success();
    assert!(
        out.stdout
            .contains("codex: .codex/config.toml: removed mcp"),
        "{}",
        out.snapshot()
    );
    assert_eq!(
        env.read(".codex/config.toml"),
        original.replace("o3", "o4"),
        "the entry taken out of the inline table, the rest as it was"
    );
    assert_eq!(status_of(&env, "codex")["mcp_registered"], false);
}

#[test]
fn a_crlf_codex_config_keeps_its_line_endings() {
    let env = TestEnv::new();
    let original = "# mine\r\nmodel = \"o3\"\r\n\r\n[mcp_servers.db]\r\ncommand = \"db-mcp\"\r\n";
    env.write(".codex/config.toml", original);
    install(&env, &["codex", "--mcp"]).success();
    let installed = env.read(".codex/config.toml");
    assert!(
        installed.contains("[mcp_servers.git-swarm]\r\n"),
        "{installed:?}"
    );
    assert_eq!(
        installed.matches('\n').count(),
        installed.matches("\r\n").count(),
        "no bare LF: {installed:?}"
    );
    uninstall(&env, &["codex", "--mcp"]).success();
    assert_eq!(env.read(".codex/config.toml"), original);

    // The JSON configs too.
    let gemini = "{\r\n  \"theme\": \"GitHub\"\r\n}\r\n";
    env.write(".gemini/settings.json", gemini);
    install(&env, &["gemini", "--mcp"]).success();
    let installed = env.read(".gemini/settings.json");
    assert!(installed.contains("\"AfterTool\""), "{installed:?}");
    assert_eq!(
        installed.matches('\n').count(),
        installed.matches("\r\n").count(),
        "no bare LF: {installed:?}"
    );
}

#[test]
fn malformed_gemini_cursor_and_opencode_configs_are_refused_at_their_line_and_column() {
    let cases = [
        (
            "gemini",
            ".gemini/settings.json",
            "{\n  // mine\n  \"theme\": \"GitHub\"\n  \"model\": \"pro\"\n}\n",
        ),
        (
            "cursor",
            ".cursor/hooks.json",
            "{\n  \"version\": 1,\n  \"hooks\": {,}\n}\n",
        ),
        (
            "opencode",
            "opencode.json",
            "{\n  \"model\": \"x/y\",\n  \"mcp\": [\n}\n",
        ),
    ];
    for (harness, rel, bad) in cases {
        let env = TestEnv::new();
        env.write(rel, bad);
        let out = install(&env, &[harness, "--mcp"]);
        out.code(2);
        insta::assert_snapshot!(format!("malformed-{harness}"), out.snapshot());
        assert!(out.stderr.contains("hint: "), "{}", out.snapshot());
        assert_eq!(env.read(rel), bad, "{harness}: not written");
        let mut files = listing(&env);
        files.retain(|f| !rel.starts_with(f.as_str()) && f != rel);
        assert_eq!(
            files,
            Vec::<String>::new(),
            "{harness}: nothing else written"
        );
    }
}

#[test]
fn a_key_twice_in_one_object_is_refused_at_the_second() {
    let env = TestEnv::new();
    let twice = "{\n  \"hooks\": {\"Stop\": []},\n  \"hooks\": {\"PreToolUse\": []}\n}\n";
    env.write(".claude/settings.json", twice);
    let out = install(&env, &["claude-code"]);
    out.code(2);
    assert!(
        out.stderr.contains(
            ".claude/settings.json:3:3: error: .claude/settings.json: the key `hooks` is there twice in one object"
        ),
        "{}",
        out.snapshot()
    );
    assert!(
        out.stderr.contains("hint: merge the two `hooks`"),
        "{}",
        out.snapshot()
    );
    assert_eq!(env.read(".claude/settings.json"), twice);
    assert_eq!(status_of(&env, "claude-code")["state"], "unreadable");

    // Two `git-swarm` servers, the harness keeping the user's: not ours.
    let servers = "{\"mcpServers\": {\n  \"git-swarm\": {\"command\": \"git\", \"args\": [\"swarm\", \"mcp\"]},\n  \"git-swarm\": {\"command\": \"/opt/mine\"}\n}}\n";
    env.write(".cursor/mcp.json", servers);
    let out = install(&env, &["cursor", "--mcp"]);
    out.code(2);
    assert!(
        out.stderr.contains(".cursor/mcp.json:3:3: error:"),
        "{}",
        out.snapshot()
    );
    let s = status_of(&env, "cursor");
    assert_eq!(s["mcp_registered"], false, "{s}");
    assert!(
        s["mcp_problem"]
            .as_str()
            .is_some_and(|p| p.contains("twice")),
        "{s}"
    );
    let out = uninstall(&env, &["cursor", "--mcp"]);
    out.code(2);
    assert_eq!(env.read(".cursor/mcp.json"), servers);
    assert!(!env.exists(".cursor/hooks.json"));
}

#[test]
fn a_byte_order_mark_is_read_past_and_kept() {
    let env = TestEnv::new();
    let claude = "\u{feff}{\n  \"model\": \"opus\"\n}\n";
    let codex = "\u{feff}model = \"o3\"\n";
    env.write(".claude/settings.json", claude);
    env.write(".codex/config.toml", codex);
    install(&env, &["claude-code", "codex", "--mcp"]).success();
    let settings = env.read(".claude/settings.json");
    assert!(settings.starts_with('\u{feff}'), "{settings:?}");
    assert_eq!(settings.matches('\u{feff}').count(), 1);
    let v: Value = serde_json::from_str(&settings['\u{feff}'.len_utf8()..]).expect("json");
    assert_eq!(v["model"], "opus");
    assert!(v["hooks"]["SessionStart"].is_array(), "{settings}");
    let config = env.read(".codex/config.toml");
    assert!(config.starts_with("\u{feff}model = \"o3\"\n"), "{config:?}");
    assert!(config.contains("[mcp_servers.git-swarm]"), "{config:?}");
    assert_eq!(status_of(&env, "claude-code")["state"], "installed");
    assert_eq!(status_of(&env, "codex")["mcp_registered"], true);

    // Edited since: uninstall takes the entries out one by one.
    env.write(".codex/config.toml", config.replace("o3", "o4"));
    uninstall(&env, &["claude-code", "codex", "--mcp"]).success();
    assert_eq!(env.read(".claude/settings.json"), claude);
    assert_eq!(env.read(".codex/config.toml"), codex.replace("o3", "o4"));
}

#[test]
fn a_config_too_large_or_of_the_wrong_kind_gets_a_hint_about_what_was_found() {
    let env = TestEnv::new();
    let mut big = String::from("{\"theme\": \"");
    big.push_str(&"x".repeat(4 * 1024 * 1024));
    big.push_str("\"}\n");
    env.write(".gemini/settings.json", &big);
    let out = install(&env, &["gemini"]);
    out.code(2);
    assert!(
        out.stderr
            .contains("hint: a harness config is a few kilobytes"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains(".swarm/"), "{}", out.stderr);

    std::fs::create_dir_all(env.path(".cursor")).expect("mkdir");
    common::mkfifo(&env.path(".cursor/hooks.json"));
    let out = install(&env, &["cursor"]);
    out.code(2);
    assert!(!out.stderr.contains("link"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains(".cursor/hooks.json is a FIFO (named pipe), not a regular file")
            && out
                .stderr
                .contains("hint: remove .cursor/hooks.json (or move it away)"),
        "{}",
        out.snapshot()
    );

    std::fs::create_dir_all(env.path(".claude/settings.json")).expect("mkdir");
    let out = install(&env, &["claude-code"]);
    out.code(2);
    assert!(!out.stderr.contains("link"), "{}", out.stderr);
    assert!(
        out.stderr.contains(".claude/settings.json is a folder, not a regular file")
            && out.stderr.contains("hint: .claude/settings.json should be a file the harness reads: move the folder away"),
        "{}",
        out.snapshot()
    );

    env.write(".codex", "not a folder\n");
    let out = install(&env, &["codex"]);
    out.code(2);
    assert!(!out.stderr.contains("link"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains(".codex is a regular file, not a folder")
            && out
                .stderr
                .contains("hint: the harness config goes inside a folder named .codex"),
        "{}",
        out.snapshot()
    );
}

#[test]
fn an_opencode_plugin_edited_since_install_is_kept_by_uninstall() {
    let env = TestEnv::new();
    install(&env, &["opencode"]).success();
    let rel = ".opencode/plugins/git-swarm.ts";
    let edited = format!("{}// my own tweak\n", env.read(rel));
    env.write(rel, &edited);
    let out = uninstall(&env, &["opencode"]);
    out.success();
    assert!(
        out.stderr.contains(&format!(
            "opencode: {rel}: {rel} was edited since git-swarm wrote it; left as it is"
        )) && out
            .stderr
            .contains("hint: git-swarm removes only what it wrote; edit or delete it by hand"),
        "{}",
        out.snapshot()
    );
    assert_eq!(
        out.stdout,
        format!("opencode: kept {rel} as it is; nothing changed.\n"),
        "{}",
        out.snapshot()
    );
    assert_eq!(env.read(rel), edited);

    // Status says what it is: not an older plugin to install again.
    let s = status_of(&env, "opencode");
    assert_eq!(
        (&s["state"], &s["missing"]),
        (&serde_json::json!("edited"), &serde_json::json!([])),
        "{s}"
    );
    let text = env.swarm(&["agents", "status"]).success().stdout.clone();
    assert!(
        text.contains(&format!("opencode     edited since git-swarm wrote it (yours now: install and uninstall leave it alone; delete it, then install, for git-swarm's current plugin) ({rel})")),
        "{text}"
    );

    // Install keeps the edit too, and says how to get git-swarm's plugin.
    let out = install(&env, &["opencode"]);
    out.success();
    assert!(
        out.stderr.contains(&format!(
            "opencode: {rel}: {rel} was edited since git-swarm wrote it; left as it is"
        )) && out.stderr.contains(
            "hint: git-swarm does not write over what it did not write: delete it, then install again, to get git-swarm's current one"
        ),
        "{}",
        out.snapshot()
    );
    assert!(
        out.stdout.starts_with(&format!(
            "opencode: kept {rel} as it is; nothing changed.\n"
        )),
        "{}",
        out.snapshot()
    );
    assert_eq!(env.read(rel), edited);
    std::fs::remove_file(env.path(rel)).expect("rm");
    install(&env, &["opencode"]).success();
    assert_eq!(status_of(&env, "opencode")["state"], "installed");
}

#[test]
fn an_older_plugin_install_wrote_is_replaced_and_status_says_to_install_again() {
    let env = TestEnv::new();
    install(&env, &["opencode"]).success();
    let rel = ".opencode/plugins/git-swarm.ts";
    let current = env.read(rel);
    // What an older git-swarm wrote, as its record says.
    let older = current.replacen("10_000", "5_000", 1);
    assert_ne!(older, current, "the plugin has a 10 s timeout to change");
    let records = env.root.join(".git/swarm/agents/installed/main");
    let record = std::fs::read_dir(&records)
        .expect("records")
        .flatten()
        .map(|e| e.path())
        .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("git-swarm:generated")))
        .expect("the plugin's record");
    let mut r: Value = serde_json::from_str(&std::fs::read_to_string(&record).expect("read"))
        .expect("record json");
    r["written"] = serde_json::json!(older);
    std::fs::write(&record, r.to_string()).expect("write");
    env.write(rel, &older);
    assert_eq!(
        status_of(&env, "opencode")["missing"],
        serde_json::json!(["plugin (an older version: install again)"])
    );
    let out = install(&env, &["opencode"]);
    out.success();
    assert!(
        out.stdout
            .contains(&format!("opencode: {rel}: added plugin")),
        "{}",
        out.snapshot()
    );
    assert_eq!(env.read(rel), current);
}

#[test]
fn an_opencode_jsonc_config_is_the_one_edited() {
    let env = TestEnv::new();
    let original = "{\n  // mine\n  \"model\": \"x/y\",\n}\n";
    env.write("opencode.jsonc", original);
    let out = install(&env, &["opencode", "--mcp"]);
    out.success();
    assert!(
        out.stdout.contains("opencode: opencode.jsonc: added mcp"),
        "{}",
        out.snapshot()
    );
    assert!(!env.exists("opencode.json"), "no second config");
    let written = env.read("opencode.jsonc");
    assert!(
        written.contains("// mine") && written.contains("\"git-swarm\""),
        "{written}"
    );
    let s = status_of(&env, "opencode");
    assert_eq!(s["mcp_file"], "opencode.jsonc", "{s}");
    assert_eq!(s["mcp_registered"], true, "{s}");
    assert_eq!(s["mcp_foreign"], false, "{s}");
    uninstall(&env, &["opencode", "--mcp"]).success();
    assert_eq!(env.read("opencode.jsonc"), original);
    assert!(!env.exists("opencode.json"));
    assert_eq!(status_of(&env, "opencode")["mcp_registered"], false);
}

#[test]
fn status_calls_unreadable_each_hooks_shape_install_refuses_with_the_same_reason() {
    let env = TestEnv::new();
    for (config, reason) in [
        ("{\"hooks\": []}\n", "`hooks` is not an object"),
        ("{\"hooks\": null}\n", "`hooks` is not an object"),
        (
            "{\"hooks\": {\"SessionStart\": {}}}\n",
            "`hooks.SessionStart` is not an array",
        ),
    ] {
        env.write(".claude/settings.json", config);
        let out = install(&env, &["claude-code"]);
        out.code(2);
        assert!(out.stderr.contains(reason), "{}", out.snapshot());
        assert_eq!(env.read(".claude/settings.json"), config);
        let s = status_of(&env, "claude-code");
        assert_eq!(s["state"], "unreadable", "{config}: {s}");
        assert!(
            s["problem"].as_str().is_some_and(|p| p.contains(reason)),
            "{config}: {s}"
        );
        let text = env.swarm(&["agents", "status"]).success().stdout.clone();
        assert!(
            text.contains("claude-code  unreadable: ") && text.contains(reason),
            "{text}"
        );
    }
}

#[test]
fn install_without_a_swarm_folder_warns_and_still_installs() {
    let env = TestEnv::new();
    let out = install(&env, &["claude-code"]);
    out.success();
    assert!(
        out.stderr.contains(
            "warning: this repository has no .swarm/: the hooks installed do nothing until it has one\nhint: run `git swarm init`"
        ),
        "{}",
        out.snapshot()
    );
    assert_eq!(status_of(&env, "claude-code")["state"], "installed");

    let env = TestEnv::initialised();
    let out = install(&env, &["claude-code"]);
    out.success();
    assert!(!out.stderr.contains(".swarm/"), "{}", out.snapshot());
}

#[test]
fn the_trust_steps_printed_are_for_what_was_written() {
    let env = TestEnv::initialised();
    for h in ["claude-code", "codex", "cursor"] {
        let out = install(&env, &[h]);
        let said = out.success().stdout.clone();
        let step = said
            .lines()
            .find(|l| l.starts_with(&format!("{h}: ")) && !l.contains(": added "))
            .unwrap_or_else(|| panic!("{said}"));
        for mcp_word in [".mcp.json", "MCP", "config.toml"] {
            assert!(!step.contains(mcp_word), "{step}");
        }
        assert_eq!(status_of(&env, h)["trust_step"], step[h.len() + 2..]);
    }
    let out = install(&env, &["claude-code", "--mcp"]);
    assert!(
        out.success().stdout.contains(
            "claude-code: Claude Code runs project hooks from .claude/settings.json once the folder is trusted; a project MCP server in .mcp.json waits for your approval"
        ),
        "{}",
        out.snapshot()
    );
    let s = status_of(&env, "claude-code");
    assert!(
        s["trust_step"]
            .as_str()
            .is_some_and(|t| t.contains(".mcp.json")),
        "{s}"
    );
}

/// A stand-in harness program on PATH that says it is `version`.
fn fake_program(env: &TestEnv, name: &str, version: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = env.tmp.path().join(format!("fake-bin-{version}"));
    std::fs::create_dir_all(&dir).expect("fake bin dir");
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\necho '{version}'\n")).expect("write fake");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

/// `git swarm agents ARGS` with `dir` first on PATH.
fn agents_with_path(env: &TestEnv, dir: &std::path::Path, args: &[&str]) -> common::Run {
    let path = format!(
        "{}:{}:{}",
        dir.display(),
        common::bin().parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut all = vec!["agents"];
    all.extend_from_slice(args);
    env.swarm_with(&all, &[("PATH", &path)], None)
}

fn claude_commands(env: &TestEnv) -> Vec<Value> {
    let v: Value = serde_json::from_str(&env.read(".claude/settings.json")).expect("json");
    v["hooks"]
        .as_object()
        .expect("hooks")
        .values()
        .flat_map(|a| a.as_array().expect("array").clone())
        .flat_map(|e| e["hooks"].as_array().expect("handlers").clone())
        .collect()
}

/// Claude Code before 2.1.139 ignores a hook's `args` and runs a bare
/// `git-swarm` (usage, exit 2: a blocking error on every spawn), so install
/// writes the exec form only for a Claude Code it found and knows runs it.
#[test]
fn claude_code_hooks_take_the_form_its_version_runs() {
    let env = TestEnv::initialised();
    let old = fake_program(&env, "claude", "2.1.100 (Claude Code)");
    let run = agents_with_path(&env, &old, &["install", "claude-code"]);
    run.success();
    assert!(
        run.stderr.contains("hooks in the shell form, which every version runs: Claude Code 2.1.100 is older than 2.1.139"),
        "{}",
        run.snapshot()
    );
    for h in claude_commands(&env) {
        assert!(h.get("args").is_none(), "{h}");
        let command = h["command"].as_str().expect("command");
        assert!(
            command.starts_with("git-swarm-agent-hook claude-code ")
                && command.ends_with(" || true"),
            "{command}"
        );
    }

    // Claude Code updated: install again moves every hook to the exec form,
    // and uninstall still gives back the bytes from before the first install.
    let new = fake_program(&env, "claude", "2.1.332 (Claude Code)");
    let run = agents_with_path(&env, &new, &["install", "claude-code"]);
    run.success();
    assert!(
        run.stdout.contains("SessionStart (updated)"),
        "{}",
        run.snapshot()
    );
    let handlers = claude_commands(&env);
    assert_eq!(handlers.len(), 6);
    for h in &handlers {
        assert_eq!(h["command"], "git-swarm-agent-hook", "{h}");
        assert_eq!(h["args"][0], "claude-code", "{h}");
    }
    let status = agents_with_path(&env, &new, &["status", "--format", "json"]);
    let v: Value = serde_json::from_str(&status.stdout).expect("status json");
    let claude = &v["harnesses"][0];
    assert_eq!(claude["state"], "installed");
    assert_eq!(claude["form"], "exec");
    assert_eq!(claude["version"], "2.1.332");
    assert_eq!(claude["support"], "tested");
    assert_eq!(claude["todo"], serde_json::json!([]));

    // The exec form, then an old Claude Code: status says what to do.
    let status = agents_with_path(&env, &old, &["status"]);
    assert!(
        status
            .stdout
            .contains("harness: claude 2.1.100 (older than the version tested)")
            && status.stdout.contains("ignores the hooks' `args`"),
        "{}",
        status.snapshot()
    );

    agents_with_path(&env, &new, &["uninstall", "claude-code"]).success();
    assert!(!env.root.join(".claude").exists(), "{:?}", listing(&env));
}

/// Entries an older git-swarm wrote (without the `|| true` that keeps a
/// missing binary from failing the hook) are shown as such and replaced by
/// install; the user's own entries stay, and uninstall is still exact.
#[test]
fn an_older_git_swarm_s_entries_are_reported_and_updated() {
    let env = TestEnv::initialised();
    let original = r#"{
  "theme": "GitHub",
  "hooks": {
    "SessionStart": [
      {"hooks": [{"type": "command", "command": "./mine.sh"}]},
      {"hooks": [{"type": "command", "name": "git-swarm session-start", "command": "git-swarm hook agent gemini session-start", "timeout": 10000}]}
    ],
    "AfterTool": [
      {"hooks": [{"type": "command", "name": "git-swarm post-tool-use", "command": "git-swarm hook agent gemini post-tool-use", "timeout": 10000}]}
    ]
  }
}
"#;
    env.write(".gemini/settings.json", original);
    let status = env.swarm(&["agents", "status", "--format", "json"]);
    let v: Value = serde_json::from_str(&status.stdout).expect("json");
    let gemini = &v["harnesses"][2];
    assert_eq!(gemini["state"], "partial", "{gemini}");
    // Both BeforeTool entries (subagent-start and pre-tool-use) are missing.
    assert_eq!(
        gemini["missing"],
        serde_json::json!([
            "BeforeTool (subagent-start)",
            "BeforeTool (pre-tool-use)",
            "entries of an older git-swarm (install again)"
        ])
    );

    install(&env, &["gemini"]).success();
    let text = env.read(".gemini/settings.json");
    assert!(
        text.contains("./mine.sh") && text.contains("\"theme\": \"GitHub\""),
        "{text}"
    );
    // SessionStart, BeforeTool twice (subagent-start, pre-tool-use), AfterTool.
    assert_eq!(
        text.matches("git-swarm-agent-hook gemini").count(),
        4,
        "{text}"
    );
    assert_eq!(text.matches(" || true").count(), 4, "{text}");
    let v: Value =
        serde_json::from_str(&env.swarm(&["agents", "status", "--format", "json"]).stdout)
            .expect("json");
    assert_eq!(v["harnesses"][2]["state"], "installed");
    let again = install(&env, &["gemini"]);
    assert!(
        again.stdout.contains("already installed"),
        "{}",
        again.snapshot()
    );
}

/// The shell command each harness runs exits 0 when `git-swarm` is missing
/// from its PATH or fails: Gemini CLI denies a tool call on any other exit
/// (its message replacing the tool's result), and Codex and Cursor report
/// exit 127 as a failed hook.
#[test]
fn the_shell_command_exits_0_when_git_swarm_is_missing_or_fails() {
    let env = TestEnv::initialised();
    install(&env, &["gemini", "codex", "cursor"]).success();
    let failing = env.tmp.path().join("failing-bin");
    std::fs::create_dir_all(&failing).expect("dir");
    {
        use std::os::unix::fs::PermissionsExt;
        let p = failing.join("git-swarm");
        std::fs::write(&p, "#!/bin/sh\necho 'partial' >&2\nexit 3\n").expect("write");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    for (rel, pointer) in [
        (
            ".gemini/settings.json",
            "/hooks/AfterTool/0/hooks/0/command",
        ),
        (".codex/hooks.json", "/hooks/PostToolUse/0/hooks/0/command"),
        (".cursor/hooks.json", "/hooks/postToolUse/0/command"),
    ] {
        let v: Value = serde_json::from_str(&env.read(rel)).expect("json");
        let command = v.pointer(pointer).and_then(Value::as_str).expect("command");
        for path in [
            "/usr/bin:/bin".to_owned(),
            format!("{}:/usr/bin:/bin", failing.display()),
        ] {
            let out = std::process::Command::new("/bin/bash")
                .args(["-c", command])
                .current_dir(&env.root)
                .env_clear()
                .env("PATH", &path)
                .stdin(std::process::Stdio::null())
                .output()
                .expect("bash");
            assert_eq!(
                out.status.code(),
                Some(0),
                "{rel}: `{command}` with PATH={path}"
            );
            assert!(out.stdout.is_empty(), "{rel}: nothing on stdout");
        }
    }
}

/// Gemini CLI runs project hooks only in a folder it trusts, and says
/// nothing headless (`gemini -p` exits 55): status reads its trusted
/// folders file and says whether this one is, and what to do.
#[test]
fn status_reads_gemini_s_trusted_folders() {
    let env = TestEnv::initialised();
    install(&env, &["gemini"]).success();
    let gemini_status = |env: &TestEnv| -> Value {
        let run = env.swarm(&["agents", "status", "--format", "json"]);
        let v: Value = serde_json::from_str(&run.stdout).expect("json");
        v["harnesses"][2].clone()
    };
    let g = gemini_status(&env);
    assert_eq!(g["trust"]["state"], "not_trusted", "{g}");
    assert!(
        g["todo"].to_string().contains("TRUST_FOLDER"),
        "the to-do says how: {g}"
    );
    let root = std::fs::canonicalize(&env.root).expect("canonical root");
    let file = env.home().join(".gemini/trustedFolders.json");
    std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
    let parent = root.parent().expect("parent").display().to_string();
    std::fs::write(
        &file,
        format!(
            "{{\n  // the user's rules\n  {:?}: \"TRUST_FOLDER\"\n}}\n",
            parent
        ),
    )
    .expect("write trusted folders");
    let g = gemini_status(&env);
    assert_eq!(g["trust"]["state"], "trusted", "{g}");
    std::fs::write(
        &file,
        format!(
            "{{{:?}: \"TRUST_FOLDER\", {:?}: \"DO_NOT_TRUST\"}}",
            parent,
            root.display().to_string()
        ),
    )
    .expect("write trusted folders");
    let g = gemini_status(&env);
    assert_eq!(
        g["trust"]["state"], "not_trusted",
        "the longest rule wins: {g}"
    );
    let text = env.swarm(&["agents", "status"]).stdout;
    assert!(
        text.contains("DO_NOT_TRUST: Gemini CLI runs no project hook here"),
        "{text}"
    );
}

/// Codex keys a hook's trust on its place (`<event>:<group>:<handler>`):
/// replacing an older git-swarm's entry must leave every other hook where
/// it was, or Codex skips the user's own hook without a word.
#[test]
fn updating_git_swarm_s_entries_keeps_the_users_hooks_in_place() {
    let env = TestEnv::initialised();
    let original = r#"{
  "hooks": {
    "PreToolUse": [
      {"matcher": "spawn_agent", "hooks": [{"type": "command", "command": "git-swarm hook agent codex pre-tool-use", "timeout": 10}]},
      {"matcher": "shell", "hooks": [{"type": "command", "command": "./my-guard.sh", "timeout": 5}]}
    ]
  }
}
"#;
    env.write(".codex/hooks.json", original);
    let run = install(&env, &["codex"]);
    run.success();
    assert!(
        run.stdout.contains("PreToolUse (updated)"),
        "{}",
        run.snapshot()
    );
    let v: Value = serde_json::from_str(&env.read(".codex/hooks.json")).expect("json");
    let pre = v["hooks"]["PreToolUse"].as_array().expect("PreToolUse");
    assert_eq!(pre.len(), 2, "{v:#}");
    assert_eq!(
        pre[0]["hooks"][0]["command"],
        "git-swarm-agent-hook codex pre-tool-use || true"
    );
    // The older matcher too, where it stands (issue 38: multi-agent v2's
    // `collaborationspawn_agent`; issue 40: the tools a directive can
    // match); the user's own is left as it was.
    assert_eq!(
        pre[0]["matcher"], "spawn_agent|collaborationspawn_agent|Bash|apply_patch",
        "{v:#}"
    );
    assert_eq!(pre[1]["matcher"], "shell", "{v:#}");
    assert_eq!(pre[1]["hooks"][0]["command"], "./my-guard.sh", "{v:#}");
    // Uninstall gives back the bytes from before this install.
    uninstall(&env, &["codex"]).success();
    assert_eq!(env.read(".codex/hooks.json"), original);
}
