//! How the executable is built: with the toolchain's defaults, which on
//! Linux make it position-independent.

/// The executable is position-independent (ELF type `ET_DYN`), so the
/// loader places it at a random address: git-swarm parses untrusted
/// pull-request content, and address-space randomisation of its own code is
/// part of what makes a memory bug hard to exploit.
#[test]
#[cfg(target_os = "linux")]
fn executable_is_position_independent() {
    for exe in [
        env!("CARGO_BIN_EXE_git-swarm"),
        env!("CARGO_BIN_EXE_git-swarm-agent-hook"),
    ] {
        let bytes = std::fs::read(exe).expect("read the executable");
        assert_eq!(&bytes[..4], b"\x7fELF", "{exe}: not an ELF file");
        // `e_type`, in the byte order `EI_DATA` (byte 5) names: 1 little-endian, 2 big-endian.
        let e_type = match bytes[5] {
            2 => u16::from_be_bytes([bytes[16], bytes[17]]),
            _ => u16::from_le_bytes([bytes[16], bytes[17]]),
        };
        assert_eq!(
            e_type, 3,
            "{exe}: ELF type {e_type}: expected ET_DYN (3), not ET_EXEC (2)"
        );
    }
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

/// `libm.so.6` is not loaded: exp and ln come from the libm crate, so
/// scores are the same on every platform.
#[test]
#[cfg(all(
    target_os = "linux",
    target_env = "gnu",
    not(target_feature = "crt-static")
))]
fn executable_loads_no_libm() {
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
}
