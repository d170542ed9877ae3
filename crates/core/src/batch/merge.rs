//! `sum2act merge OUT RUN_DIR...`: joins the run directories of shards (or of interrupted runs on
//! several machines) into one, refusing to mix methods, so evaluation and reports see one run.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::complete::{Completeness, check};
use super::manifest::timestamp;
use super::plan::Shard;
use super::summary::scan_run_dir;
use super::{BatchError, Manifest};
use crate::toolbench::io::write_atomic;

/// What a merge did.
#[derive(Debug, Clone)]
pub struct MergeOutcome {
    /// Answer files copied into the output.
    pub copied: usize,
    /// Files already present with identical content.
    pub identical: usize,
    /// Files present in several inputs with different content (the first one was kept).
    pub conflicts: Vec<PathBuf>,
    /// Files that do not parse as answer files (not copied).
    pub unreadable: Vec<PathBuf>,
    pub manifest: Manifest,
    /// Shards of the set not merged yet (`--allow-partial`).
    pub missing_shards: Vec<Shard>,
    /// Inputs with queries that have no answer (`--allow-partial`), and inputs not checked.
    pub completeness: Completeness,
}

impl MergeOutcome {
    /// Which shards are absent, for a warning; `None` when the set is whole (or not sharded).
    pub fn missing_message(&self) -> Option<String> {
        let merged: Vec<Shard> = self
            .manifest
            .merged_shards
            .iter()
            .filter_map(|s| Shard::parse_with_env(s, None).ok())
            .collect();
        (!self.missing_shards.is_empty()).then(|| missing_message(&self.missing_shards, &merged))
    }
}

/// How `merge` treats what it is given.
#[derive(Debug, Clone, Copy, Default)]
pub struct MergeOptions {
    /// Merge runs of different models too.
    pub force: bool,
    /// Merge an incomplete set of shards (the missing slices are named, not refused).
    pub allow_partial: bool,
}

/// Merges `inputs` into `out` (created if needed; an existing run there must have the same method).
/// A different model is refused too unless `force`; shards must form a whole set (with what `out`
/// already holds), and every query of each input must have an answer, unless `allow_partial`.
pub fn merge(
    out: &Path,
    inputs: &[PathBuf],
    options: MergeOptions,
) -> Result<MergeOutcome, BatchError> {
    let manifests = read_inputs(out, inputs)?;
    let existing = Manifest::read(out)?;
    let (reference_dir, reference) = match &existing {
        Some(m) => (out, m),
        None => (manifests[0].0.as_path(), &manifests[0].1),
    };
    check_compatible((reference_dir, reference), &manifests, options.force)?;
    let (merged_shards, missing) = shard_set(existing.as_ref(), &manifests)?;
    if !missing.is_empty() && !options.allow_partial {
        return Err(BatchError::BadInput(format!(
            "{}; give every shard's run directory, or --allow-partial to merge what is there",
            missing_message(&missing, &merged_shards)
        )));
    }
    let completeness = check(out, &manifests);
    if !completeness.incomplete.is_empty() && !options.allow_partial {
        return Err(BatchError::BadInput(incomplete_message(&completeness)));
    }

    let mut manifest = reference.clone();
    manifest.shard = None;
    manifest.merged_shards = merged_shards.iter().map(Shard::to_string).collect();
    manifest.updated = timestamp();
    let mut subsets: BTreeSet<String> = manifest.subsets.iter().cloned().collect();
    let mut outcome = MergeOutcome {
        copied: 0,
        identical: 0,
        conflicts: Vec::new(),
        unreadable: Vec::new(),
        manifest: Manifest::new("", ""),
        missing_shards: missing,
        completeness,
    };
    for (dir, m) in &manifests {
        subsets.extend(m.subsets.iter().cloned());
        let source = match &m.shard {
            Some(shard) => format!("{} (shard {shard})", dir.display()),
            None => dir.display().to_string(),
        };
        if !manifest.merged_from.contains(&source) {
            manifest.merged_from.push(source);
        }
        copy_answers(dir, out, &mut outcome)?;
    }
    manifest.subsets = subsets.into_iter().collect();
    manifest.write(out)?;
    outcome.manifest = manifest;
    Ok(outcome)
}

/// The manifest of every input, which must be a run directory other than `out`.
fn read_inputs(out: &Path, inputs: &[PathBuf]) -> Result<Vec<(PathBuf, Manifest)>, BatchError> {
    if inputs.is_empty() {
        return Err(BatchError::BadInput(
            "merge: give at least one RUN_DIR to merge".into(),
        ));
    }
    let out_canon = out.canonicalize().ok();
    let mut manifests = Vec::new();
    for dir in inputs {
        if out_canon.is_some() && dir.canonicalize().ok() == out_canon {
            return Err(BatchError::BadInput(format!(
                "{}: the output directory cannot also be an input",
                dir.display()
            )));
        }
        let manifest = Manifest::read(dir)?.ok_or_else(|| {
            BatchError::BadInput(format!(
                "{}: not a run directory (no run.json); give directories written by `sum2act batch`",
                dir.display()
            ))
        })?;
        manifests.push((dir.clone(), manifest));
    }
    Ok(manifests)
}

