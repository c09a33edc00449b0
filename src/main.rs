//! The `git-swarm` binary; git runs it as `git swarm`.

mod cli;

// Many small allocations freed soon after are most of what folding a log
// does; mimalloc makes them cheap (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
