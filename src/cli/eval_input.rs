//! What `eval` and `compare` score: a run directory (its answers, and the queries its manifest says
//! they should cover), a folder of StableToolBench converted files, or one converted file, with its
//! id files.

use std::path::Path;

use super::BadInput;
use super::exit::classify;
use sum2act_core::toolbench::load_id_file;
use sum2act_eval::AnswerSet;

/// Loads what `eval`/`compare` score: a run directory, a converted folder, or a converted file.
pub fn load_set(
    path: &Path,
    subset: Option<&str>,
    ids: Option<&Path>,
    subsets: &[String],
) -> anyhow::Result<AnswerSet> {
    let mut set = match (path.is_file(), subset) {
        (true, Some(s)) => sum2act_eval::input::load_converted_file(path, s),
        _ => sum2act_eval::load_answers(path),
    }
    .map_err(classify)?;
    if let Some(dir) = ids.filter(|p| p.is_dir()) {
        // StableToolBench's `--test_ids` folder: one `{subset}.json` per subset.
        let wanted = match subset {
            Some(s) => vec![s.to_string()],
            None if !subsets.is_empty() => subsets.to_vec(),
            None => set.subsets(),
        };
        for name in wanted {
            let file = dir.join(format!("{name}.json"));
            if !file.is_file() {
                return Err(BadInput(format!(
                    "--ids {}: no id file {name}.json for subset {name}",
                    dir.display()
                ))
                .into());
            }
            let ids = load_id_file(&file).map_err(|e| BadInput(e.to_string()))?;
            set.expect_ids(&name, &ids);
        }
    } else if let Some(ids_path) = ids {
        let ids = load_id_file(ids_path).map_err(|e| BadInput(e.to_string()))?;
        let name = match subset {
            Some(s) => s.to_string(),
            None => match set.subsets().as_slice() {
                [one] => one.clone(),
                many => {
                    return Err(BadInput(format!(
                        "--ids {}: the answers span {} subsets ({}); name one with --subset",
                        ids_path.display(),
                        many.len(),
                        many.join(", ")
                    ))
                    .into());
                }
            },
        };
        set.expect_ids(&name, &ids);
    }
    if ids.is_none() {
        expect_manifest_queries(path, &mut set);
    }
    set.restrict(subsets);
    if set.expected.is_empty() {
        return Err(BadInput(format!(
            "{}: no answers to evaluate{}",
            path.display(),
            if subsets.is_empty() {
                String::new()
            } else {
                format!(" in subsets {}", subsets.join(","))
            }
        ))
        .into());
    }
    Ok(set)
}

/// A run directory's answers should cover every query its manifest selects (data, subsets, limit,
/// shard): a query without an answer file (a shard not merged, a file lost) is missing, not absent
/// from the denominator. Left as found, with a warning, when the run's data cannot be read.
fn expect_manifest_queries(path: &Path, set: &mut AnswerSet) {
    let Ok(Some(manifest)) = sum2act_core::batch::Manifest::read(path) else {
        return;
    };
    if manifest.data.is_empty() || manifest.subsets.is_empty() {
        return;
    }
    let shard = manifest
        .shard
        .as_deref()
        .and_then(|s| sum2act_core::batch::Shard::parse_with_env(s, None).ok())
        .unwrap_or_default();
    let selected = sum2act_core::toolbench::DataDir::open(Path::new(&manifest.data))
        .map_err(sum2act_core::batch::BatchError::from)
        .and_then(|data| {
            sum2act_core::batch::selected_ids(&data, &manifest.subsets, manifest.limit, shard)
        });
    match selected {
        Ok(ids) => set.expect_also(
            ids.into_iter()
                .map(|(subset, id)| sum2act_eval::QueryKey::new(subset, id)),
        ),
        Err(e) => eprintln!(
            "warning: missing answers are counted against the answer files found, not the queries the run selected ({e})"
        ),
    }
}
