//! A panic in one predicate's evaluation becomes that predicate's error.
//!
//! The parse-time limits (glob nesting and length, regex size) are meant to
//! leave no input that makes a dependency panic; this is the line behind
//! them. A directive from a pull request must never take `check`, and with
//! it every commit through the pre-commit hook, down: what cannot be
//! evaluated is an `error` outcome, which fails closed for `enforce`.
//!
//! The default panic hook would print the panic and a backtrace hint to the
//! terminal even for a panic that is caught. So the first use installs a
//! hook that, on a thread inside [`catch`], keeps the message for the result
//! instead, and hands every other panic to the hook that was there before.

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, PanicHookInfo};

thread_local! {
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    static MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn install_hook() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info: &PanicHookInfo<'_>| {
            if CATCHING.with(Cell::get) {
                MESSAGE.with(|m| *m.borrow_mut() = Some(describe(info)));
            } else {
                previous(info);
            }
        }));
    });
}

/// The panic's message (its first line, at most 200 characters) and where it happened.
fn describe(info: &PanicHookInfo<'_>) -> String {
    let payload = info.payload();
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    let first = message.lines().next().unwrap_or_default();
    let mut short: String = first.chars().take(200).collect();
    if short.len() < message.len() {
        short.push('…');
    }
    match info.location() {
        Some(l) => format!("{short} (at {}:{})", l.file(), l.line()),
        None => short,
    }
}

/// A panic caught by [`catch`]: its message and where it happened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(super) struct Panicked(String);

/// Runs `f`; a panic in it is returned as its message instead of unwinding further.
pub(super) fn catch<T>(f: impl FnOnce() -> T) -> Result<T, Panicked> {
    install_hook();
    let outer = CATCHING.with(|c| c.replace(true));
    let result = std::panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(outer));
    result.map_err(|_| {
        Panicked(
            MESSAGE
                .with(|m| m.borrow_mut().take())
                .unwrap_or_else(|| "no message".to_owned()),
        )
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_panic_is_a_message() {
        assert_eq!(super::catch(|| 7), Ok(7));
        let caught = super::catch(|| -> u8 { panic!("regex compilation shouldn't fail: {}", "x") });
        let message = caught.expect_err("panicked").to_string();
        assert!(
            message.starts_with("regex compilation shouldn't fail: x (at src/check/contain.rs:"),
            "{message}"
        );
        // Outside `catch`, the hook that was there before runs again.
        assert_eq!(super::catch(|| "after"), Ok("after"));
    }
}
