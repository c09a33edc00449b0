//! The `git-swarm` binary; git runs it as `git swarm`.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
