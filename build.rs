//! Links the `git-swarm` executable at a fixed address on Linux.
//!
//! Every git-swarm command is a short process, run by hooks and agents many
//! times a minute, so start-up counts. A position-independent executable is
//! relocated by the dynamic loader at every start: for git-swarm that is
//! about 14,000 relocations, which write to every page of `.data.rel.ro`
//! (some 270 KB) and cost about 90 page faults before `main` runs, 0.2-0.3
//! ms of a 5 ms `check --range`. Linked with `-no-pie`, those pointers are
//! resolved at link time and the pages are shared from the page cache.
//!
//! The libraries, heap and stack stay randomised; only the executable's own
//! code is at a fixed address. Set `GIT_SWARM_PIE=1` when building to keep
//! a position-independent executable (a distribution that requires one).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=GIT_SWARM_PIE");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    let arch = var("CARGO_CFG_TARGET_ARCH");
    let pie_wanted = std::env::var_os("GIT_SWARM_PIE").is_some_and(|v| !v.is_empty() && v != "0");
    // A static glibc build (`+crt-static`) is linked as rustc decides
    // (`-static-pie`): not mixed with `-no-pie`.
    let crt_static = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    if linux_gnu && (arch == "x86_64" || arch == "aarch64") && !pie_wanted && !crt_static {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
