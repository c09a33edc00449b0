//! Retrieval's stages in process, on a synthetic corpus: building the
//! corpus, loading it back as the index does, scoring a query and selecting
//! with MMR.
//!
//! Run: `cargo bench --bench retrieve`. `SWARM_BENCH_DIRECTIVES` sets the
//! number of directives (default 10,000). Whole-process figures are
//! `cargo bench --bench inject`'s.

use std::sync::Arc;
use std::time::Instant;

use git_swarm::directive::{Directive, Priority};
use git_swarm::retrieve::{Corpus, MMR_LAMBDA, Query, Shared, Track};

fn main() {
    let n = std::env::var("SWARM_BENCH_DIRECTIVES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let docs = synthetic(n);
    let refs: Vec<&Directive> = docs.iter().collect();
    let mut c = Corpus::default();
    let runs = 5;
    let t = Instant::now();
    for _ in 0..runs {
        c = Corpus::build(&refs);
    }
    let build = t.elapsed() / runs;
    let bytes: Shared = Arc::new(c.encoded().into_owned());
    let len = bytes.as_ref().as_ref().len();
    let t = Instant::now();
    let back = Corpus::load(Arc::clone(&bytes), 0..len).expect("loads");
    let load = t.elapsed();
    assert_eq!(back, c);
    let queries: Vec<Query> = (0..100)
        .map(|i| Query {
            text: (0..10)
                .map(|j| {
                    docs[(i * 37 + j * 101) % docs.len()]
                        .lesson
                        .split(' ')
                        .nth(j % 5)
                })
                .map(|w| w.unwrap_or("x"))
                .collect::<Vec<_>>()
                .join(" "),
            role: Some("coder".into()),
            tools: vec!["cargo".into(), "git".into()],
            files: Vec::new(),
        })
        .collect();
    let track = |_: usize| Track::default();
    let t = Instant::now();
    let mut hits = 0;
    for q in &queries {
        hits += c.score(q, &track).len();
    }
    let score = t.elapsed() / queries.len() as u32;
    let scored = c.score(&queries[0], &track);
    let t = Instant::now();
    let picked = c.select(&scored, 8, MMR_LAMBDA);
    let select = t.elapsed();
    println!(
        "{n} directives: build {build:?}, {len} bytes (load {load:?}), \
         score {score:?} a query ({} hits on average), select {select:?} ({} of {})",
        hits / queries.len(),
        picked.len(),
        scored.len(),
    );
}

/// A deterministic corpus of `n` directives (as the unit tests of `retrieve` make them).
fn synthetic(n: usize) -> Vec<Directive> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |m: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) as usize) % m
    };
    let syllables = [
        "ka", "lo", "mi", "re", "tu", "sen", "dor", "vi", "pa", "qua",
    ];
    let words: Vec<String> = (0..4000)
        .map(|i| {
            let mut w = String::new();
            let mut x = i;
            for _ in 0..3 {
                w.push_str(syllables[x % 10]);
                x /= 10;
            }
            w.push_str(syllables[i % 7]);
            w
        })
        .collect();
    let roles = [
        "coder",
        "reviewer",
        "test_engineer",
        "sme",
        "docs",
        "designer",
    ];
    let tools = ["cargo", "git", "npm", "grep", "sed", "python", "make"];
    let phrase = |len: usize, next: &mut dyn FnMut(usize) -> usize| {
        (0..len)
            .map(|_| words[next(words.len()).min(next(words.len()))].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    // Fifty topics of eight tags each: tags and triggers co-occur within a topic.
    (0..n)
        .map(|i| {
            let topic = next(50);
            let tag =
                |next: &mut dyn FnMut(usize) -> usize| words[3000 + topic * 8 + next(8)].clone();
            let len = 12 + next(14);
            let mut d = Directive::new(format!("d{i:05}"), phrase(len, &mut next));
            d.tags = (0..3).map(|_| tag(&mut next)).collect();
            d.triggers = (0..2)
                .map(|_| format!("{} {}", tag(&mut next), phrase(2 + next(2), &mut next)))
                .collect();
            d.forbidden_actions = vec![phrase(5, &mut next)];
            d.required_actions = vec![phrase(5, &mut next)];
            d.applies_to_agents = vec![roles[next(roles.len())].to_string()];
            d.applies_to_tools = vec![tools[next(tools.len())].to_string()];
            d.priority = Priority::ALL[next(4)];
            d
        })
        .collect()
}
