//! The corpus as it is stored: one block of little-endian `u32` words, used
//! where it lies in the mapped index rather than decoded.
//!
//! Layout: the number of arrays ([`ARRAYS`]), the length of each array in
//! words, the length of the text in bytes; the arrays, one after another;
//! then the text (directive ids, tokens, scope names and path globs, the
//! strings of each table found through an array of byte offsets), padded
//! with zeros to a whole word. A load reads the header, checks that every
//! value later used as an index or a slice bound is in range (so a damaged
//! block is an error, never a panic or a wrong slice), and that is all: a
//! query then touches the pages of the postings it reads. A block that is
//! not aligned to a word, or a big-endian machine, gets a copy in the
//! machine's order.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use zerocopy::{FromBytes, IntoBytes};

/// Directive ids: `n + 1` offsets into the text.
pub(super) const IDS: usize = 0;
/// Priority rank of each document (0: low … 3: critical).
pub(super) const PRIORITY: usize = 1;
/// Sorted unigram tokens: offsets into the text.
pub(super) const TOKENS: usize = 2;
/// Sorted bigrams, as pairs of token ids.
pub(super) const BIGRAMS: usize = 3;
pub(super) const POST_START: usize = 4;
pub(super) const POST_DOC: usize = 5;
pub(super) const POST_TF: usize = 6;
pub(super) const DOC_LEN: usize = 7;
pub(super) const FWD_START: usize = 8;
pub(super) const FWD: usize = 9;
/// Sorted agent and tool names: offsets into the text.
pub(super) const SCOPES: usize = 10;
pub(super) const AGENT_START: usize = 11;
pub(super) const AGENT_DOC: usize = 12;
pub(super) const TOOL_START: usize = 13;
pub(super) const TOOL_DOC: usize = 14;
pub(super) const PATH_START: usize = 15;
/// Path globs: offsets into the text.
pub(super) const PATHS: usize = 16;
/// `[doc, offset, len]` triples.
pub(super) const TRIGGERS: usize = 17;
pub(super) const TRIGGER_TOKENS: usize = 18;
/// `[token, synonym]` pairs.
pub(super) const SYNONYMS: usize = 19;
/// The average document length: the bits of an `f64`, low word first.
pub(super) const AVG_LEN: usize = 20;
/// Each document's git blob id, five words (zeros: not known).
pub(super) const BLOBS: usize = 21;
/// Enforcement rank of each document (0: advisory, 1: warn, 2: enforce).
pub(super) const ENFORCEMENT: usize = 22;
/// Each document's lesson: `n + 1` offsets into the text.
pub(super) const LESSONS: usize = 23;
/// Each document's tool-call predicates (`command:`…): `n + 1` offsets
/// into [`CALL_PREDS`].
pub(super) const CALL_START: usize = 24;
/// Tool-call predicates: offsets into the text.
pub(super) const CALL_PREDS: usize = 25;
/// The documents with no tool scope that a tool call can still match (by
/// `paths` or a tool-call predicate), ascending.
pub(super) const UNTOOLED_CALL: usize = 26;
/// Each document's agent scope: `n + 1` offsets into [`DOC_AGENTS`].
pub(super) const DOC_AGENT_START: usize = 27;
/// Scope-name numbers (into [`SCOPES`]), ascending within a document.
pub(super) const DOC_AGENTS: usize = 28;
/// What a match of each tool-call predicate must contain
/// ([`crate::predicate::required_literals`]): offsets into the text, one
/// for each of [`CALL_PREDS`].
pub(super) const CALL_LITS: usize = 29;
/// How many arrays a block has.
pub(super) const ARRAYS: usize = 30;

/// Words before the arrays: their count, their lengths, the text's length.
const HEADER: usize = ARRAYS + 2;

