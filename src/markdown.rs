//! The markdown lines that hold no prose of the writer's own: code fences
//! and blockquotes. The ack markers and a deliberation's evidence skip
//! them line by line, so an example or an echoed prompt is never read as
//! an ack or a citation; the pattern text checks with them whether a fence
//! pulldown-cmark found was left open.
//!
//! Fences are recognised at any indentation, not only up to three spaces
//! as CommonMark has it: models indent fences freely inside lists, and
//! reading such an example as prose would count what it only quotes.

/// An open code fence: its character (`` ` `` or `~`) and run length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fence {
    pub ch: u8,
    pub len: usize,
}

impl Fence {
    /// The fence `line` opens, and its info string; `None` when it opens
    /// none (a backtick run followed by another backtick is inline code).
    pub fn open(line: &str) -> Option<(Fence, &str)> {
        let t = line.trim_start();
        let ch = *t.as_bytes().first()?;
        if ch != b'`' && ch != b'~' {
            return None;
        }
        let len = t.bytes().take_while(|&b| b == ch).count();
        if len < 3 {
            return None;
        }
        let info = t[len..].trim();
        if ch == b'`' && info.contains('`') {
            return None;
        }
        Some((Fence { ch, len }, info))
    }

    /// Does `line` close this fence: only the fence character, at least as
    /// many as opened it?
    pub fn closes(self, line: &str) -> bool {
        let t = line.trim();
        t.len() >= self.len && t.bytes().all(|b| b == self.ch)
    }

    /// The fence run as written: ```` ``` ````, `~~~~`.
    pub fn marker(self) -> String {
        char::from(self.ch).to_string().repeat(self.len)
    }
}

/// Is `line` part of a blockquote?
pub fn is_quote(line: &str) -> bool {
    line.trim_start().starts_with('>')
}

/// Random text for the readers' property tests.
#[cfg(test)]
pub(crate) mod arbitrary {
    use proptest::prelude::*;

    /// 3,000 cases, and the same inputs on every run, as a test suite's
    /// should be.
    pub(crate) fn config() -> ProptestConfig {
        ProptestConfig {
            cases: 3000,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed),
            ..ProptestConfig::default()
        }
    }

    /// Up to `parts` parts, each any character, a printable ASCII one, or
    /// one of `pieces` (`weight` times as likely as either), then up to
    /// `bytes` random bytes read as lossy UTF-8.
    pub(crate) fn text(
        pieces: &'static [&'static str],
        weight: u32,
        parts: usize,
        bytes: usize,
    ) -> impl Strategy<Value = String> {
        let part = prop_oneof![
            1 => any::<char>().prop_map(String::from),
            1 => (b' '..=b'~').prop_map(|b| char::from(b).to_string()),
            weight => prop::sample::select(pieces).prop_map(str::to_owned),
        ];
        (
            prop::collection::vec(part, 0..parts),
            prop::collection::vec(any::<u8>(), 0..bytes),
        )
            .prop_map(|(parts, bytes)| parts.concat() + &String::from_utf8_lossy(&bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_open_and_close() {
        assert_eq!(
            Fence::open("  ```rust extra"),
            Some((Fence { ch: b'`', len: 3 }, "rust extra"))
        );
        assert_eq!(
            Fence::open("~~~~ a`b"),
            Some((Fence { ch: b'~', len: 4 }, "a`b"))
        );
        for line in ["``", "```inline``` code", "x```", "", "---"] {
            assert_eq!(Fence::open(line), None, "{line:?}");
        }
        let f = Fence { ch: b'`', len: 4 };
        assert!(f.closes("````") && f.closes("  `````  ") && f.closes("````\r"));
        assert!(!f.closes("```") && !f.closes("```` x") && !f.closes("~~~~"));
        assert_eq!(f.marker(), "````");
    }

    #[test]
    fn quotes() {
        assert!(is_quote("> a") && is_quote("   >a"));
        assert!(!is_quote("a > b") && !is_quote(""));
    }
}
