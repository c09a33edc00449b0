//! `git swarm changes`: plumbing that prints the change a check would see.

use git_swarm::change::Change;
use gix::bstr::ByteSlice;

use super::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    change: super::check::ChangeArgs,
    /// Include the added lines of each file.
    #[arg(long)]
    lines: bool,
    /// List the files of the checked snapshot instead of the change.
    #[arg(long)]
    snapshot: bool,
}

pub fn run(args: Args, ui: &mut Ui) -> Outcome {
    let selection = args.change.selection()?;
    let repo = super::repo()?;
    let gix_repo = super::check::open_gix(&repo)?;
    let change = Change::read(&gix_repo, &repo.root, &selection)?;
    if let Some(w) = super::check::rename_limit_warning(&change) {
        ui.warning(&w.message, w.hint.as_deref());
    }
    if args.snapshot {
        let files: Vec<String> = change
            .snapshot_files(&gix_repo, None)?
            .iter()
            .map(|f| f.path.to_str_lossy().into_owned())
            .collect();
        return ui.json_result(&files);
    }
    let mut out = Vec::new();
    for (i, f) in change.files.iter().enumerate() {
        let mut v = serde_json::json!({
            "status": f.status,
            "path": f.path.to_str_lossy(),
            "old_path": f.old_path.as_ref().map(|p| p.to_str_lossy().into_owned()),
        });
        if args.lines {
            let lines: Vec<serde_json::Value> = change
                .added_lines(&gix_repo, i)?
                .iter()
                .map(|l| serde_json::json!([l.line, l.text.to_str_lossy()]))
                .collect();
            v["added"] = serde_json::Value::Array(lines);
        }
        out.push(v);
    }
    ui.json_result(&out)
}
