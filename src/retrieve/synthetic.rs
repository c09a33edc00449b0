//! A deterministic corpus of directives on fifty topics, for the tests of
//! retrieval and for `benches/retrieve.rs`, which includes this file: it
//! names `Directive` and `Priority` as its includer imports them.

use super::{Directive, Priority};

/// `n` directives; tags and triggers co-occur within a topic, so that the
/// synonym map has pairs to learn.
pub fn synthetic(n: usize) -> Vec<Directive> {
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
