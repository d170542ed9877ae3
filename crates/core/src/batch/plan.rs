//! Which queries a batch runs: subsets, a per-subset limit, and a deterministic shard of the result.

use std::path::{Path, PathBuf};

use crate::toolbench::{DataDir, Query, Task};

use super::BatchError;

/// Environment variable a Kubernetes Indexed Job sets to each pod's index (`--shard auto/N`).
pub(crate) const SHARD_INDEX_ENV: &str = "JOB_COMPLETION_INDEX";

/// One slice of `count` disjoint slices covering all selected queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { index: 0, count: 1 }
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Parses `I/N` (0-based index), or `auto/N` taking the index from `$JOB_COMPLETION_INDEX`.
    pub fn parse(text: &str) -> Result<Self, BatchError> {
        Self::parse_with_env(text, std::env::var(SHARD_INDEX_ENV).ok().as_deref())
    }

    /// `parse` with the environment value given explicitly (testable without touching the process env).
    pub fn parse_with_env(text: &str, env_index: Option<&str>) -> Result<Self, BatchError> {
        let bad = |why: &str| {
            BatchError::BadInput(format!("--shard {text}: {why} (expected I/N or auto/N)"))
        };
        let (index, count) = text.split_once('/').ok_or_else(|| bad("missing `/`"))?;
        let count: u32 = count
            .trim()
            .parse()
            .map_err(|_| bad("N is not a positive integer"))?;
        if count == 0 {
            return Err(bad("N must be at least 1"));
        }
        let index = index.trim();
        let index: u32 = if index == "auto" {
            let value = env_index.ok_or_else(|| {
                bad(&format!(
                    "`auto` needs ${SHARD_INDEX_ENV}, which is not set"
                ))
            })?;
            value.trim().parse().map_err(|_| {
                bad(&format!(
                    "${SHARD_INDEX_ENV}={value} is not a non-negative integer"
                ))
            })?
        } else {
            index
                .parse()
                .map_err(|_| bad("I is not a non-negative integer"))?
        };
        if index >= count {
            return Err(bad(&format!(
                "index {index} is not below the shard count {count}"
            )));
        }
        Ok(Shard { index, count })
    }

    /// Whether the item at `position` of the canonical order belongs to this shard. Round-robin over
    /// the order keeps shards balanced across subsets and query difficulty.
    pub(crate) fn contains(&self, position: usize) -> bool {
        position % self.count as usize == self.index as usize
    }
}

/// A query that cannot run (its APIs are not in the catalogue).
#[derive(Debug, Clone)]
pub struct SkippedQuery {
    pub subset: String,
    pub query_id: u64,
    pub reason: String,
}

/// The queries of this batch (this shard), in canonical (subset, query id) order.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub subsets: Vec<String>,
    pub tasks: Vec<Task>,
    pub skipped: Vec<SkippedQuery>,
}

/// Selects the queries: the given subsets (all when empty), the first `limit` queries of each in file
/// order, sorted by (subset, query id), then this shard's slice, each resolved into a task by
/// `resolve` (the catalogue's tools, retrieved tools, the whole catalogue).
pub fn select_with(
    data: &DataDir,
    subsets: &[String],
    limit: Option<usize>,
    shard: Shard,
    resolve: impl Fn(&str, &Query) -> Result<Task, String>,
) -> Result<Selection, BatchError> {
    let (names, chosen) = chosen_queries(data, subsets, limit, shard)?;
    let mut selection = Selection {
        subsets: names,
        ..Selection::default()
    };
    for (subset, query) in chosen {
        match resolve(&subset, &query) {
            Ok(task) => selection.tasks.push(task),
            Err(reason) => selection.skipped.push(SkippedQuery {
                subset,
                query_id: query.query_id,
                reason,
            }),
        }
    }
    Ok(selection)
}

/// The (subset, query id) of every query a batch with these settings selects, in order: what a run
/// directory's manifest says its answers should cover (`eval` counts the absent ones as missing).
pub fn selected_ids(
    data: &DataDir,
    subsets: &[String],
    limit: Option<usize>,
    shard: Shard,
) -> Result<Vec<(String, u64)>, BatchError> {
    let (_, chosen) = chosen_queries(data, subsets, limit, shard)?;
    Ok(chosen
        .into_iter()
        .map(|(subset, q)| (subset, q.query_id))
        .collect())
}

/// Queries with their subset, in canonical (subset, query id) order.
type SubsetQueries = Vec<(String, Query)>;

