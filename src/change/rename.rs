//! Rename and copy detection as `git diff` does it (git's diffcore-rename),
//! so that a change pairs the same files git pairs.
//!
//! gix has a rename tracker, but it scores similarity with a line diff and
//! pairs each destination with its best source in turn; git scores by
//! hashed chunks of content and pairs the best-scoring pairs of the whole
//! matrix first. The two disagree on real histories, and a wrong pairing
//! changes which lines a change adds. So the pairs are found here, in
//! git's order: exact renames (same content), then files whose base name
//! is unique on both sides and that are at least 75% similar, then the
//! similarity matrix (at least 50%, best scores first), which is skipped
//! when it would exceed `diff.renameLimit` squared.

use std::collections::HashMap;

use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};

use super::{ChangedFile, Content, FileStatus, bytes};
use crate::error::{Error, Result};

/// git's similarity scale: 60000 is identical.
const MAX_SCORE: u64 = 60_000;
/// `-M` without a number: 50%.
const MIN_SCORE: u64 = MAX_SCORE / 2;
/// Half-way between the threshold and identical: 75%.
const MIN_BASENAME_SCORE: u64 = MIN_SCORE + (MAX_SCORE - MIN_SCORE) / 2;
/// How many candidate sources git keeps for each destination.
const CANDIDATES_PER_DST: usize = 4;
/// git's default `diff.renameLimit`.
const DEFAULT_LIMIT: u64 = 1000;

/// What `diff.renames` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detect {
    Off,
    Renames,
    Copies,
}

/// Rename detection as the repository's configuration sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Renames {
    pub detect: Detect,
    /// `diff.renameLimit`; 0 is no limit.
    pub limit: u64,
}

impl Renames {
    /// Reads `diff.renames` (a boolean or `copies`, on by default) and
    /// `diff.renameLimit` (1000 by default), as `git diff` does.
    pub fn of(repo: &gix::Repository) -> Result<Renames> {
        let config = repo.config_snapshot();
        let bad = |key: &str, value: &BStr| {
            Error::usage(
                format!("bad config value `{value}` for `{key}`"),
                format!("fix it with `git config {key} <value>` (git refuses it too)"),
            )
        };
        let detect = match config.string("diff.renames") {
            None => {
                // A key with no `=` at all is true, as in git.
                if config.boolean("diff.renames") == Some(false) {
                    Detect::Off
                } else {
                    Detect::Renames
                }
            }
            Some(value) => {
                let lower = value.to_str_lossy().to_ascii_lowercase();
                match lower.as_str() {
                    "copies" | "copy" => Detect::Copies,
                    "true" | "yes" | "on" | "1" => Detect::Renames,
                    "false" | "no" | "off" | "0" | "" => Detect::Off,
                    _ => match lower.parse::<i64>() {
                        Ok(n) if n != 0 => Detect::Renames,
                        Ok(_) => Detect::Off,
                        Err(_) => return Err(bad("diff.renames", value.as_ref())),
                    },
                }
            }
        };
        let limit = match config.string("diff.renameLimit") {
            None => DEFAULT_LIMIT,
            Some(value) => match config.integer("diff.renameLimit") {
                Some(n) => u64::try_from(n).unwrap_or(0),
                None => return Err(bad("diff.renameLimit", value.as_ref())),
            },
        };
        Ok(Renames { detect, limit })
    }
}

/// The kind of one side of a changed file: only regular files are scored
/// for similarity; a symlink or submodule pairs only with an identical one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Absent,
    Regular,
    Link,
    Gitlink,
}

/// A changed file with the kinds of its two sides.
pub struct Typed {
    pub file: ChangedFile,
    pub old: Kind,
    pub new: Kind,
}

/// A changed file that is no rename or copy, with its content and kind
/// on each side.
pub(super) fn unpaired(
    path: BString,
    status: FileStatus,
    (old, old_kind): (Content, Kind),
    (new, new_kind): (Content, Kind),
) -> Typed {
    Typed {
        file: ChangedFile {
            path,
            old_path: None,
            status,
            old,
            new,
        },
        old: old_kind,
        new: new_kind,
    }
}

