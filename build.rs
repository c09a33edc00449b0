//! Start-up tuning of the `git-swarm` executable on Linux (glibc).
//!
//! Every git-swarm command is a short process, run by hooks and agents many
//! times a minute, so start-up counts. Two things are done at link time:
//!
//! - **A fixed address.** A position-independent executable is relocated by
//!   the dynamic loader at every start: for git-swarm that is about 14,000
//!   relocations, which write to every page of `.data.rel.ro` (some 270 KB)
//!   and cost about 90 page faults before `main` runs, 0.2-0.3 ms of a 5 ms
//!   `check --range`. Linked with `-no-pie`, those pointers are resolved at
//!   link time and the pages are shared from the page cache. The libraries,
//!   heap and stack stay randomised; only the executable's own code is at a
//!   fixed address. Set `GIT_SWARM_PIE=1` when building to keep a
//!   position-independent executable (a distribution that requires one).
//! - **The unwinder linked in.** Rust's standard library takes its unwinder
//!   from `libgcc_s.so.1`, one more shared library for the loader to find,
//!   map and relocate, and whose constructor probes the CPU (`cpuid`, which
//!   traps to the hypervisor in a virtual machine) at every start: about
//!   0.1 ms a run. The same unwinder exists as a static archive,
//!   `libgcc_eh.a` (what `gcc -static-libgcc` links); when the C compiler
//!   knows where it is, it is linked statically, and with `--as-needed`
//!   `libgcc_s.so.1` drops out of the executable's dependencies. When the
//!   archive is not found (another toolchain, a cross build), nothing
//!   changes. Set `GIT_SWARM_SHARED_LIBGCC=1` to keep the shared library.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=GIT_SWARM_PIE");
    println!("cargo:rerun-if-env-changed=GIT_SWARM_SHARED_LIBGCC");
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
    let shared_libgcc =
        std::env::var_os("GIT_SWARM_SHARED_LIBGCC").is_some_and(|v| !v.is_empty() && v != "0");
    // Only for a native build: the archive is asked of the host's compiler.
    if linux_gnu
        && !crt_static
        && !shared_libgcc
        && var("HOST") == var("TARGET")
        && let Some(dir) = libgcc_eh_dir()
    {
        // Not bundled into the rlib: named on the link line of whatever
        // links the crate, ahead of the standard library's `-lgcc_s`.
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=static:-bundle=gcc_eh");
    }
}

/// The folder of the C compiler's `libgcc_eh.a`, when it has one.
fn libgcc_eh_dir() -> Option<std::path::PathBuf> {
    println!("cargo:rerun-if-env-changed=CC");
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let out = std::process::Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    // A compiler without the archive prints the bare name back.
    let path = std::path::PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    if !path.is_absolute() || !path.is_file() {
        return None;
    }
    println!("cargo:rerun-if-changed={}", path.display());
    path.parent().map(std::path::Path::to_path_buf)
}
