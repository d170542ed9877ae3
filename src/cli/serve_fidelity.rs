//! `sum2act serve fidelity`: the simulator fidelity table (`sum2act::server::fidelity`, the same code
//! as `cargo bench --bench simulator_fidelity`) for a data directory, from the command line; with
//! `--world DIR`, the consistency of a run's world instead (`server::world::consistency`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{BadInput, GlobalArgs};
use sum2act_core::toolbench::DataDir;
use sum2act_server::fidelity::{Options, measure};

#[derive(Debug, Args)]
pub struct FidelityArgs {
    /// Exit 1 when a target is missed (as the bench does); by default the misses are only printed.
    #[arg(long)]
    pub check: bool,
    /// List every rule violation found (with --world: every contradiction), not the first eight.
    #[arg(long)]
    pub all_violations: bool,
    /// Score a world folder (a run's `OUT/world`, or a shared `--world DIR`) for contradictions between
    /// replies that mention the same identifier, instead of measuring the data directory.
    #[arg(long, value_name = "DIR")]
    pub world: Option<PathBuf>,
}

pub async fn run(global: &GlobalArgs, args: &FidelityArgs) -> anyhow::Result<ExitCode> {
    if let Some(world) = &args.world {
        if !world.is_dir() {
            return Err(BadInput(format!("--world {}: not a folder", world.display())).into());
        }
        let c = sum2act_server::world::consistency::check(world);
        print!("{}", c.table(world, args.all_violations));
        return Ok(ExitCode::SUCCESS);
    }
    let data = DataDir::open_or_default(global.data.as_deref())?;
    let opts = Options {
        data: data.root().to_path_buf(),
        extra_recorded: None,
        verbose: args.all_violations,
    };
    let report = measure(&opts).await?;
    print!("{}", report.table);
    if report.missed.is_empty() {
        println!("targets met");
        return Ok(ExitCode::SUCCESS);
    }
    for m in &report.missed {
        println!("target missed: {m}");
    }
    Ok(if args.check {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