/// Neither content nor kind: the side of a change that has no file.
pub(super) const ABSENT: (Content, Kind) = (Content::Absent, Kind::Absent);

/// One side of a file, loaded on demand: its id, bytes and chunk counts.
#[derive(Default)]
struct Side {
    id: Option<ObjectId>,
    data: Option<std::rc::Rc<Vec<u8>>>,
    spans: Option<std::rc::Rc<Vec<(u32, u64)>>>,
}

struct Pairing<'a> {
    repo: &'a gix::Repository,
    crlf: bool,
    limit: u64,
    files: &'a [Typed],
    /// Sources (deleted files; modified ones too when detecting copies),
    /// by path, and how many destinations use each.
    srcs: Vec<usize>,
    used: Vec<u32>,
    /// Destinations (added files), by path, and the source (index into
    /// `srcs`) each was paired with.
    dsts: Vec<usize>,
    paired: Vec<Option<usize>>,
    old_sides: HashMap<usize, Side>,
    new_sides: HashMap<usize, Side>,
}

/// Pairs deleted (and, for copies, modified) files with added ones as
/// `git diff -M` does. Returns the change with renames and copies folded
/// in, and, when the similarity matrix was skipped for `diff.renameLimit`,
/// the limit it would have needed.
pub fn pair(
    repo: &gix::Repository,
    files: Vec<Typed>,
    config: Renames,
    crlf: bool,
) -> Result<(Vec<ChangedFile>, Option<u64>)> {
    if config.detect == Detect::Off {
        return Ok((files.into_iter().map(|t| t.file).collect(), None));
    }
    let copies = config.detect == Detect::Copies;
    let mut srcs: Vec<usize> = Vec::new();
    let mut used = Vec::new();
    let mut dsts: Vec<usize> = Vec::new();
    for (i, t) in files.iter().enumerate() {
        match t.file.status {
            FileStatus::Added if t.new != Kind::Absent => dsts.push(i),
            FileStatus::Deleted if t.old != Kind::Absent => {
                srcs.push(i);
            }
            FileStatus::Modified | FileStatus::TypeChanged if copies && t.old != Kind::Absent => {
                srcs.push(i);
            }
            _ => {}
        }
    }
    if srcs.is_empty() || dsts.is_empty() {
        return Ok((files.into_iter().map(|t| t.file).collect(), None));
    }
    srcs.sort_by(|a, b| files[*a].file.path.cmp(&files[*b].file.path));
    dsts.sort_by(|a, b| files[*a].file.path.cmp(&files[*b].file.path));
    // A modified file stays: it is one user of itself.
    used.extend(
        srcs.iter()
            .map(|&i| u32::from(files[i].file.status != FileStatus::Deleted)),
    );
    let mut p = Pairing {
        repo,
        crlf,
        limit: config.limit,
        files: &files,
        paired: vec![None; dsts.len()],
        srcs,
        used,
        dsts,
        old_sides: HashMap::new(),
        new_sides: HashMap::new(),
    };
    let needed = p.run(copies)?;
    let Pairing {
        srcs,
        used,
        dsts,
        paired,
        ..
    } = p;
    Ok((write_back(files, &srcs, &used, &dsts, &paired), needed))
}

