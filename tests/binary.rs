//! How the executable is linked: every command is a short process, so what
//! the loader does before `main` counts (see `build.rs`).

/// On Linux (glibc, x86-64 or AArch64) the executable is linked at a fixed
/// address, so the loader relocates nothing of ours at start-up: its ELF
/// type is `ET_EXEC`, not the `ET_DYN` of a position-independent one.
#[test]
#[cfg(all(
    target_os = "linux",
    target_env = "gnu",
    any(target_arch = "x86_64", target_arch = "aarch64"),
    not(target_feature = "crt-static")
))]
fn executable_is_not_position_independent() {
    if std::env::var_os("GIT_SWARM_PIE").is_some_and(|v| !v.is_empty() && v != "0") {
        return;
    }
    let bytes = std::fs::read(env!("CARGO_BIN_EXE_git-swarm")).expect("read the executable");
    assert_eq!(&bytes[..4], b"\x7fELF", "not an ELF file");
    let e_type = u16::from_le_bytes([bytes[16], bytes[17]]);
    assert_eq!(
        e_type, 2,
        "ELF type {e_type}: expected ET_EXEC (2), not ET_DYN (3)"
    );
}
