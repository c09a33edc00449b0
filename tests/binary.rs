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

/// The shared libraries the executable asks the loader for, from
/// `readelf -d` (binutils come with the C compiler that links it); `None`
/// where there is no readelf.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn needed_libraries() -> Option<Vec<String>> {
    let out = std::process::Command::new("readelf")
        .args(["-d", env!("CARGO_BIN_EXE_git-swarm")])
        .output()
        .ok()?;
    assert!(out.status.success(), "readelf -d failed");
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.contains("(NEEDED)"))
            .filter_map(|l| Some(l.split('[').nth(1)?.trim_end_matches(']').to_owned()))
            .collect(),
    )
}

/// Neither `libm.so.6` (exp and ln come from the libm crate) nor, where
/// the C compiler has `libgcc_eh.a`, `libgcc_s.so.1` (the unwinder is linked
/// statically, see `build.rs`) is loaded at start.
#[test]
#[cfg(all(
    target_os = "linux",
    target_env = "gnu",
    not(target_feature = "crt-static")
))]
fn executable_loads_no_libm_and_no_shared_unwinder() {
    let Some(needed) = needed_libraries() else {
        return;
    };
    assert!(
        needed.iter().any(|l| l.starts_with("libc.so")),
        "{needed:?}"
    );
    assert!(
        !needed.iter().any(|l| l.starts_with("libm.so")),
        "{needed:?}"
    );
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let static_unwinder = std::process::Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()
        .map(|o| std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .is_some_and(|p| p.is_absolute() && p.is_file());
    let shared_wanted =
        std::env::var_os("GIT_SWARM_SHARED_LIBGCC").is_some_and(|v| !v.is_empty() && v != "0");
    if static_unwinder && !shared_wanted {
        assert!(
            !needed.iter().any(|l| l.starts_with("libgcc_s")),
            "{needed:?}"
        );
    }
}