/// The shards merged once this merge is done (those `existing` records and the inputs'), and those
/// of the set still missing. Inputs that are not shards add nothing; shards of different counts are
/// refused (they are not slices of one set).
fn shard_set(
    existing: Option<&Manifest>,
    manifests: &[(PathBuf, Manifest)],
) -> Result<(Vec<Shard>, Vec<Shard>), BatchError> {
    let mut named: Vec<(String, Shard)> = Vec::new();
    let recorded = existing.into_iter().flat_map(|m| {
        m.merged_shards
            .iter()
            .map(|s| ("the merged run".to_string(), s.clone()))
    });
    let given = manifests
        .iter()
        .filter_map(|(dir, m)| Some((dir.display().to_string(), m.shard.clone()?)));
    for (source, text) in recorded.chain(given) {
        let shard = Shard::parse_with_env(&text, None).map_err(|_| {
            BatchError::BadInput(format!(
                "{source}: run.json records shard `{text}`, not I/N"
            ))
        })?;
        named.push((source, shard));
    }
    let Some((first_source, first)) = named.first().cloned() else {
        return Ok((Vec::new(), Vec::new()));
    };
    if let Some((source, other)) = named.iter().find(|(_, s)| s.count != first.count) {
        return Err(BatchError::BadInput(format!(
            "cannot merge shards of different shard counts: {first_source} is shard {first}, {source} is shard {other}"
        )));
    }
    let mut merged: Vec<Shard> = named.into_iter().map(|(_, s)| s).collect();
    merged.sort_by_key(|s| s.index);
    merged.dedup();
    let missing = (0..first.count)
        .map(|index| Shard {
            index,
            count: first.count,
        })
        .filter(|s| !merged.contains(s))
        .collect();
    Ok((merged, missing))
}

/// `shard 1/3 is missing (merged: 0/3, 2/3)`.
fn missing_message(missing: &[Shard], merged: &[Shard]) -> String {
    let list = |shards: &[Shard]| {
        shards
            .iter()
            .map(Shard::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "shard{} {} {} missing (merged: {})",
        if missing.len() == 1 { "" } else { "s" },
        list(missing),
        if missing.len() == 1 { "is" } else { "are" },
        list(merged)
    )
}

/// The refusal of inputs with unanswered queries: each named with its count, and what to do.
fn incomplete_message(completeness: &Completeness) -> String {
    let list: Vec<String> = completeness
        .incomplete
        .iter()
        .map(ToString::to_string)
        .collect();
    format!(
        "{} (cancelled, failed or stopped by its time limit?); rerun its batch command to finish it (it resumes), or --allow-partial to merge what is there",
        list.join("; ")
    )
}

/// Every input must have the reference's method, and its model unless `force`.
fn check_compatible(
    (reference_dir, reference): (&Path, &Manifest),
    manifests: &[(PathBuf, Manifest)],
    force: bool,
) -> Result<(), BatchError> {
    for (dir, m) in manifests {
        if m.method != reference.method {
            return Err(BatchError::BadInput(format!(
                "cannot merge runs of different methods: {} has `{}`, {} has `{}`",
                reference_dir.display(),
                reference.method,
                dir.display(),
                m.method
            )));
        }
        if m.model != reference.model && !force {
            return Err(BatchError::BadInput(format!(
                "runs use different models: {} has `{}`, {} has `{}` (--force merges them anyway)",
                reference_dir.display(),
                reference.model,
                dir.display(),
                m.model
            )));
        }
    }
    Ok(())
}

/// Copies the answer files of `dir` into `out`; a file already there is counted as identical or as a
/// conflict (the one there is kept).
fn copy_answers(dir: &Path, out: &Path, outcome: &mut MergeOutcome) -> Result<(), BatchError> {
    let (files, bad) = scan_run_dir(dir)?;
    outcome.unreadable.extend(bad);
    for (path, _, _) in files {
        // The file keeps its folder and name: both come from the input's listing, never from a
        // record's content, so nothing lands outside `out`.
        let (Some(name), Some(folder)) =
            (path.file_name(), path.parent().and_then(|p| p.file_name()))
        else {
            continue;
        };
        let dest = out.join(folder).join(name);
        let bytes = std::fs::read(&path).map_err(|e| BatchError::io(&path, e))?;
        if dest.is_file() {
            match std::fs::read(&dest) {
                Ok(old) if old == bytes => outcome.identical += 1,
                _ => outcome.conflicts.push(path.clone()),
            }
            continue;
        }
        write_atomic(&dest, &bytes)?;
        copy_files(&path, &dest)?;
        outcome.copied += 1;
    }
    Ok(())
}

/// Copies an answer file's folder of tool outputs (`{stem}.resources/`), when it has one, beside
/// its copy (the report finds them there).
fn copy_files(answer: &Path, dest: &Path) -> Result<(), BatchError> {
    let from = answer.with_extension("resources");
    let Ok(entries) = std::fs::read_dir(&from) else {
        return Ok(());
    };
    let to = dest.with_extension("resources");
    std::fs::create_dir_all(&to).map_err(|e| BatchError::io(&to, e))?;
    for e in entries.flatten().filter(|e| e.path().is_file()) {
        let target = to.join(e.file_name());
        std::fs::copy(e.path(), &target).map_err(|err| BatchError::io(&target, err))?;
    }
    Ok(())
}