impl Pairing<'_> {
    fn run(&mut self, copies: bool) -> Result<Option<u64>> {
        self.exact(copies)?;
        // Sources still in play: with copies, all of them.
        let mut live: Vec<usize> = (0..self.srcs.len())
            .filter(|&s| copies || self.used[s] == 0)
            .collect();
        if !copies {
            self.basenames(&live)?;
            live.retain(|&s| self.used[s] == 0);
        }
        let open: Vec<usize> = (0..self.dsts.len())
            .filter(|&d| self.paired[d].is_none())
            .collect();
        if open.is_empty() || live.is_empty() {
            return Ok(None);
        }
        let (nd, ns) = (open.len() as u64, live.len() as u64);
        if self.limit_exceeded(nd, ns) {
            return Ok(Some(nd.max(ns)));
        }
        let mut matrix: Vec<Score> = Vec::with_capacity(open.len() * CANDIDATES_PER_DST);
        for &d in &open {
            let mut best = [Score::NONE; CANDIDATES_PER_DST];
            for &s in &live {
                let candidate = Score {
                    dst: Some(d),
                    src: s,
                    score: self.similarity(s, d, MIN_SCORE)?,
                    name: u8::from(basename(self.src_path(s)) == basename(self.dst_path(d))),
                };
                record_if_better(&mut best, candidate);
            }
            matrix.extend(best);
        }
        matrix.sort_by(Score::order);
        self.take(&matrix, false);
        if copies {
            self.take(&matrix, true);
        }
        Ok(None)
    }

    /// Is the matrix larger than `diff.renameLimit` squared? git then skips it.
    fn limit_exceeded(&self, nd: u64, ns: u64) -> bool {
        let limit = self.limit;
        limit != 0 && nd.saturating_mul(ns) > limit.saturating_mul(limit)
    }

    fn src_path(&self, s: usize) -> &BStr {
        self.files[self.srcs[s]].file.path.as_bstr()
    }

    fn dst_path(&self, d: usize) -> &BStr {
        self.files[self.dsts[d]].file.path.as_bstr()
    }

    fn record(&mut self, d: usize, s: usize) {
        self.used[s] += 1;
        self.paired[d] = Some(s);
    }

    /// Identical content first: for each destination in path order, the
    /// first unused source with its content, one with the same base name
    /// preferred; non-regular files only with the same kind.
    fn exact(&mut self, copies: bool) -> Result<()> {
        let mut by_id: HashMap<ObjectId, Vec<usize>> = HashMap::new();
        for s in 0..self.srcs.len() {
            if let Some(id) = self.id(self.srcs[s], false)? {
                by_id.entry(id).or_default().push(s);
            }
        }
        for d in 0..self.dsts.len() {
            let Some(id) = self.id(self.dsts[d], true)? else {
                continue;
            };
            let Some(candidates) = by_id.get(&id) else {
                continue;
            };
            let target = self.files[self.dsts[d]].new;
            let (mut best, mut best_score, mut tries) = (None, -1i32, 100);
            for &s in candidates {
                let source = self.files[self.srcs[s]].old;
                if (source != Kind::Regular || target != Kind::Regular) && source != target {
                    continue;
                }
                if self.used[s] > 0 && !copies {
                    continue;
                }
                let score = i32::from(self.used[s] == 0)
                    + i32::from(basename(self.src_path(s)) == basename(self.dst_path(d)));
                if score > best_score {
                    best = Some(s);
                    best_score = score;
                    if score == 2 {
                        break;
                    }
                }
                tries -= 1;
                if tries == 0 {
                    break;
                }
            }
            if let Some(s) = best {
                self.record(d, s);
            }
        }
        Ok(())
    }

    /// A source whose base name no other source has, and a destination
    /// whose base name no other open destination has: paired when they
    /// are at least 75% similar, before the matrix is looked at.
    fn basenames(&mut self, live: &[usize]) -> Result<()> {
        let sources = by_unique_basename(live.iter().map(|&s| (s, self.src_path(s))));
        let open = (0..self.dsts.len()).filter(|&d| self.paired[d].is_none());
        let dests = by_unique_basename(open.map(|d| (d, self.dst_path(d))));
        let mut found = Vec::new();
        for &s in live {
            let base = basename(self.src_path(s));
            if let (Some(Some(s)), Some(Some(d))) = (sources.get(base), dests.get(base)) {
                found.push((*s, *d));
            }
        }
        for (s, d) in found {
            if self.paired[d].is_some() {
                continue;
            }
            if self.similarity(s, d, MIN_BASENAME_SCORE)? >= MIN_BASENAME_SCORE {
                self.record(d, s);
            }
        }
        Ok(())
    }

    /// Walks the sorted matrix, best first, pairing each open destination
    /// with the first source still free (any source, for copies).
    fn take(&mut self, matrix: &[Score], copies: bool) {
        for m in matrix {
            let Some(d) = m.dst else { break };
            if m.score < MIN_SCORE {
                break;
            }
            if self.paired[d].is_some() || (!copies && self.used[m.src] > 0) {
                continue;
            }
            self.record(d, m.src);
        }
    }

    /// git's similarity index of source `s` and destination `d` (0 when
    /// not both regular files, or when their sizes differ too much to
    /// reach `minimum`): the bytes of `d` copied from `s`, over the larger size.
    fn similarity(&mut self, s: usize, d: usize, minimum: u64) -> Result<u64> {
        let (src, dst) = (self.srcs[s], self.dsts[d]);
        if self.files[src].old != Kind::Regular || self.files[dst].new != Kind::Regular {
            return Ok(0);
        }
        let (Some(a), Some(b)) = (self.data(src, false)?, self.data(dst, true)?) else {
            return Ok(0);
        };
        let (a_len, b_len) = (a.len() as u64, b.len() as u64);
        let max = a_len.max(b_len);
        let delta = max - a_len.min(b_len);
        if max * (MAX_SCORE - minimum) < delta * MAX_SCORE {
            return Ok(0);
        }
        if b_len == 0 {
            return Ok(0);
        }
        let a_spans = self.spans(src, false)?;
        let b_spans = self.spans(dst, true)?;
        Ok(copied(&a_spans, &b_spans) * MAX_SCORE / max)
    }

    fn side(&mut self, file: usize, new: bool) -> &mut Side {
        let sides = if new {
            &mut self.new_sides
        } else {
            &mut self.old_sides
        };
        sides.entry(file).or_default()
    }

    fn content(&self, file: usize, new: bool) -> &Content {
        let f = &self.files[file].file;
        if new { &f.new } else { &f.old }
    }

    /// The id git gives the content (a working-tree file's is computed).
    fn id(&mut self, file: usize, new: bool) -> Result<Option<ObjectId>> {
        if let Some(id) = self.side(file, new).id {
            return Ok(Some(id));
        }
        let id = match self.content(file, new).clone() {
            Content::Blob(id) | Content::Gitlink(id) => Some(id),
            Content::Absent => None,
            Content::File(_) => match self.data(file, new)? {
                Some(bytes) => Some(
                    gix::objs::compute_hash(self.repo.object_hash(), gix::objs::Kind::Blob, &bytes)
                        .map_err(|e| Error::git("hashing a file", e))?,
                ),
                None => None,
            },
        };
        self.side(file, new).id = id;
        Ok(id)
    }

    fn data(&mut self, file: usize, new: bool) -> Result<Option<std::rc::Rc<Vec<u8>>>> {
        if let Some(data) = &self.side(file, new).data {
            return Ok(Some(data.clone()));
        }
        let content = self.content(file, new).clone();
        let bytes = match (&content, bytes::content(self.repo, &content)?) {
            (Content::File(_), Some(bytes)) => Some(bytes::to_git(bytes, self.crlf)),
            (_, bytes) => bytes,
        };
        let data = bytes.map(std::rc::Rc::new);
        self.side(file, new).data = data.clone();
        Ok(data)
    }

    fn spans(&mut self, file: usize, new: bool) -> Result<std::rc::Rc<Vec<(u32, u64)>>> {
        if let Some(spans) = &self.side(file, new).spans {
            return Ok(spans.clone());
        }
        let data = self.data(file, new)?.unwrap_or_default();
        let spans = std::rc::Rc::new(hash_chunks(&data));
        self.side(file, new).spans = Some(spans.clone());
        Ok(spans)
    }
}