/// Bytes a block can be read from in place (the mapped index), shared by
/// the corpus that reads them.
pub type Shared = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// What is wrong with a stored corpus that [`Block::load`] refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DamagedCorpus {
    #[error("the corpus lies past the end of its file")]
    PastTheEnd,
    #[error("the corpus is cut short")]
    CutShort,
    #[error("the corpus has {0} arrays, not {ARRAYS}")]
    Arrays(u32),
    #[error("the corpus is {actual} bytes, its layout says {expected}")]
    Size { actual: usize, expected: usize },
    #[error("the corpus's pairs are cut short")]
    PairsCutShort,
    /// A table of strings without even its first offset.
    #[error("the corpus has no {0} table")]
    NoTable(&'static str),
    /// Offsets of a table of strings not ascending, past its text, or not
    /// on a character boundary.
    #[error("the corpus's {0} are out of place")]
    OutOfPlace(&'static str),
    /// Values used as an index or a bound past what they index.
    #[error("the corpus's {0} are out of range")]
    OutOfRange(&'static str),
}

/// A corpus block and where its parts are.
#[derive(Clone)]
pub(super) struct Block {
    data: Data,
    /// Each array's words, as a range of the block's words.
    arrays: [Range<usize>; ARRAYS],
    /// The text, as a range of the block's bytes.
    text: Range<usize>,
}

#[derive(Clone)]
enum Data {
    /// Built here, or copied: in the machine's byte order.
    Words(Arc<[u32]>),
    /// Little-endian, word-aligned bytes of `Shared`.
    Shared(Shared, Range<usize>),
}

/// A corpus block under construction.
pub(super) struct Builder {
    arrays: [Vec<u32>; ARRAYS],
    text: String,
}

impl Builder {
    pub(super) fn new() -> Builder {
        Builder {
            arrays: Default::default(),
            text: String::new(),
        }
    }

    pub(super) fn array(&mut self, k: usize, words: Vec<u32>) {
        self.arrays[k] = words;
    }

    /// Array `k` as the offsets of `strings` in the text.
    pub(super) fn strings<'s>(&mut self, k: usize, strings: impl IntoIterator<Item = &'s str>) {
        let mut offsets = vec![stored(self.text.len())];
        for s in strings {
            self.text.push_str(s);
            offsets.push(stored(self.text.len()));
        }
        self.arrays[k] = offsets;
    }

    pub(super) fn finish(self) -> Block {
        let total: usize =
            HEADER + self.arrays.iter().map(Vec::len).sum::<usize>() + self.text.len().div_ceil(4);
        let mut words = Vec::with_capacity(total);
        words.push(ARRAYS as u32);
        words.extend(self.arrays.iter().map(|a| stored(a.len())));
        words.push(stored(self.text.len()));
        let mut arrays: [Range<usize>; ARRAYS] = Default::default();
        for (range, a) in arrays.iter_mut().zip(&self.arrays) {
            *range = words.len()..words.len() + a.len();
            words.extend_from_slice(a);
        }
        let text_at = words.len() * 4;
        words.extend(self.text.as_bytes().chunks(4).map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_ne_bytes(w)
        }));
        Block {
            data: Data::Words(words.into()),
            arrays,
            text: text_at..text_at + self.text.len(),
        }
    }
}

