//! `git -c KEY=VALUE swarm …`: git hands the settings of `-c` (and of
//! `--config-env`) to the commands it runs in `GIT_CONFIG_PARAMETERS`, which
//! gix does not read, where it does read `GIT_CONFIG_COUNT` with its
//! `GIT_CONFIG_KEY_<n>` and `GIT_CONFIG_VALUE_<n>` (git's other way to pass
//! settings in the environment, applied before `GIT_CONFIG_PARAMETERS`).
//! So before anything reads the configuration, the settings move from the
//! one to the other, after the ones there already: every read of git's
//! configuration (through gix, and by the git processes git-swarm starts)
//! then sees them, in git's order.

use std::ffi::OsString;

const PARAMETERS: &str = "GIT_CONFIG_PARAMETERS";
const COUNT: &str = "GIT_CONFIG_COUNT";

/// Moves the settings of `GIT_CONFIG_PARAMETERS` to `GIT_CONFIG_COUNT`.
/// Returns why not, when git's value cannot be read (the settings then
/// count for nothing).
///
/// # Safety
///
/// Changes the process's environment: to be called before any other
/// thread runs.
pub unsafe fn apply() -> Result<(), String> {
    let Some(text) = std::env::var_os(PARAMETERS) else {
        return Ok(());
    };
    let text = text
        .into_string()
        .map_err(|_| format!("{PARAMETERS} is not UTF-8"))?;
    let settings = parse(&text)?;
    let first = match std::env::var(COUNT) {
        Ok(n) => n
            .trim()
            .parse::<usize>()
            .map_err(|_| format!("{COUNT}=`{n}` is not a count"))?,
        Err(_) => 0,
    };
    let mut vars: Vec<(String, OsString)> = Vec::with_capacity(2 * settings.len() + 1);
    for (i, (key, value)) in settings.into_iter().enumerate() {
        vars.push((format!("GIT_CONFIG_KEY_{}", first + i), key.into()));
        // `-c KEY` alone means true (the count form has no valueless setting).
        let value = value.unwrap_or_else(|| "true".to_owned());
        vars.push((format!("GIT_CONFIG_VALUE_{}", first + i), value.into()));
    }
    let total = first + vars.len() / 2;
    vars.push((COUNT.to_owned(), total.to_string().into()));
    for (name, value) in vars {
        // SAFETY: the caller runs this before any other thread.
        unsafe { std::env::set_var(name, value) };
    }
    // Applied once: a git that git-swarm starts would otherwise read both.
    // SAFETY: as above.
    unsafe { std::env::remove_var(PARAMETERS) };
    Ok(())
}

/// The settings in `GIT_CONFIG_PARAMETERS`, in order, as (key, value); no
/// value for a bare `-c KEY`. Each is `'KEY'='VALUE'` (`'KEY'=` for none),
/// or, from gits before 2.31, `'KEY=VALUE'`, shell-quoted as git's
/// `sq_quote_buf` quotes (`'` and `!` as `'\''` and `'\!'`), separated by
/// spaces.
pub fn parse(text: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let mut rest = text;
    let mut out = Vec::new();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Ok(out);
        }
        let (key, after) = quoted(rest)?;
        rest = after;
        if let Some(after) = rest.strip_prefix('=') {
            if after.is_empty() || after.starts_with(char::is_whitespace) {
                out.push((key, None));
                rest = after;
            } else {
                let (value, after) = quoted(after)?;
                out.push((key, Some(value)));
                rest = after;
            }
        } else {
            out.push(match key.split_once('=') {
                Some((k, v)) => (k.to_owned(), Some(v.to_owned())),
                None => (key, None),
            });
        }
    }
}

/// One shell-quoted word at the start of `text`, and what follows it.
fn quoted(text: &str) -> Result<(String, &str), String> {
    let bad = || format!("{PARAMETERS} is not a list of quoted settings: `{text}`");
    let mut rest = text.strip_prefix('\'').ok_or_else(bad)?;
    let mut word = String::new();
    loop {
        let end = rest.find('\'').ok_or_else(bad)?;
        word.push_str(&rest[..end]);
        rest = &rest[end + 1..];
        // `'\''` and `'\!'`: a quote or `!`, and the quoting goes on.
        match rest.as_bytes() {
            [b'\\', c @ (b'\'' | b'!'), b'\'', ..] => {
                word.push(char::from(*c));
                rest = &rest[3..];
            }
            _ => return Ok((word, rest)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    fn some(k: &str, v: &str) -> (String, Option<String>) {
        (k.to_owned(), Some(v.to_owned()))
    }

    /// What git 2.47 wrote for `git -c alias.env='!env' -c diff.renames=false
    /// -c "a.b=x y'z!" -c c.d -c E.F=1 -c x.Sub.Y=2 -c g.h=`.
    #[test]
    fn git_s_own_quoting_reads_back() {
        let text = r"'alias.env'=''\!'env' 'diff.renames'='false' 'a.b'='x y'\''z'\!'' 'c.d'= 'E.F'='1' 'x.Sub.Y'='2' 'g.h'=''";
        assert_eq!(
            parse(text).expect("parses"),
            [
                some("alias.env", "!env"),
                some("diff.renames", "false"),
                some("a.b", "x y'z!"),
                ("c.d".to_owned(), None),
                some("E.F", "1"),
                some("x.Sub.Y", "2"),
                some("g.h", ""),
            ]
        );
    }

    #[test]
    fn the_old_form_reads_too_and_garbage_does_not() {
        assert_eq!(
            parse("'diff.renames=false' 'c.d'").expect("parses"),
            [some("diff.renames", "false"), ("c.d".to_owned(), None)]
        );
        assert!(parse("diff.renames=false").is_err());
        assert!(parse("'unclosed").is_err());
    }
}
