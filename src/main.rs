//! The `git-swarm` binary; git runs it as `git swarm`.

mod cli;

// Many small allocations freed soon after are most of what folding a log
// does; mimalloc makes them cheap (docs/performance.md). An agent's hook
// (`hook agent`) folds little and runs before every tool call: there
// mimalloc's first touch of its arena costs more than it saves, so that
// process uses the system's allocator. The choice is made once, at the
// process's first allocation, so that every block is freed by the
// allocator that gave it.
#[global_allocator]
static ALLOCATOR: Chosen = Chosen;

struct Chosen;

/// 0: not chosen yet; 1: mimalloc; 2: the system's.
static CHOICE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

impl Chosen {
    #[inline]
    fn system(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        match CHOICE.load(Relaxed) {
            0 => {
                let chosen = if is_agent_hook() { 2 } else { 1 };
                // Made before any block is given out: another thread cannot
                // allocate before the runtime's first allocation.
                match CHOICE.compare_exchange(0, chosen, Relaxed, Relaxed) {
                    Ok(_) => chosen == 2,
                    Err(now) => now == 2,
                }
            }
            c => c == 2,
        }
    }
}

/// Whether this process is `git-swarm hook agent …`, read from
/// `/proc/self/cmdline` without allocating (this runs inside the allocator).
#[cfg(target_os = "linux")]
fn is_agent_hook() -> bool {
    let mut buf = [0u8; 256];
    // SAFETY: a NUL-terminated path, a buffer of the length given, and the
    // descriptor closed before return.
    let n = unsafe {
        let fd = libc::open(
            c"/proc/self/cmdline".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return false;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        n
    };
    let Ok(n) = usize::try_from(n) else {
        return false;
    };
    let mut args = buf[..n].split(|&b| b == 0).skip(1);
    args.next() == Some(b"hook") && args.next() == Some(b"agent")
}

#[cfg(not(target_os = "linux"))]
fn is_agent_hook() -> bool {
    false
}

// SAFETY: every call goes to one allocator for the whole process (chosen
// at the first call, never changed), which gets back only its own blocks.
unsafe impl std::alloc::GlobalAlloc for Chosen {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        unsafe {
            if self.system() {
                std::alloc::System.alloc(layout)
            } else {
                mimalloc::MiMalloc.alloc(layout)
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        unsafe {
            if self.system() {
                std::alloc::System.alloc_zeroed(layout)
            } else {
                mimalloc::MiMalloc.alloc_zeroed(layout)
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe {
            if self.system() {
                std::alloc::System.dealloc(ptr, layout)
            } else {
                mimalloc::MiMalloc.dealloc(ptr, layout)
            }
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        unsafe {
            if self.system() {
                std::alloc::System.realloc(ptr, layout, new_size)
            } else {
                mimalloc::MiMalloc.realloc(ptr, layout, new_size)
            }
        }
    }
}

fn main() -> std::process::ExitCode {
    cli::main()
}
