//! `git-swarm-agent-hook HARNESS EVENT`: what `git swarm agents install`
//! registers in an agent harness, run before and after its tool calls and
//! at its sessions' and subagents' starts and stops. It is `git-swarm hook
//! agent HARNESS EVENT` in a binary of its own that links only what a hook
//! runs, so that it starts sooner (docs/performance.md); it keeps the
//! system's allocator, whose start costs nothing.

fn main() -> std::process::ExitCode {
    git_swarm::agent_hook_main()
}
