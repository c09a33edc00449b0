//! The library decides, the command line renders: no file under `src/`
//! outside `src/cli/` and `src/main.rs` may name clap, print, or read the
//! process environment. And modules depend on each other one way: no two
//! modules use each other, directly or through others. Checked on the
//! source's tokens, so comments and string literals (a test's input) do not
//! count, and neither does code under `#[cfg(test)]`.

use std::collections::{BTreeMap, BTreeSet};
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

/// The Rust files under `dir`, but for modules only tests build (declared
/// `#[cfg(test)] mod tests;`, their code in a file of its own).
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let files = all_rust_files(dir);
    let tests: Vec<PathBuf> = files.iter().flat_map(|f| test_module_folders(f)).collect();
    files
        .into_iter()
        .filter(|f| {
            !tests
                .iter()
                .any(|t| f.with_extension("") == *t || f.starts_with(t))
        })
        .collect()
}

/// Where the modules `file` declares with `#[cfg(test)] mod name;` live:
/// `name.rs` (without its extension) or the folder `name/`, beside `file`
/// for a `mod.rs` or a crate root, else in the folder named as `file`.
fn test_module_folders(file: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(file).expect("readable source");
    let tokens: Vec<TokenTree> = TokenStream::from_str(&text)
        .unwrap_or_else(|e| panic!("{file:?}: {e:?}"))
        .into_iter()
        .collect();
    let stem = file.file_stem().expect("a file name");
    let dir = if ["mod", "lib", "main"].iter().any(|s| stem == *s) {
        file.parent().expect("in a folder").to_path_buf()
    } else {
        file.with_extension("")
    };
    tokens
        .windows(5)
        .filter_map(|w| match w {
            [
                TokenTree::Punct(hash),
                attribute,
                TokenTree::Ident(m),
                TokenTree::Ident(name),
                TokenTree::Punct(semi),
            ] if hash.as_char() == '#'
                && is_cfg_test(Some(attribute))
                && m == "mod"
                && semi.as_char() == ';' =>
            {
                Some(dir.join(name.to_string()))
            }
            _ => None,
        })
        .collect()
}

fn all_rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("readable folder") {
        let path = entry.expect("folder entry").path();
        if path.is_dir() {
            out.extend(all_rust_files(&path));
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

#[test]
fn no_two_modules_depend_on_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = BTreeMap::new();
    for path in rust_files(&root) {
        let rel = path.strip_prefix(&root).expect("under src/");
        let Some(module) = module_of(rel) else {
            continue;
        };
        let text = std::fs::read_to_string(&path).expect("readable source");
        let tokens = TokenStream::from_str(&text).unwrap_or_else(|e| panic!("{rel:?}: {e:?}"));
        sources.insert(module, tokens);
    }
    let graph = module_graph(sources);
    let cycles = cycles(&graph);
    assert!(
        cycles.is_empty(),
        "modules that depend on each other (move what they share into a module both use): {cycles:#?}"
    );
}

#[test]
fn the_module_graph_follows_paths_through_use_trees_and_super() {
    let source = |text: &str| TokenStream::from_str(text).expect("tokens");
    let graph = module_graph(BTreeMap::from([
        (
            "a".to_string(),
            source(
                "use crate::b::{self, Thing as Other}; \
                 use super::*; \
                 pub(super) fn f() { crate::a::inner::g(); } \
                 mod local { fn h() { super::super::c::d::E::new(); } } \
                 #[cfg(test)] mod tests { use crate::e::F; }",
            ),
        ),
        ("a::inner".to_string(), source("use super::super::b::X;")),
        (
            "b".to_string(),
            source("fn f() -> crate::c::Missing { todo!() }"),
        ),
        (
            "c".to_string(),
            source("// crate::a::f()\nconst S: &str = \"crate::a\";"),
        ),
        ("c::d".to_string(), source("use crate::{a::inner::Y, e};")),
        ("e".to_string(), source("fn f() { crate::a::local::h() }")),
    ]));
    let edges = |m: &str| graph[m].iter().map(String::as_str).collect::<Vec<_>>();
    assert_eq!(edges("a"), ["b", "c::d"]);
    assert_eq!(edges("a::inner"), ["b"]);
    assert_eq!(edges("b"), ["c"]);
    assert!(edges("c").is_empty());
    assert_eq!(edges("c::d"), ["a::inner", "e"]);
    assert_eq!(edges("e"), ["a"]);
    assert_eq!(
        cycles(&graph),
        ["a -> c::d -> e -> a (modules in the cycles: a, c::d, e)"]
    );
}

/// The module a file under `src/` is (`a/b.rs` and `a/b/mod.rs` are
/// `a::b`); `None` for a crate root.
fn module_of(rel: &Path) -> Option<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    let module = parts.join("::");
    (module != "lib" && module != "main").then_some(module)
}

/// Which modules each module's code (not its tests) names through `crate::`
/// or `super::` paths. A path leads to the longest module it starts with;
/// a module naming its own submodules or ancestors does not count, since
/// that is how a module and its parts are built.
fn module_graph(sources: BTreeMap<String, TokenStream>) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = sources.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (module, tokens) in sources {
        let scope: Vec<String> = module.split("::").map(String::from).collect();
        let mut paths = Vec::new();
        paths_in(tokens, &scope, &mut paths);
        let edges = paths
            .iter()
            .filter_map(|path| {
                (1..=path.len())
                    .rev()
                    .map(|n| path[..n].join("::"))
                    .find(|prefix| modules.contains(prefix))
            })
            .filter(|to| {
                *to != module
                    && !module.starts_with(&format!("{to}::"))
                    && !to.starts_with(&format!("{module}::"))
            })
            .collect();
        graph.insert(module, edges);
    }
    graph
}

