//! The `git-swarm` binary; git runs it as `git swarm`. Its front end is
//! the library's (`src/cli/`), shared with `git-swarm-agent-hook`.

// Many small allocations freed soon after are most of what folding a log
// does; mimalloc makes them cheap (docs/performance.md). The agent hook's
// binary, which folds little, keeps the system's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    git_swarm::cli_main()
}
