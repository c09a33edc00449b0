//! Under the pre-commit framework, a pre-push hook gets no ref lines on
//! stdin; the pushed range comes in PRE_COMMIT_FROM_REF / PRE_COMMIT_TO_REF.

use crate::common;

use common::TestEnv;

#[test]
fn pre_push_checks_the_range_the_framework_names() {
    let env = TestEnv::initialised();
    let base = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    // Split so that this file does not itself trip the directive it tests.
    env.write("key.pem", concat!("-----BEGIN RSA ", "PRIVATE KEY-----\n"));
    env.git(&["add", "key.pem"]);
    env.git(&["commit", "-q", "-m", "key"]);
    let tip = env.git(&["rev-parse", "HEAD"]).trim().to_owned();

    let blocked = env.swarm_with(
        &["hook", "pre-push", "origin", "../remote.git"],
        &[("PRE_COMMIT_FROM_REF", &base), ("PRE_COMMIT_TO_REF", &tip)],
        Some(b""),
    );
    blocked.code(1);
    assert!(
        blocked.stdout.contains("FAIL  no-private-keys"),
        "{}",
        blocked.snapshot()
    );
    assert!(
        blocked.stdout.contains("key.pem:1:"),
        "{}",
        blocked.snapshot()
    );

    // Without the variables and without ref lines there is nothing to check.
    env.swarm_with(
        &["hook", "pre-push", "origin", "../remote.git"],
        &[],
        Some(b""),
    )
    .success();
}
