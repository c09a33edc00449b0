//! The `=== HISTORICAL PATTERNS (role) ===` block: the best patterns for a
//! role, one line each with its track record, within a token budget.
//!
//! Which patterns: the role's own, not deprecated, and the *active* ones of
//! other roles (a human promoted them, which makes them shared), shown with
//! `via:<role>`. Each scores at least `min_score` ([`super::fold::score`]).
//! If every line fits the budget, all are shown; otherwise the
//! highest-scoring lines that fit, in score order. Tokens are estimated as
//! characters / 4, rounded up, for the header and every line.

use serde::Serialize;

use super::fold::{State, View, score_of, state};
use crate::config::PatternsConfig;
use crate::reviewed::Shown;

/// Estimated tokens of a text: characters / 4, rounded up.
pub fn tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// One injected line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Line {
    pub id: String,
    pub score: f64,
    pub text: String,
    /// The role it was learned from, when it is not the query's.
    pub via: Option<String>,
    /// The whole line as printed.
    pub line: String,
}

/// The block for a role.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    pub role: String,
    pub budget: usize,
    pub lines: Vec<Line>,
    /// Candidates above the floor that did not fit.
    pub left_out: usize,
    /// Candidates passed over, before the budget was full, because their
    /// text is not on the trusted revision.
    pub withheld: usize,
    /// Tokens of the block as rendered (0 when empty).
    pub tokens: usize,
}

impl Block {
    pub fn header(role: &str) -> String {
        format!("=== HISTORICAL PATTERNS ({role}) ===")
    }

    /// The block as printed: the header and one line per pattern; empty when no pattern made it.
    pub fn render(&self) -> String {
        if self.lines.is_empty() {
            return String::new();
        }
        let mut out = Block::header(&self.role);
        out.push('\n');
        for l in &self.lines {
            out.push_str(&l.line);
            out.push('\n');
        }
        out
    }
}

/// A query for the block.
pub struct Query<'a> {
    pub role: &'a str,
    pub labels: &'a [String],
    pub files: &'a [String],
    pub budget: usize,
    pub now_ms: i64,
}

/// Picks the lines of the block for `q.role` from `patterns` (each observed
/// pattern at most once, in any order): the role's own patterns that are not
/// deprecated and other roles' active ones, scoring at least the floor, best
/// first, as many as fit the budget.
/// `review` says how each is shown: a pattern's text is written to the log
/// by whoever can write `.swarm/events/` (see [`crate::reviewed`]).
pub fn select<'a>(
    patterns: impl IntoIterator<Item = View<'a>>,
    cfg: &PatternsConfig,
    q: &Query<'_>,
    review: &dyn Fn(&View<'_>) -> Shown,
) -> Block {
    // Score everything, format only what is tried against the budget.
    let patterns: Vec<View<'a>> = patterns.into_iter().collect();
    let mut candidates: Vec<(f64, u32)> = Vec::new();
    let mut withheld = 0;
    for (i, p) in patterns.iter().enumerate() {
        if p.stats.observations == 0 {
            continue;
        }
        let own = p.role == q.role;
        let st = state(&p.stats, cfg, q.now_ms);
        if st == State::Deprecated || (!own && st != State::Active) {
            continue;
        }
        let s = score_of(
            &p.stats, &p.labels, &p.files, cfg, q.now_ms, q.labels, q.files,
        )
        .total;
        if s >= cfg.min_score {
            candidates.push((s, u32::try_from(i).unwrap_or(u32::MAX)));
        }
    }
    let id = |i: u32| patterns.get(i as usize).map_or("", |p| p.id);
    // Ids are distinct, so the order is total and an unstable sort is deterministic.
    candidates.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then_with(|| id(a.1).cmp(id(b.1))));
    let header = tokens(&Block::header(q.role));
    let mut used = header;
    let mut lines = Vec::new();
    let total = candidates.len();
    for (s, i) in candidates {
        let Some(p) = patterns.get(i as usize) else {
            continue;
        };
        // Even the shortest line ("- x (score:0.10)") takes 4 tokens.
        if used + 4 > q.budget {
            break;
        }
        // Asked only of what would be shown: the best-scored first.
        let shown = review(p);
        if shown == Shown::Withheld {
            withheld += 1;
            // A log of nothing but unreviewed patterns is not walked whole.
            if withheld >= WITHHELD_MAX {
                break;
            }
            continue;
        }
        let text = crate::directive_loop::inject::sanitise(p.text);
        let mut tags = vec![p.stats.record().unwrap_or_else(|| format!("score:{s:.2}"))];
        let via = (p.role != q.role).then(|| p.role.to_owned());
        if let Some(v) = &via {
            tags.push(format!("via:{v}"));
        }
        if shown == Shown::Marked {
            tags.push("NOT REVIEWED".to_owned());
        }
        let line = format!("- {text} ({})", tags.join(", "));
        let t = tokens(&line);
        if used + t <= q.budget {
            used += t;
            lines.push(Line {
                id: p.id.to_owned(),
                score: s,
                text,
                via,
                line,
            });
        }
    }
    let tokens = if lines.is_empty() { 0 } else { used };
    Block {
        role: q.role.to_owned(),
        budget: q.budget,
        left_out: total - lines.len() - withheld,
        withheld,
        lines,
        tokens,
    }
}

