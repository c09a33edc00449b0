//! Correcting patterns from a validator's verdict (`git swarm pattern
//! feedback`, docs/patterns.md).
//!
//! A false positive the validator names is matched to a finding of the
//! deliberation and its pattern recorded as ignored, weighted by the
//! adversarial role. On a pass, the deliberation's evidence decides: output
//! of a run or a citation of a changed file validates the run's most
//! relevant patterns and ages the others; reasoning alone changes nothing.

use crate::event::{Body, Event, Kind};
use crate::index::RolePatterns;
use crate::pattern::fold::{self, View};
use crate::pattern::text::{self, Level, Match, VerdictDoc, VerdictKind};
use crate::store::Store;

/// What `git swarm pattern feedback` was given.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The role whose deliberation is judged.
    pub role: &'a str,
    /// The role that wrote the verdict.
    pub validator_role: &'a str,
    pub run: &'a str,
    /// The deliberation's text, for its evidence.
    pub deliberation: &'a str,
    /// Files of the change (empty: those the run's patterns were seen with).
    pub files: &'a [String],
}

/// What [`decide`] decided.
#[derive(Debug)]
pub struct Report {
    pub events: Vec<Event>,
    /// One line for each thing done or not done, in order, for people.
    pub notes: Vec<String>,
    /// The deliberation's evidence level, when the verdict let it count.
    pub level: Option<Level>,
}

/// The events a verdict records for the role's patterns `known`, given the
/// deliberation's findings (`observations`) and the parsed verdict.
pub fn decide(
    store: &Store,
    known: &RolePatterns<'_>,
    observations: &[text::Observation],
    verdict: &VerdictDoc,
    req: &Request<'_>,
) -> Report {
    let cfg = &store.config.patterns;
    let now = store.clock.now().as_millisecond();
    let mut events = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    let mut ignored: Vec<String> = Vec::new();
    // The stored pattern of an observation: its own id, or the pattern it joined.
    let pattern_of = |o: &text::Observation| -> Option<(String, &View)> {
        let own = text::pattern_id(&o.normalised, req.role);
        known.resolve(&own).map(|p| (p.id.to_owned(), p))
    };
    let new_event = |body: Body| {
        store
            .event(body)
            .by_role(Some(req.validator_role.to_owned()))
    };

    let finder = text::Finder::new(observations);
    for fp in &verdict.false_positives {
        let found = match finder.find(fp, cfg.finding_match) {
            Match::Phrase { index } => Some((index, "phrase".to_owned())),
            Match::Label { index } => Some((index, "label".to_owned())),
            Match::Overlap { index, score } => Some((index, format!("token overlap {score:.2}"))),
            Match::Ambiguous { indices } => {
                let at: Vec<String> = indices
                    .iter()
                    .map(|&i| observations[i].line.to_string())
                    .collect();
                lines.push(format!(
                    "false positive matches {} findings alike (lines {}), nothing recorded; quote more of the finding: {fp}",
                    indices.len(),
                    at.join(", ")
                ));
                None
            }
            Match::TooShort => {
                lines.push(format!(
                    "false positive too short to name a finding (it needs {} words, {} of them not stop words), nothing recorded: {fp}",
                    text::MIN_FALSE_POSITIVE_WORDS,
                    text::MIN_FALSE_POSITIVE_CONTENT_WORDS
                ));
                None
            }
            Match::None { best } => {
                lines.push(format!(
                    "false positive not found in the deliberation (best token overlap {best:.2}), nothing recorded: {fp}"
                ));
                None
            }
        };
        let Some((index, how)) = found else { continue };
        let Some((id, p)) = pattern_of(&observations[index]) else {
            lines.push(format!(
                "false positive matches a finding (line {}) that is not a stored pattern; run `git swarm pattern extract` first: {fp}",
                observations[index].line
            ));
            continue;
        };
        if p.has(Kind::PatternIgnored, req.run) || ignored.contains(&id) {
            lines.push(format!("{id} already ignored for this run"));
            continue;
        }
        let weight = cfg.ignore_weight(req.role);
        let regression = p.stats.validated > 0;
        events.push(new_event(Body::PatternIgnored {
            pattern: id.clone(),
            run: req.run.to_owned(),
            weight,
            regression,
            false_positive: fp.clone(),
            how: how.clone(),
        }));
        lines.push(format!(
            "ignored {id} (weight {weight}, matched by {how}){}: {}",
            if regression {
                ", REGRESSION: it had been validated"
            } else {
                ""
            },
            p.text
        ));
        ignored.push(id);
    }

    let passes = verdict.verdict == VerdictKind::Pass || verdict.must_fix.is_empty();
    let mut level = None;
    if passes {
        // The change's files: given, else the run's from `pattern extract`.
        let mut changed = req.files.to_vec();
        if changed.is_empty() {
            for p in known.views.iter().filter(|p| p.used_in(req.run)) {
                for f in &p.files {
                    if !changed.iter().any(|c| c == f) {
                        changed.push((*f).to_owned());
                    }
                }
            }
        }
        let ev = text::evidence(req.deliberation, &changed);
        level = Some(ev.level);
        if ev.level == Level::Reasoning {
            lines.push("evidence is reasoning only (level 3): no pattern reinforced".into());
        } else {
            lines.push(format!(
                "evidence level {} ({}){}",
                ev.level as u8,
                if ev.level == Level::Execution {
                    "execution output"
                } else {
                    "file:line citation"
                },
                ev.excerpt
                    .as_ref()
                    .map_or(String::new(), |x| format!(": {x}"))
            ));
            // The run's patterns of the role: file-relevant first, then by score.
            let mut run_patterns: Vec<(&str, &View, bool, f64)> = known
                .views
                .iter()
                .filter(|p| p.used_in(req.run) && !ignored.iter().any(|i| i == p.id))
                .map(|p| {
                    // Seen with a cited file, or naming a file of the change.
                    let relevant = ev.cited_files.iter().any(|f| p.files.contains(&f.as_str()))
                        || changed.iter().any(|f| p.text.contains(f.as_str()));
                    let score = fold::score_of(
                        &p.stats,
                        &p.labels,
                        &p.files,
                        cfg,
                        now,
                        &[],
                        &ev.cited_files,
                    );
                    (p.id, p, relevant, score.total)
                })
                .collect();
            run_patterns.sort_by(|a, b| {
                b.2.cmp(&a.2)
                    .then(b.3.total_cmp(&a.3))
                    .then_with(|| a.0.cmp(b.0))
            });
            for (i, (id, p, relevant, _)) in run_patterns.iter().enumerate() {
                if i < cfg.reinforce_top {
                    if p.has(Kind::PatternValidated, req.run) {
                        lines.push(format!("{id} already validated for this run"));
                        continue;
                    }
                    events.push(new_event(Body::PatternValidated {
                        pattern: id.to_string(),
                        run: req.run.to_owned(),
                        level: ev.level as u8,
                    }));
                    lines.push(format!(
                        "validated {id}{}: {}",
                        if *relevant {
                            " (cites a file of the change)"
                        } else {
                            ""
                        },
                        p.text
                    ));
                } else if !p.has(Kind::PatternAged, req.run) {
                    events.push(new_event(Body::PatternAged {
                        pattern: id.to_string(),
                        run: req.run.to_owned(),
                    }));
                    lines.push(format!("aged {id}: {}", p.text));
                }
            }
        }
    } else {
        lines.push(format!(
            "verdict FAIL with {} must-fix item(s): only false positives are corrected",
            verdict.must_fix.len()
        ));
    }
    Report {
        events,
        notes: lines,
        level,
    }
}