/// A text offset or a count as stored. A corpus's text past 4 GiB gets
/// offsets that fail its load's checks: it is rebuilt, never read wrong.
fn stored(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Block {
    /// The block stored at `range` of `bytes`, its layout and values checked.
    pub(super) fn load(bytes: Shared, range: Range<usize>) -> Result<Block, DamagedCorpus> {
        let all = (*bytes).as_ref();
        let b = all.get(range.clone()).ok_or(DamagedCorpus::PastTheEnd)?;
        let word = |i: usize| -> Option<u32> {
            Some(u32::from_le_bytes(
                b.get(4 * i..4 * i + 4)?.try_into().ok()?,
            ))
        };
        let count = word(0).ok_or(DamagedCorpus::CutShort)?;
        if count as usize != ARRAYS {
            return Err(DamagedCorpus::Arrays(count));
        }
        let mut arrays: [Range<usize>; ARRAYS] = Default::default();
        let mut at = HEADER;
        for (k, range) in arrays.iter_mut().enumerate() {
            let len = word(1 + k).ok_or(DamagedCorpus::CutShort)? as usize;
            *range = at..at + len;
            at += len;
        }
        let text_len = word(1 + ARRAYS).ok_or(DamagedCorpus::CutShort)? as usize;
        let text_at = at * 4;
        if b.len() != text_at + text_len.next_multiple_of(4) {
            return Err(DamagedCorpus::Size {
                actual: b.len(),
                expected: text_at + text_len.next_multiple_of(4),
            });
        }
        let data = if cfg!(target_endian = "little") && b.as_ptr().align_offset(4) == 0 {
            Data::Shared(Arc::clone(&bytes), range)
        } else {
            let words: Vec<u32> = b
                .chunks_exact(4)
                .enumerate()
                .map(|(i, c)| {
                    let c = [c[0], c[1], c[2], c[3]];
                    // The text keeps its byte order.
                    if i < at {
                        u32::from_le_bytes(c)
                    } else {
                        u32::from_ne_bytes(c)
                    }
                })
                .collect();
            Data::Words(words.into())
        };
        let block = Block {
            data,
            arrays,
            text: text_at..text_at + text_len,
        };
        block.view().ok_or(DamagedCorpus::PairsCutShort)?.check()?;
        Ok(block)
    }

    fn bytes(&self) -> &[u8] {
        match &self.data {
            Data::Words(w) => w.as_bytes(),
            Data::Shared(s, range) => (**s).as_ref().get(range.clone()).unwrap_or_default(),
        }
    }

    /// The block's bytes as stored (little-endian).
    pub(super) fn encoded(&self) -> Cow<'_, [u8]> {
        match &self.data {
            Data::Shared(..) => Cow::Borrowed(self.bytes()),
            Data::Words(w) if cfg!(target_endian = "little") => Cow::Borrowed(w.as_bytes()),
            Data::Words(w) => {
                let arrays_end = self.text.start / 4;
                Cow::Owned(
                    w.iter()
                        .enumerate()
                        .flat_map(|(i, x)| {
                            if i < arrays_end {
                                x.to_le_bytes()
                            } else {
                                x.to_ne_bytes()
                            }
                        })
                        .collect(),
                )
            }
        }
    }

    /// The words before the text (empty if they cannot be had as words,
    /// which a built or loaded block always can).
    fn words(&self) -> &[u32] {
        self.bytes()
            .get(..self.text.start)
            .and_then(|b| <[u32]>::ref_from_bytes(b).ok())
            .unwrap_or_default()
    }

    /// Array `k`.
    pub(super) fn array(&self, k: usize) -> &[u32] {
        self.words().get(self.arrays[k].clone()).unwrap_or_default()
    }

    /// The table of strings of array `k`.
    pub(super) fn strs(&self, k: usize) -> Strs<'_> {
        Strs {
            text: self.bytes().get(self.text.clone()).unwrap_or_default(),
            off: self.array(k),
        }
    }

    /// The arrays and tables; `None` only when the pairs and triples do
    /// not come out whole (which a built or loaded block always does).
    pub(super) fn view(&self) -> Option<View<'_>> {
        let bytes = self.bytes();
        let words = <[u32]>::ref_from_bytes(bytes.get(..self.text.start)?).ok()?;
        let text = bytes.get(self.text.clone())?;
        let a = |k: usize| words.get(self.arrays[k].clone()).unwrap_or_default();
        let strs = |k: usize| Strs { text, off: a(k) };
        let avg = a(AVG_LEN);
        let avg_len = match avg {
            [lo, hi] => f64::from_bits(u64::from(*lo) | (u64::from(*hi) << 32)),
            _ => 0.0,
        };
        Some(View {
            ids: strs(IDS),
            priority: a(PRIORITY),
            tokens: strs(TOKENS),
            bigrams: <[[u32; 2]]>::ref_from_bytes(a(BIGRAMS).as_bytes()).ok()?,
            post_start: a(POST_START),
            post_doc: a(POST_DOC),
            post_tf: a(POST_TF),
            doc_len: a(DOC_LEN),
            avg_len,
            fwd_start: a(FWD_START),
            fwd: a(FWD),
            scopes: strs(SCOPES),
            agent_start: a(AGENT_START),
            agent_doc: a(AGENT_DOC),
            tool_start: a(TOOL_START),
            tool_doc: a(TOOL_DOC),
            path_start: a(PATH_START),
            paths: strs(PATHS),
            triggers: <[[u32; 3]]>::ref_from_bytes(a(TRIGGERS).as_bytes()).ok()?,
            trigger_tokens: a(TRIGGER_TOKENS),
            synonyms: <[[u32; 2]]>::ref_from_bytes(a(SYNONYMS).as_bytes()).ok()?,
            enforcement: a(ENFORCEMENT),
            lessons: strs(LESSONS),
            call_start: a(CALL_START),
            call_preds: strs(CALL_PREDS),
            call_lits: strs(CALL_LITS),
            untooled_call: a(UNTOOLED_CALL),
            doc_agent_start: a(DOC_AGENT_START),
            doc_agents: a(DOC_AGENTS),
        })
    }
}

