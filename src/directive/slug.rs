//! Ids derived from a lesson's text.

/// A readable id from a lesson: lowercase ASCII words joined by `-`, cut at
/// a word boundary to at most 48 characters. Lessons with no ASCII letters or
/// digits (say, entirely in CJK) get `d-` and a short hash of the text.
pub fn slug_from_lesson(lesson: &str) -> String {
    const MAX: usize = 48;
    let mut slug = String::new();
    for word in lesson
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word = word.to_ascii_lowercase();
        let extra = if slug.is_empty() {
            word.len()
        } else {
            word.len() + 1
        };
        if slug.len() + extra > MAX {
            if slug.is_empty() {
                slug.push_str(&word[..MAX]);
            }
            break;
        }
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(&word);
    }
    if slug.len() < 2 {
        let hash = xxhash_rust::xxh3::xxh3_64(lesson.as_bytes());
        slug = format!("d-{:08x}", hash as u32);
    }
    slug
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(
            slug_from_lesson("Never call unwrap() in library code!"),
            "never-call-unwrap-in-library-code"
        );
        assert!(slug_from_lesson("テストを書く前にコードを書かない").starts_with("d-"));
        let long = slug_from_lesson(&"word ".repeat(40));
        assert!(long.len() <= 48 && !long.ends_with('-'), "{long}");
        assert!(super::super::is_valid_id(&slug_from_lesson("Ünïcode ok")));
    }
}