/// One cell of the similarity matrix.
#[derive(Debug, Clone, Copy)]
struct Score {
    /// `None`: an empty slot.
    dst: Option<usize>,
    src: usize,
    score: u64,
    /// 1 when the base names are the same.
    name: u8,
}

impl Score {
    const NONE: Score = Score {
        dst: None,
        src: 0,
        score: 0,
        name: 0,
    };

    /// git's order: empty slots last, then higher scores, then same base names.
    fn order(a: &Score, b: &Score) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        match (a.dst, b.dst) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            _ => b.score.cmp(&a.score).then(b.name.cmp(&a.name)),
        }
    }
}

/// Keeps the best [`CANDIDATES_PER_DST`] scores: `o` replaces the worst
/// slot when it sorts strictly before it.
fn record_if_better(slots: &mut [Score; CANDIDATES_PER_DST], o: Score) {
    let mut worst = 0;
    for i in 1..CANDIDATES_PER_DST {
        if Score::order(&slots[i], &slots[worst]).is_gt() {
            worst = i;
        }
    }
    if Score::order(&slots[worst], &o).is_gt() {
        slots[worst] = o;
    }
}

fn basename(path: &BStr) -> &[u8] {
    path.rfind_byte(b'/').map_or(path, |i| &path[i + 1..])
}

