//! The library decides, the command line renders: no file under `src/`
//! outside `src/cli/` and `src/main.rs` may name clap, print, or read the
//! process environment. Checked on the source's tokens, so comments and
//! string literals (a test's input) do not count, and neither does code
//! under `#[cfg(test)]`.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

#[test]
fn the_library_neither_prints_nor_parses_arguments_nor_reads_the_environment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for path in rust_files(&root.join("src")) {
        let rel = path
            .strip_prefix(root)
            .expect("under the crate")
            .to_string_lossy()
            .replace('\\', "/");
        if rel.starts_with("src/cli/") || rel == "src/main.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable source");
        let tokens = TokenStream::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e:?}"));
        let mut what = Vec::new();
        offences(tokens, &mut what);
        what.sort_unstable();
        what.dedup();
        found.extend(what.into_iter().map(|w| format!("{rel}: {w}")));
    }
    assert!(
        found.is_empty(),
        "the library must not use clap, print or read the environment (the CLI does): {found:#?}"
    );
}

#[test]
fn comments_strings_and_tests_are_not_offences() {
    let text = r#"
        // println!("a comment");
        /// std::env::var in a doc comment
        fn f() -> &'static str { "eprintln!(\"a string\") clap" }
        #[cfg(test)]
        mod tests { fn g() { println!("a test may print"); } }
        fn h() { let _ = std::env::var_os("HOME"); eprintln!("x"); }
        #[derive(clap::Args)] struct A;
    "#;
    let mut what = Vec::new();
    offences(TokenStream::from_str(text).expect("tokens"), &mut what);
    assert_eq!(what, ["std::env::var", "eprintln!", "clap"]);
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("readable folder") {
        let path = entry.expect("folder entry").path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// What `tokens` names that the library must not, in order.
fn offences(tokens: TokenStream, out: &mut Vec<String>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Punct(p) if p.as_char() == '#' && is_cfg_test(tokens.get(i + 1)) => {
                i = end_of_item(&tokens, i + 2);
                continue;
            }
            TokenTree::Group(g) => offences(g.stream(), out),
            TokenTree::Ident(id) => {
                let name = id.to_string();
                let bang =
                    matches!(tokens.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!');
                if name == "clap" {
                    out.push("clap".into());
                } else if bang
                    && matches!(
                        name.as_str(),
                        "println" | "eprintln" | "print" | "eprint" | "dbg"
                    )
                {
                    out.push(format!("{name}!"));
                } else if name == "env" && is_env_read(&tokens[i + 1..]) {
                    out.push("std::env::var".into());
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// `[cfg(test)]`, the rest of an attribute.
fn is_cfg_test(t: Option<&TokenTree>) -> bool {
    let Some(TokenTree::Group(g)) = t else {
        return false;
    };
    g.delimiter() == Delimiter::Bracket && g.stream().to_string().replace(' ', "") == "cfg(test)"
}

/// `::var`, `::var_os`, `::vars` or `::vars_os` after `env`.
fn is_env_read(rest: &[TokenTree]) -> bool {
    match rest {
        [
            TokenTree::Punct(a),
            TokenTree::Punct(b),
            TokenTree::Ident(f),
            ..,
        ] => {
            a.as_char() == ':'
                && b.as_char() == ':'
                && matches!(
                    f.to_string().as_str(),
                    "var" | "var_os" | "vars" | "vars_os"
                )
        }
        _ => false,
    }
}

/// The index after the item that starts at `i` (after its attributes): past
/// its body in braces, or its `;`.
fn end_of_item(tokens: &[TokenTree], mut i: usize) -> usize {
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => return i + 1,
            TokenTree::Punct(p) if p.as_char() == ';' => return i + 1,
            _ => i += 1,
        }
    }
    i
}
