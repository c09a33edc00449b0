//! Typed views of the fields that readers decide on, read from an event's
//! kept fields with [`super::Event::view`].
//!
//! A view is lenient field by field: a field of another type than its kind
//! writes reads as absent, and the event stays (a log holds lines from other
//! versions and tools). The names of the fields read appear only here.

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::directive::Priority;

/// The text fields of every kind, each `None` when absent or not a string.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Fields<'a> {
    #[serde(borrow, deserialize_with = "lenient")]
    pub phase: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient")]
    pub delegation: Option<&'a str>,
    /// Of an ack: `applied`, `ignored`, `n_a` or `violated`.
    #[serde(borrow, deserialize_with = "lenient")]
    pub status: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient")]
    pub reason: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient")]
    pub justification: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient")]
    pub verdict: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient")]
    pub reviewer: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient")]
    pub machine: Option<&'a str>,
    /// Of a spoofed ack: the directive id claimed.
    #[serde(borrow, deserialize_with = "lenient")]
    pub claimed: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient")]
    pub episode: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient")]
    pub branch: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient")]
    pub selection: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient")]
    pub pattern: Option<&'a str>,
}

/// What makes two check records the same occasion: the change and the
/// branch, each absent (`None`), of another type (`Some(None)`) or a string.
#[derive(Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct CheckKey<'a> {
    #[serde(borrow, deserialize_with = "present")]
    pub change: Option<Option<&'a str>>,
    #[serde(borrow, deserialize_with = "present")]
    pub branch: Option<Option<&'a str>>,
}

/// The fields of a `shown` event a delegation is read from.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Shown<'a> {
    #[serde(borrow, deserialize_with = "lenient")]
    pub phase: Option<&'a str>,
    /// `None` when not a list; entries that are not an object with a string
    /// `id` and a known `priority` are left out one by one.
    #[serde(borrow, deserialize_with = "lenient")]
    pub shown: Option<Vec<Maybe<ShownItem<'a>>>>,
}

/// The patterns an event names, in `pattern` or `patterns`, each a string
/// or a list (of which the strings count).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct PatternRefs<'a> {
    #[serde(borrow, deserialize_with = "lenient")]
    pub pattern: Option<Names<'a>>,
    #[serde(borrow, deserialize_with = "lenient")]
    pub patterns: Option<Names<'a>>,
}

impl PatternRefs<'_> {
    /// Does the event name pattern `id`?
    pub fn names(&self, id: &str) -> bool {
        [&self.pattern, &self.patterns]
            .into_iter()
            .flatten()
            .any(|n| n.has(id))
    }
}

/// One name or a list of them.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Names<'a> {
    One(&'a str),
    Many(#[serde(borrow)] Vec<Maybe<&'a str>>),
}

impl Names<'_> {
    fn has(&self, id: &str) -> bool {
        match self {
            Names::One(s) => *s == id,
            Names::Many(list) => list.iter().any(|n| n.get() == Some(&id)),
        }
    }
}

/// A value of type `T`, or anything else (kept out).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Maybe<T> {
    Is(T),
    Not(IgnoredAny),
}

impl<T> Maybe<T> {
    pub fn get(&self) -> Option<&T> {
        match self {
            Maybe::Is(v) => Some(v),
            Maybe::Not(_) => None,
        }
    }

    pub fn into_option(self) -> Option<T> {
        match self {
            Maybe::Is(v) => Some(v),
            Maybe::Not(_) => None,
        }
    }
}

/// One directive of a `shown` list: only an object counts (a list of the
/// same values is no entry), with a string `id` and a known `priority`.
#[derive(Debug)]
pub struct ShownItem<'a> {
    pub id: &'a str,
    pub priority: Priority,
}

impl<'de> Deserialize<'de> for ShownItem<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entry;
        impl<'de> Visitor<'de> for Entry {
            type Value = ShownItem<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object with an id and a priority")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut id, mut priority) = (None, None);
                while let Some(key) = map.next_key::<&'de str>()? {
                    match key {
                        "id" => id = map.next_value::<Maybe<&'de str>>()?.into_option(),
                        "priority" => {
                            priority = map.next_value::<Maybe<Priority>>()?.into_option();
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                match (id, priority) {
                    (Some(id), Some(priority)) => Ok(ShownItem { id, priority }),
                    _ => Err(de::Error::custom("no string id and known priority")),
                }
            }
        }
        d.deserialize_map(Entry)
    }
}

/// A field's value when it is a `T`, else `None`.
fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Maybe::<T>::deserialize(d)?.into_option())
}

/// A field that is present: its value when it is a `T`, else `None`.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    lenient(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Event;

    fn event(line: &str) -> Event {
        serde_json::from_str(line).expect("valid test input")
    }

    #[test]
    fn a_field_of_another_type_reads_as_absent() {
        let e = event(
            r#"{"id":"x","ts":"t","kind":"ack","delegation":42,"status":"applied","reason":null,"phase":["p1"]}"#,
        );
        let f: Fields<'_> = e.view();
        assert_eq!(
            (f.delegation, f.status, f.reason, f.phase),
            (None, Some("applied"), None, None)
        );
    }

    #[test]
    fn shown_entries_are_read_one_by_one() {
        let e = event(
            r#"{"id":"x","ts":"t","kind":"shown","phase":3,"shown":[{"id":"ab","priority":"high","extra":1},["cd","critical"],{"id":"cd","priority":9},{"id":5,"priority":"low"},{"id":"ef","priority":"low"}]}"#,
        );
        let v: Shown<'_> = e.view();
        assert_eq!(v.phase, None);
        let ids: Vec<(&str, Priority)> = v
            .shown
            .expect("a list")
            .iter()
            .filter_map(|i| i.get().map(|i| (i.id, i.priority)))
            .collect();
        assert_eq!(ids, [("ab", Priority::High), ("ef", Priority::Low)]);
        let not_a_list = event(r#"{"id":"x","ts":"t","kind":"shown","shown":"ab"}"#);
        assert!(not_a_list.view::<Shown<'_>>().shown.is_none());
    }

    #[test]
    fn check_keys_tell_absent_from_another_type() {
        let key = |line: &str| {
            let e = event(line);
            let k: CheckKey<'_> = e.view();
            (
                k.change.map(|c| c.map(str::to_owned)),
                k.branch.map(|b| b.map(str::to_owned)),
            )
        };
        assert_eq!(
            key(r#"{"id":"x","ts":"t","kind":"check","change":"c","branch":17}"#),
            (Some(Some("c".to_owned())), Some(None))
        );
        assert_eq!(
            key(r#"{"id":"x","ts":"t","kind":"check","change":"c"}"#),
            (Some(Some("c".to_owned())), None)
        );
    }

    #[test]
    fn pattern_refs_name_a_pattern_in_a_string_or_a_list() {
        let names = |line: &str, id: &str| event(line).view::<PatternRefs<'_>>().names(id);
        assert!(names(
            r#"{"id":"x","ts":"t","kind":"k","pattern":"p1"}"#,
            "p1"
        ));
        assert!(names(
            r#"{"id":"x","ts":"t","kind":"k","pattern":[1,"p1"]}"#,
            "p1"
        ));
        assert!(names(
            r#"{"id":"x","ts":"t","kind":"k","patterns":"p1"}"#,
            "p1"
        ));
        assert!(!names(
            r#"{"id":"x","ts":"t","kind":"k","patterns":{"p1":1}}"#,
            "p1"
        ));
        assert!(!names(
            r#"{"id":"x","ts":"t","kind":"k","pattern":"p2"}"#,
            "p1"
        ));
    }
}