/// Most unreviewed patterns passed over before a block gives up filling.
const WITHHELD_MAX: usize = 1_000;

/// The budget for a role: `--budget`, else the config's for the role; with
/// `remaining` (prompt tokens left), at most half of it. `None` when that
/// leaves less than `min_budget`: injection is skipped.
pub fn budget(
    cfg: &PatternsConfig,
    role: &str,
    asked: Option<usize>,
    remaining: Option<usize>,
) -> Option<usize> {
    let mut b = asked.unwrap_or_else(|| cfg.budget_for(role));
    if let Some(r) = remaining {
        b = b.min(r / 2);
        if b < cfg.min_budget {
            return None;
        }
    }
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Kind;
    use crate::pattern::fold::{PatternEvent, PatternFold};
    use crate::pattern::text::Category;

    fn views(f: &PatternFold) -> Vec<View<'_>> {
        f.observed().map(|(id, p)| p.view(id)).collect()
    }

    const T0: i64 = 1_800_000_000_000;

    fn fold(n: usize, role: &str) -> PatternFold {
        let mut f = PatternFold::default();
        for i in 0..n {
            let e = PatternEvent {
                pattern: Some(format!("p{i:03}")),
                role: Some(role.into()),
                text: Some(format!(
                    "pattern number {i} says check the {i} thing carefully"
                )),
                category: Some(if i % 2 == 0 {
                    Category::Rule
                } else {
                    Category::Observation
                }),
                run: Some("r1".into()),
                ..Default::default()
            };
            // Older patterns decay: p000 is the newest.
            f.apply(Kind::PatternObserved, T0 - i as i64 * 86_400_000, &e);
        }
        f
    }

    fn q(budget: usize) -> Query<'static> {
        Query {
            role: "judge",
            labels: &[],
            files: &[],
            budget,
            now_ms: T0,
        }
    }

    #[test]
    fn never_exceeds_the_budget_and_keeps_the_best() {
        let f = fold(40, "judge");
        let cfg = PatternsConfig::default();
        for budget in [10, 30, 100, 500, 800] {
            let b = select(views(&f), &cfg, &q(budget), &|_| Shown::Plain);
            let rendered: usize = b.render().lines().map(tokens).sum();
            assert!(rendered <= budget, "{rendered} > {budget}");
            assert_eq!(rendered, b.tokens);
            // In score order, and nothing left out scores higher than the last shown.
            for w in b.lines.windows(2) {
                assert!(w[0].score >= w[1].score);
            }
        }
        // Everything fits in a large budget.
        let all = select(views(&f), &cfg, &q(100_000), &|_| Shown::Plain);
        assert_eq!(all.left_out, 0);
    }

    #[test]
    fn the_floor_drops_weak_patterns() {
        let f = fold(60, "judge");
        let cfg = PatternsConfig::default();
        let b = select(views(&f), &cfg, &q(100_000), &|_| Shown::Plain);
        assert!(b.lines.iter().all(|l| l.score >= 0.1));
        // 0.5 * exp(-d/14) < 0.1 from day 23 for observations (rules: 0.65, day 27).
        let (n, first) = (b.lines.len(), &b.lines[0].line);
        assert!(n < 60 && n > 20, "{n}");
        assert!(first.ends_with("(score:0.65)"), "{first}");
    }

    #[test]
    fn other_roles_need_promotion_and_say_via() {
        let mut f = fold(2, "auditor");
        let cfg = PatternsConfig::default();
        assert!(
            select(views(&f), &cfg, &q(800), &|_| Shown::Plain)
                .lines
                .is_empty()
        );
        let promote = PatternEvent {
            pattern: Some("p000".into()),
            ..Default::default()
        };
        f.apply(Kind::PatternPromoted, T0, &promote);
        let b = select(views(&f), &cfg, &q(800), &|_| Shown::Plain);
        assert_eq!(b.lines.len(), 1);
        let line = &b.lines[0].line;
        assert!(line.ends_with("via:auditor)"), "{line}");
    }

    #[test]
    fn remaining_space_shrinks_or_skips() {
        let cfg = PatternsConfig::default();
        assert_eq!(budget(&cfg, "judge", None, None), Some(800));
        assert_eq!(budget(&cfg, "coder", None, None), Some(500));
        assert_eq!(budget(&cfg, "coder", Some(50), None), Some(50));
        assert_eq!(budget(&cfg, "judge", None, Some(1000)), Some(500));
        assert_eq!(budget(&cfg, "judge", None, Some(150)), None);
    }
}