/// Each base name, with the one index whose path has it (`None`: several do).
fn by_unique_basename<'p>(
    paths: impl Iterator<Item = (usize, &'p BStr)>,
) -> HashMap<&'p [u8], Option<usize>> {
    let mut map = HashMap::new();
    for (i, path) in paths {
        map.entry(basename(path))
            .and_modify(|v| *v = None)
            .or_insert(Some(i));
    }
    map
}

/// git's chunk counts (diffcore-delta): the content cut after each LF or
/// 64 bytes, each chunk hashed into one of 107927 buckets; a CR before an
/// LF is skipped in text. Sorted by hash, with the bytes counted per hash.
fn hash_chunks(data: &[u8]) -> Vec<(u32, u64)> {
    const HASHBASE: u32 = 107_927;
    let text = !super::is_binary(data);
    let mut counts: HashMap<u32, u64> = HashMap::new();
    let (mut n, mut a1, mut a2) = (0u64, 0u32, 0u32);
    let mut add = |a1: u32, a2: u32, n: u64| {
        let hash = a1.wrapping_add(a2.wrapping_mul(0x61)) % HASHBASE;
        *counts.entry(hash).or_default() += n;
    };
    for (i, &byte) in data.iter().enumerate() {
        let c = u32::from(byte);
        if text && byte == b'\r' && data.get(i + 1) == Some(&b'\n') {
            continue;
        }
        let old1 = a1;
        a1 = (a1 << 7) ^ (a2 >> 25);
        a2 = (a2 << 7) ^ (old1 >> 25);
        a1 = a1.wrapping_add(c);
        n += 1;
        if n < 64 && byte != b'\n' {
            continue;
        }
        add(a1, a2, n);
        (n, a1, a2) = (0, 0, 0);
    }
    if n > 0 {
        add(a1, a2, n);
    }
    let mut out: Vec<(u32, u64)> = counts.into_iter().collect();
    out.sort_unstable();
    out
}

/// The bytes of `dst` that `src` already had: per chunk hash, the smaller count.
fn copied(src: &[(u32, u64)], dst: &[(u32, u64)]) -> u64 {
    let (mut i, mut j, mut sum) = (0, 0, 0);
    while i < src.len() && j < dst.len() {
        match src[i].0.cmp(&dst[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                sum += src[i].1.min(dst[j].1);
                i += 1;
                j += 1;
            }
        }
    }
    sum
}