/// The absolute paths (from the crate root) named by `crate::` and
/// `super::` paths in `tokens`, code in `scope` (a module's path, with any
/// inline `mod` it is in); `use` trees in braces are expanded.
fn paths_in(tokens: TokenStream, scope: &[String], out: &mut Vec<Vec<String>>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Punct(p) if p.as_char() == '#' && is_cfg_test(tokens.get(i + 1)) => {
                i = end_of_item(&tokens, i + 2);
                continue;
            }
            TokenTree::Ident(id) if id == "mod" => {
                if let (Some(TokenTree::Ident(name)), Some(TokenTree::Group(body))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                {
                    let mut inner = scope.to_vec();
                    inner.push(name.to_string());
                    paths_in(body.stream(), &inner, out);
                    i += 3;
                    continue;
                }
            }
            TokenTree::Ident(id)
                if (id == "crate" || id == "super") && !after_colons(&tokens, i) =>
            {
                let base = if id == "crate" {
                    Vec::new()
                } else {
                    scope[..scope.len().saturating_sub(1)].to_vec()
                };
                i = path_at(&tokens, i + 1, base, out);
                continue;
            }
            TokenTree::Group(g) => paths_in(g.stream(), scope, out),
            _ => {}
        }
        i += 1;
    }
}

/// Whether the token before `i` is `::` (so `i` is inside a path).
fn after_colons(tokens: &[TokenTree], i: usize) -> bool {
    i >= 2 && is_colons(&tokens[i - 2..i])
}

fn is_colons(t: &[TokenTree]) -> bool {
    matches!(t, [TokenTree::Punct(a), TokenTree::Punct(b), ..] if a.as_char() == ':' && b.as_char() == ':')
}

/// Reads the rest of a path after its first segment (`base` so far) from
/// `i`: `::name`s, `::super`s and a `::{…}` use tree; adds what it names to
/// `out`, and returns the index after it.
fn path_at(
    tokens: &[TokenTree],
    mut i: usize,
    mut base: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    while is_colons(&tokens[i.min(tokens.len())..]) {
        match tokens.get(i + 2) {
            Some(TokenTree::Ident(id)) if id == "super" => {
                base.pop();
            }
            Some(TokenTree::Ident(id)) if id != "self" => base.push(id.to_string()),
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                use_tree(g.stream(), &base, out);
                return i + 3;
            }
            _ => break,
        }
        i += 3;
    }
    out.push(base);
    i
}

/// The branches of a `{…}` use tree under `base`: `self`, `name`,
/// `name::…`, `name as other`, `*`.
fn use_tree(tokens: TokenStream, base: &[String], out: &mut Vec<Vec<String>>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for branch in tokens.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ',')) {
        let mut path = base.to_vec();
        match branch.first() {
            Some(TokenTree::Ident(id)) if id == "self" => {}
            Some(TokenTree::Ident(id)) => {
                path.push(id.to_string());
                path_at(branch, 1, path, out);
                continue;
            }
            Some(TokenTree::Group(g)) => {
                use_tree(g.stream(), &path, out);
                continue;
            }
            _ => {}
        }
        out.push(path);
    }
}

/// Each group of modules that depend on each other (a strongly connected
/// component of more than one module, by Tarjan's algorithm), named by its
/// shortest cycle through its first module.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    struct Tarjan<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, (usize, usize)>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        components: Vec<BTreeSet<&'a str>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.index[v].1.min(self.index[w].1);
                    self.index.get_mut(v).expect("visited").1 = low;
                } else if self.on_stack.contains(w) {
                    let low = self.index[v].1.min(self.index[w].0);
                    self.index.get_mut(v).expect("visited").1 = low;
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let mut component = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.insert(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.components.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for v in graph.keys() {
        if !tarjan.index.contains_key(v.as_str()) {
            tarjan.visit(v);
        }
    }
    let mut out: Vec<String> = tarjan
        .components
        .iter()
        .map(|component| {
            let start = *component.first().expect("not empty");
            let cycle = shortest_cycle(graph, component, start).join(" -> ");
            let all: Vec<&str> = component.iter().copied().collect();
            format!("{cycle} (modules in the cycles: {})", all.join(", "))
        })
        .collect();
    out.sort();
    out
}

/// The shortest walk from `start` back to it within `component`.
fn shortest_cycle<'a>(
    graph: &'a BTreeMap<String, BTreeSet<String>>,
    component: &BTreeSet<&'a str>,
    start: &'a str,
) -> Vec<&'a str> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for w in graph[v].iter().map(String::as_str) {
            if !component.contains(w) || came_from.contains_key(w) {
                continue;
            }
            came_from.insert(w, v);
            if w == start {
                let mut walk = vec![start];
                let mut at = came_from[start];
                while at != start {
                    walk.push(at);
                    at = came_from[at];
                }
                walk.push(start);
                walk.reverse();
                return walk;
            }
            queue.push_back(w);
        }
    }
    unreachable!("a strongly connected component has a cycle through each module")
}

#[test]
fn modules_only_tests_build_are_left_out() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = rust_files(&root);
    assert!(files.iter().any(|f| f.ends_with("directive_loop/marks.rs")));
    assert!(
        !files
            .iter()
            .any(|f| f.ends_with("directive_loop/marks/tests.rs"))
    );
}
