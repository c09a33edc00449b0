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

#[path = "../src/retrieve/synthetic.rs"]
mod synthetic;
use synthetic::synthetic;

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