/// The change with the pairs folded in, as git writes its queue back: a
/// deleted source that was used disappears; a destination becomes a rename,
/// or a copy when its source is used again by a later destination (or is
/// a modified file that stays).
fn write_back(
    files: Vec<Typed>,
    srcs: &[usize],
    used: &[u32],
    dsts: &[usize],
    paired: &[Option<usize>],
) -> Vec<ChangedFile> {
    let mut left = used.to_vec();
    let mut pair_of: HashMap<usize, usize> = HashMap::new();
    for (d, s) in paired.iter().enumerate() {
        if let Some(s) = s {
            pair_of.insert(dsts[d], *s);
        }
    }
    let gone: std::collections::HashSet<usize> = srcs
        .iter()
        .enumerate()
        .filter(|(s, i)| used[*s] > 0 && files[**i].file.status == FileStatus::Deleted)
        .map(|(_, i)| *i)
        .collect();
    let sources: Vec<(gix::bstr::BString, Content)> = srcs
        .iter()
        .map(|&i| (files[i].file.path.clone(), files[i].file.old.clone()))
        .collect();
    let mut out = Vec::with_capacity(files.len());
    // Destinations in path order decide rename or copy, as git's queue does.
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|a, b| files[*a].file.path.cmp(&files[*b].file.path));
    let mut status: HashMap<usize, FileStatus> = HashMap::new();
    for i in order {
        if let Some(&s) = pair_of.get(&i) {
            left[s] -= 1;
            status.insert(
                i,
                if left[s] > 0 {
                    FileStatus::Copied
                } else {
                    FileStatus::Renamed
                },
            );
        }
    }
    for (i, t) in files.into_iter().enumerate() {
        if gone.contains(&i) {
            continue;
        }
        let mut file = t.file;
        if let Some(&s) = pair_of.get(&i) {
            let (path, old) = &sources[s];
            file.old_path = Some(path.clone());
            file.old = old.clone();
            file.status = status.get(&i).copied().unwrap_or(FileStatus::Renamed);
        }
        out.push(file);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn similarity(a: &[u8], b: &[u8]) -> u64 {
        copied(&hash_chunks(a), &hash_chunks(b)) * MAX_SCORE / (a.len().max(b.len()) as u64)
    }

    #[test]
    fn chunks_are_lines_or_64_bytes_and_text_ignores_cr() {
        // Five of ten lines of one length kept: git's R050.
        let old: String = (0..10).map(|i| format!("line {i:03}\n")).collect();
        let new: String = (0..5)
            .map(|i| format!("line {i:03}\n"))
            .chain((5..10).map(|i| format!("LINE {i:03}\n")))
            .collect();
        assert_eq!(similarity(old.as_bytes(), new.as_bytes()), MIN_SCORE);
        // CRLF text hashes as LF text; the last line counts without its LF.
        assert_eq!(hash_chunks(b"a\r\nb\r\nc"), hash_chunks(b"a\nb\nc"));
        assert_eq!(
            hash_chunks(b"abc").iter().map(|c| c.1).sum::<u64>(),
            3,
            "a final line with no line end is a chunk"
        );
        // Binary content keeps its CRs, and long runs are cut every 64 bytes.
        assert_ne!(hash_chunks(b"\0a\r\nb"), hash_chunks(b"\0a\nb"));
        let run = hash_chunks(&[b'x'; 130]);
        assert_eq!(run.iter().map(|c| c.1).sum::<u64>(), 130);
        assert_eq!(
            run.len(),
            2,
            "two chunks of 64 share a hash; 2 bytes are another"
        );
    }

    #[test]
    fn the_matrix_orders_by_score_then_same_base_name() {
        let cell = |dst, score, name| Score {
            dst: Some(dst),
            src: dst,
            score,
            name,
        };
        let mut m = [
            Score::NONE,
            cell(0, 100, 0),
            cell(1, 100, 1),
            cell(2, 200, 0),
        ];
        m.sort_by(Score::order);
        let order: Vec<Option<usize>> = m.iter().map(|c| c.dst).collect();
        assert_eq!(order, [Some(2), Some(1), Some(0), None]);
        // Only the best few candidates of a destination are kept.
        let mut slots = [Score::NONE; CANDIDATES_PER_DST];
        for (i, score) in [10, 50, 20, 40, 30].into_iter().enumerate() {
            record_if_better(&mut slots, cell(i, score, 0));
        }
        let mut kept: Vec<u64> = slots.iter().map(|c| c.score).collect();
        kept.sort_unstable();
        assert_eq!(kept, [20, 30, 40, 50]);
    }
}