/// A table of strings in the text: string `i` is `text[off[i]..off[i + 1]]`.
/// Each was checked to be UTF-8 when the block was loaded; it is turned
/// into a `str` (checked again) only when asked for, so a query that looks
/// at a few never pays for all.
#[derive(Clone, Copy)]
pub(super) struct Strs<'a> {
    text: &'a [u8],
    off: &'a [u32],
}

impl<'a> Strs<'a> {
    pub(super) fn len(&self) -> usize {
        self.off.len().saturating_sub(1)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn bytes(&self, i: usize) -> &'a [u8] {
        match (self.off.get(i), self.off.get(i + 1)) {
            (Some(&a), Some(&b)) => self.text.get(a as usize..b as usize).unwrap_or_default(),
            _ => &[],
        }
    }

    /// String `i` (empty past the end, which a checked block never asks for).
    pub(super) fn get(&self, i: usize) -> &'a str {
        std::str::from_utf8(self.bytes(i)).unwrap_or_default()
    }

    /// The index of `s` in a sorted table (`str`s order as their bytes).
    pub(super) fn find(&self, s: &str) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.bytes(mid).cmp(s.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    pub(super) fn iter(&self) -> impl ExactSizeIterator<Item = &'a str> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Offsets ascending and within the text, each string UTF-8.
    fn check(&self, what: &'static str) -> Result<(), DamagedCorpus> {
        if self.off.is_empty() {
            return Err(DamagedCorpus::NoTable(what));
        }
        let (first, last) = (self.off[0] as usize, self.off[self.off.len() - 1] as usize);
        let utf8 = |text: &[u8]| match std::str::from_utf8(text) {
            Ok(text) => self
                .off
                .iter()
                .all(|&o| text.is_char_boundary(o as usize - first)),
            Err(_) => false,
        };
        if !ascending_within(self.off, self.text.len()) || !utf8(&self.text[first..last]) {
            return Err(DamagedCorpus::OutOfPlace(what));
        }
        Ok(())
    }
}

/// The arrays of a corpus block, borrowed.
#[derive(Clone, Copy)]
pub(super) struct View<'a> {
    pub ids: Strs<'a>,
    pub priority: &'a [u32],
    pub tokens: Strs<'a>,
    pub bigrams: &'a [[u32; 2]],
    pub post_start: &'a [u32],
    pub post_doc: &'a [u32],
    pub post_tf: &'a [u32],
    pub doc_len: &'a [u32],
    pub avg_len: f64,
    pub fwd_start: &'a [u32],
    pub fwd: &'a [u32],
    pub scopes: Strs<'a>,
    pub agent_start: &'a [u32],
    pub agent_doc: &'a [u32],
    pub tool_start: &'a [u32],
    pub tool_doc: &'a [u32],
    pub path_start: &'a [u32],
    pub paths: Strs<'a>,
    pub triggers: &'a [[u32; 3]],
    pub trigger_tokens: &'a [u32],
    pub synonyms: &'a [[u32; 2]],
    pub enforcement: &'a [u32],
    pub lessons: Strs<'a>,
    pub call_start: &'a [u32],
    pub call_preds: Strs<'a>,
    pub call_lits: Strs<'a>,
    pub untooled_call: &'a [u32],
    pub doc_agent_start: &'a [u32],
    pub doc_agents: &'a [u32],
}