/// The subset names (sorted) and this shard's queries of them, in canonical order.
fn chosen_queries(
    data: &DataDir,
    subsets: &[String],
    limit: Option<usize>,
    shard: Shard,
) -> Result<(Vec<String>, SubsetQueries), BatchError> {
    let mut names: Vec<String> = if subsets.is_empty() {
        data.subsets()?
    } else {
        subsets.to_vec()
    };
    names.sort();
    names.dedup();
    if names.is_empty() {
        return Err(BatchError::BadInput(format!(
            "{}: no query files in queries/",
            data.root().display()
        )));
    }
    let mut all = Vec::new();
    for subset in &names {
        let mut queries = data.queries(subset)?;
        if let Some(n) = limit {
            queries.truncate(n);
        }
        queries.sort_by_key(|q| q.query_id);
        all.extend(queries.into_iter().map(|q| (subset.clone(), q)));
    }
    let chosen = all
        .into_iter()
        .enumerate()
        .filter(|(position, _)| shard.contains(*position))
        .map(|(_, item)| item)
        .collect();
    Ok((names, chosen))
}

/// Where a query's answer file lives: `RUN_DIR/{subset}/{query_id}_{method}.json`.
pub fn answer_path(run_dir: &Path, subset: &str, query_id: u64, method: &str) -> PathBuf {
    run_dir
        .join(subset)
        .join(format!("{query_id}_{method}.json"))
}

/// Where repeat `repeat` of a query's answer lives: repeat 0 at its ToolBench name
/// ([`answer_path`]), repeat `r > 0` beside it as `{query_id}_{method}.r{r}.json` (its `.error`
/// file is `{query_id}_{method}.r{r}.error`). Readers that expect one file per query and method
/// take the `.rN` files for another method name, so the StableToolBench export skips them.
pub(crate) fn answer_path_repeat(
    run_dir: &Path,
    subset: &str,
    query_id: u64,
    method: &str,
    repeat: u32,
) -> PathBuf {
    if repeat == 0 {
        return answer_path(run_dir, subset, query_id, method);
    }
    run_dir
        .join(subset)
        .join(format!("{query_id}_{method}.r{repeat}.json"))
}

/// The repeat an answer file holds, from its name: `R` for `{id}_{method}.rR.json`, else 0.
pub(crate) fn repeat_of(file_name: &str) -> u32 {
    let stem = file_name.strip_suffix(".json").unwrap_or(file_name);
    match stem.rsplit_once(".r") {
        Some((_, r)) if !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()) => {
            r.parse().unwrap_or(0)
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeat_names_round_trip() {
        let dir = Path::new("run");
        assert_eq!(
            answer_path_repeat(dir, "G1", 7, "react", 0),
            answer_path(dir, "G1", 7, "react")
        );
        let r2 = answer_path_repeat(dir, "G1", 7, "react", 2);
        assert_eq!(r2, Path::new("run/G1/7_react.r2.json"));
        assert_eq!(
            r2.with_extension("error"),
            Path::new("run/G1/7_react.r2.error")
        );
        let name = |p: &Path| p.file_name().unwrap().to_string_lossy().to_string();
        assert_eq!(repeat_of(&name(&r2)), 2);
        assert_eq!(repeat_of("7_react.json"), 0);
        assert_eq!(repeat_of("7_DFS_woFilter_w2.json"), 0);
    }

    #[test]
    fn parses_shards() {
        assert_eq!(
            Shard::parse_with_env("1/4", None).ok(),
            Some(Shard { index: 1, count: 4 })
        );
        assert_eq!(
            Shard::parse_with_env("auto/3", Some("2")).ok(),
            Some(Shard { index: 2, count: 3 })
        );
        for bad in ["4/4", "1", "x/2", "1/0", "auto/3"] {
            let err = Shard::parse_with_env(bad, None)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(err.contains("--shard"), "{bad}: {err}");
        }
        let err = Shard::parse_with_env("auto/3", Some("7"))
            .err()
            .map(|e| e.to_string());
        assert!(err.unwrap_or_default().contains("not below"));
    }

    #[test]
    fn shards_are_disjoint_and_cover_everything() {
        for count in 1..6u32 {
            let mut owners = vec![0u32; 23];
            for index in 0..count {
                let shard = Shard { index, count };
                for (pos, owner) in owners.iter_mut().enumerate() {
                    if shard.contains(pos) {
                        *owner += 1;
                    }
                }
            }
            assert!(owners.iter().all(|&o| o == 1), "count {count}: {owners:?}");
        }
    }
}