impl View<'_> {
    /// Every value the queries use as an index or a bound is in range.
    fn check(&self) -> Result<(), DamagedCorpus> {
        self.ids.check("ids")?;
        self.tokens.check("tokens")?;
        self.scopes.check("scope names")?;
        self.paths.check("path globs")?;
        let n = self.ids.len();
        let n_uni = self.tokens.len() as u32;
        let bad = |what: &'static str| Err(DamagedCorpus::OutOfRange(what));
        if self.priority.len() != n || self.priority.iter().any(|&p| p > 3) {
            return bad("priorities");
        }
        if self.bigrams.iter().flatten().any(|&t| t >= n_uni) {
            return bad("bigrams");
        }
        if self.post_start.len() != self.tokens.len() + self.bigrams.len() + 1
            || !ascending_within(self.post_start, self.post_doc.len())
            || self.post_tf.len() != self.post_doc.len()
            || !all_below(self.post_doc, n)
        {
            return bad("postings");
        }
        if self.doc_len.len() != n
            || self.fwd_start.len() != n + 1
            || !ascending_within(self.fwd_start, self.fwd.len())
        {
            return bad("document lengths");
        }
        for (start, docs) in [
            (self.agent_start, self.agent_doc),
            (self.tool_start, self.tool_doc),
        ] {
            if start.len() != self.scopes.len() + 1
                || !ascending_within(start, docs.len())
                || !all_below(docs, n)
            {
                return bad("scopes");
            }
        }
        if self.path_start.len() != n + 1 || !ascending_within(self.path_start, self.paths.len()) {
            return bad("path globs");
        }
        let triggers_ok = self.triggers.iter().all(|&[doc, off, len]| {
            (doc as usize) < n
                && len > 0
                && (off as usize).saturating_add(len as usize) <= self.trigger_tokens.len()
        });
        if !triggers_ok {
            return bad("triggers");
        }
        if self.synonyms.iter().flatten().any(|&t| t >= n_uni) {
            return bad("synonyms");
        }
        self.lessons.check("lessons")?;
        self.call_preds.check("tool-call predicates")?;
        self.call_lits.check("tool-call literals")?;
        if self.call_lits.len() != self.call_preds.len() {
            return bad("tool-call literals");
        }
        if self.enforcement.len() != n || self.enforcement.iter().any(|&e| e > 2) {
            return bad("enforcements");
        }
        if self.lessons.len() != n {
            return bad("lessons");
        }
        if self.call_start.len() != n + 1
            || !ascending_within(self.call_start, self.call_preds.len())
        {
            return bad("tool-call predicates");
        }
        if !all_below(self.untooled_call, n) {
            return bad("tool-call documents");
        }
        if self.doc_agent_start.len() != n + 1
            || !ascending_within(self.doc_agent_start, self.doc_agents.len())
            || !all_below(self.doc_agents, self.scopes.len())
        {
            return bad("agent scopes");
        }
        Ok(())
    }
}

/// `offsets` ascending, and none past `limit`.
fn ascending_within(offsets: &[u32], limit: usize) -> bool {
    offsets.windows(2).all(|w| w[0] <= w[1]) && offsets.last().is_none_or(|&o| o as usize <= limit)
}

fn all_below(values: &[u32], n: usize) -> bool {
    values.iter().all(|&v| (v as usize) < n)
}

impl<'a> View<'a> {
    /// The arrays of a corpus with no document.
    pub(super) fn empty() -> View<'a> {
        const NO_STRINGS: Strs<'static> = Strs {
            text: &[],
            off: &[],
        };
        View {
            ids: NO_STRINGS,
            priority: &[],
            tokens: NO_STRINGS,
            bigrams: &[],
            post_start: &[],
            post_doc: &[],
            post_tf: &[],
            doc_len: &[],
            avg_len: 0.0,
            fwd_start: &[],
            fwd: &[],
            scopes: NO_STRINGS,
            agent_start: &[],
            agent_doc: &[],
            tool_start: &[],
            tool_doc: &[],
            path_start: &[],
            paths: NO_STRINGS,
            triggers: &[],
            trigger_tokens: &[],
            synonyms: &[],
            enforcement: &[],
            lessons: NO_STRINGS,
            call_start: &[],
            call_preds: NO_STRINGS,
            call_lits: NO_STRINGS,
            untooled_call: &[],
            doc_agent_start: &[],
            doc_agents: &[],
        }
    }
}
