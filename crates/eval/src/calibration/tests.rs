use std::collections::BTreeMap;

use super::*;

fn entry(model: &str, mode: Verdicts, split: Split, agreement: f64) -> Entry {
    Entry {
        judge_model: model.into(),
        mode,
        label_set: "eval/labels/x.json".into(),
        split,
        n: 40,
        agreement,
        kappa: agreement - 0.3,
        confusion: vec![vec![10, 2, 0], vec![3, 25, 0]],
        prompts: BTreeMap::from([("judge_part".to_string(), "aaaa".to_string())]),
        votes: 1,
        measured: String::new(),
        command: String::new(),
    }
}

fn registry() -> Registry {
    Registry {
        format: 2,
        description: String::new(),
        entries: vec![
            entry("strong", Verdicts::Evidence, Split::Calibrate, 0.92),
            entry("strong", Verdicts::Tooleval, Split::Calibrate, 0.83),
            entry("strong", Verdicts::Tooleval, Split::Report, 0.99),
            entry("strong", Verdicts::Evidence, Split::Report, 0.90),
            entry("small", Verdicts::Evidence, Split::All, 0.65),
            entry("small", Verdicts::Tooleval, Split::All, 0.50),
            entry("strong", Verdicts::Preference, Split::Calibrate, 0.99),
        ],
    }
}

fn prompts(hash: &str) -> BTreeMap<String, String> {
    BTreeMap::from([("judge_part".to_string(), hash.to_string())])
}

#[test]
fn the_default_mode_is_the_best_measured_on_the_calibrate_half() {
    let r = registry();
    let c = r.choose("strong", &prompts("aaaa"));
    assert_eq!(c.mode, JudgeMode::Evidence, "{}", c.why);
    assert_eq!(c.chosen_by, "registry");
    assert!(
        c.why.contains("92.0%") && c.why.contains("calibrate half"),
        "{}",
        c.why
    );
    // The report half is never used to choose (tooleval's 99% there does not count).
    assert_eq!(
        r.choose("small", &prompts("aaaa")).mode,
        JudgeMode::Evidence
    );
    // An unmeasured model takes the best-measured mode of any model, and says whose.
    let other = r.choose("new-model", &prompts("aaaa"));
    assert_eq!(other.mode, JudgeMode::Evidence);
    assert!(other.why.contains("strong's"), "{}", other.why);
    // Figures of earlier prompts count only when nothing newer exists, and say so.
    let old = r.choose("strong", &prompts("bbbb"));
    assert!(old.why.contains("earlier prompts"), "{}", old.why);
    // An exact tie goes to the evidence judge, whatever the order of the entries.
    for order in [[0, 1], [1, 0]] {
        let tied = [
            entry("tie", Verdicts::Tooleval, Split::All, 0.5),
            entry("tie", Verdicts::Evidence, Split::All, 0.5),
        ];
        let r = Registry {
            format: 2,
            description: String::new(),
            entries: order.iter().map(|&i| tied[i].clone()).collect(),
        };
        assert_eq!(r.choose("tie", &prompts("aaaa")).mode, JudgeMode::Evidence);
    }
    let empty = Registry::default().choose("strong", &prompts("aaaa"));
    assert_eq!(
        (empty.mode, empty.chosen_by),
        (JudgeMode::Evidence, "default")
    );
}

#[test]
fn the_printed_figure_is_the_held_out_one() {
    let r = registry();
    let f = r
        .figure("strong", Verdicts::Evidence, &prompts("aaaa"))
        .unwrap();
    assert_eq!((f.split, f.agreement), (Split::Report, 0.90));
    let c = f.calibration();
    assert_eq!(c.confusion, [[10, 2, 0], [3, 25, 0]]);
    assert_eq!(
        (c.label_set.as_str(), c.split.as_str()),
        ("eval/labels/x.json", "report")
    );
    assert!(
        r.figure("small", Verdicts::Preference, &prompts("aaaa"))
            .is_none()
    );
}

#[test]
fn halves_are_fixed_by_query_and_split_the_queries() {
    let keys: Vec<QueryKey> = (0..200)
        .map(|i| QueryKey::new("G1_instruction", i))
        .collect();
    let calibrate = keys.iter().filter(|k| half(k) == Split::Calibrate).count();
    assert!((80..=120).contains(&calibrate), "{calibrate} of 200");
    // Stable across machines and releases: a few known values.
    assert_eq!(
        half(&QueryKey::new("G1_instruction", 101)),
        half(&QueryKey::new("G1_instruction", 101))
    );
    for k in &keys {
        assert!(Split::All.holds(k));
        assert_ne!(Split::Calibrate.holds(k), Split::Report.holds(k));
    }
    assert_eq!("report".parse::<Split>(), Ok(Split::Report));
    assert!("half".parse::<Split>().is_err());
}

#[test]
fn the_registry_round_trips_and_replaces_a_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reg.json");
    let mut r = Registry::load(&path).unwrap();
    assert!(r.entries.is_empty());
    r.record(entry("m", Verdicts::Evidence, Split::Report, 0.7));
    r.record(entry("m", Verdicts::Evidence, Split::Report, 0.8));
    r.record(entry("m", Verdicts::Evidence, Split::Calibrate, 0.6));
    r.save(&path).unwrap();
    let back = Registry::load(&path).unwrap();
    assert_eq!(back.entries.len(), 2);
    assert_eq!(back.entries[1].agreement, 0.8);
    std::fs::write(&path, "{\"format\": 2}").unwrap();
    let err = Registry::load(&path).unwrap_err().to_string();
    assert!(
        err.contains("reg.json") && err.contains("registry"),
        "{err}"
    );
    assert!(
        Registry::shipped().format == 2,
        "the shipped registry parses"
    );
}

#[test]
fn pooled_runs_give_per_method_rates_and_only_labels_stale_everywhere() {
    use super::measure::{RunRows, pool};
    use crate::Label::{Solved, Unsolved};
    use crate::labels::Matching;
    let run = |method: &str,
               pairs: Vec<(&str, crate::Label, crate::Label, f64)>,
               stale: &[&str]| RunRows {
        method: method.into(),
        matching: Matching {
            pairs: pairs
                .iter()
                .map(|(n, h, j, _)| (n.to_string(), *h, *j))
                .collect(),
            scores: pairs.iter().map(|p| p.3).collect(),
            stale: stale.iter().map(|s| s.to_string()).collect(),
            ..Matching::default()
        },
    };
    let runs = vec![
        // Two versions of one method: the label of G1/2 matches the second run's answer.
        run(
            "sum2act",
            vec![("G1/1 sum2act", Solved, Solved, 1.0)],
            &["G1/2 sum2act"],
        ),
        run(
            "sum2act",
            vec![("G1/2 sum2act", Unsolved, Solved, 2.0 / 3.0)],
            &["G1/1 sum2act", "G1/3 sum2act"],
        ),
        run("react", vec![("G1/1 react", Unsolved, Unsolved, 0.0)], &[]),
    ];
    let m = pool("j", Verdicts::Evidence, Split::All, &runs).unwrap();
    assert_eq!(m.calibration.n, 3);
    assert_eq!(m.calibration.confusion, [[1, 0, 0], [1, 1, 0]]);
    assert_eq!(m.stale, vec!["G1/3 sum2act".to_string()]);
    let s = m.methods.iter().find(|r| r.method == "sum2act").unwrap();
    assert_eq!((s.n, s.labelled), (2, 50.0));
    assert!((s.judged - 250.0 / 3.0).abs() < 1e-9);
    assert!((s.difference() - (250.0 / 3.0 - 50.0)).abs() < 1e-9);
    assert!(pool("j", Verdicts::Evidence, Split::All, &[]).is_none());
}

#[test]
fn each_pass_rate_mode_maps_to_its_verdicts_and_back_and_preference_to_none() {
    for mode in [JudgeMode::Evidence, JudgeMode::Tooleval] {
        assert_eq!(Verdicts::from(mode).judge_mode(), Some(mode));
    }
    assert_eq!(Verdicts::Preference.judge_mode(), None);
}

/// A `strong` entry on `label_set` whose figures are those of its confusion matrix.
fn measured(mode: Verdicts, split: Split, label_set: &str, confusion: [[u64; 3]; 2]) -> Entry {
    let c = crate::stats::from_confusion("", confusion);
    Entry {
        label_set: label_set.into(),
        n: c.n,
        agreement: c.accuracy,
        kappa: c.kappa,
        confusion: confusion.iter().map(|r| r.to_vec()).collect(),
        ..entry("strong", mode, split, 0.0)
    }
}

/// `agree` of `n` answers judged right, half of them labelled Solved.
fn right(agree: u64, n: u64) -> [[u64; 3]; 2] {
    let (wrong, solved) = (n - agree, n / 2);
    [
        [solved - wrong / 2, wrong / 2, 0],
        [wrong - wrong / 2, n - solved - (wrong - wrong / 2), 0],
    ]
}

fn of(entries: Vec<Entry>) -> Registry {
    Registry {
        format: 2,
        description: String::new(),
        entries,
    }
}

#[test]
fn the_default_mode_pools_the_label_sets_of_a_model() {
    use Verdicts::{Evidence, Tooleval};
    let (a, b) = ("eval/labels/a.json (first)", "eval/labels/b.json");
    let r = of(vec![
        // On a alone evidence wins (95% against 94%); over a and b tooleval does (92% against 87.5%).
        measured(Evidence, Split::Calibrate, a, right(95, 100)),
        measured(Tooleval, Split::Calibrate, a, right(94, 100)),
        measured(Evidence, Split::All, b, right(80, 100)),
        measured(Tooleval, Split::All, b, right(90, 100)),
    ]);
    let c = r.choose("strong", &prompts("aaaa"));
    assert_eq!(c.mode, JudgeMode::Tooleval, "{}", c.why);
    assert!(
        c.why.contains("pooled over 2 label sets: 92.0%, kappa 0.84, n = 200 (eval/labels/a.json calibrate half + eval/labels/b.json all labels)"),
        "{}",
        c.why
    );
    let e = c.entry.unwrap();
    assert_eq!((e.n, e.mode), (200, Tooleval));
    assert_eq!(e.confusion, vec![vec![92, 8, 0], vec![8, 92, 0]]);
    // The very figures `stats::calibration` gives the 200 label pairs themselves.
    use crate::Label::{Solved, Unsolved};
    let cells = [
        (Solved, Solved, 92),
        (Solved, Unsolved, 8),
        (Unsolved, Solved, 8),
    ];
    let mut labels: Vec<_> = cells
        .iter()
        .flat_map(|&(h, j, k)| std::iter::repeat_n((h, j), k))
        .collect();
    labels.extend(std::iter::repeat_n((Unsolved, Unsolved), 92));
    let pairs = crate::stats::calibration("", &labels);
    assert_eq!((e.agreement, e.kappa), (pairs.accuracy, pairs.kappa));
    // An unmeasured model takes the pooled figures of another, and says whose.
    let other = r.choose("new-model", &prompts("aaaa"));
    assert_eq!(other.mode, JudgeMode::Tooleval);
    assert!(
        other.why.contains("pooled") && other.why.contains("strong's"),
        "{}",
        other.why
    );
}

#[test]
fn overlapping_label_sets_are_counted_once() {
    use Verdicts::{Evidence, Tooleval};
    let ab = "eval/labels/a.json + eval/labels/b.json";
    let evidence = vec![
        measured(Evidence, Split::Calibrate, ab, right(180, 200)),
        // Each shares a file with the larger set above: b, b by its bare name, and every file.
        measured(Evidence, Split::All, "eval/labels/b.json", right(100, 100)),
        measured(
            Evidence,
            Split::All,
            "eval/labels/*.json (all)",
            right(50, 50),
        ),
        measured(
            Evidence,
            Split::All,
            "eval/labels/c.json + b.json",
            right(30, 30),
        ),
        measured(Evidence, Split::All, "eval/labels/d.json", right(10, 10)),
    ];
    let pooled = of(evidence.clone()).choose("strong", &prompts("aaaa"));
    let e = pooled.entry.unwrap();
    assert_eq!(e.n, 210, "{}", pooled.why);
    assert_eq!(
        e.label_set,
        "eval/labels/a.json, eval/labels/b.json calibrate half + eval/labels/d.json all labels"
    );
    // Counted twice, evidence would reach 93.3%; counted once it stays below tooleval's 92%.
    let mut both = evidence;
    both.truncate(4);
    both.push(measured(Tooleval, Split::Calibrate, ab, right(184, 200)));
    let c = of(both).choose("strong", &prompts("aaaa"));
    assert_eq!(c.mode, JudgeMode::Tooleval, "{}", c.why);
    assert!(!c.why.contains("pooled"), "{}", c.why);
    // A figure without its confusion matrix is never added to another: it stands alone.
    let mut bare = measured(Evidence, Split::All, "eval/labels/e.json", right(99, 100));
    bare.confusion.clear();
    let alone = of(vec![
        bare,
        measured(Evidence, Split::All, "eval/labels/f.json", right(1, 10)),
    ])
    .choose("strong", &prompts("aaaa"));
    assert_eq!(alone.entry.unwrap().n, 100, "{}", alone.why);
}

#[test]
fn report_halves_never_count_and_stale_figures_only_without_fresh_ones() {
    use Verdicts::{Evidence, Tooleval};
    let mut stale = measured(Tooleval, Split::All, "eval/labels/b.json", right(500, 500));
    stale.prompts = prompts("old");
    let r = of(vec![
        measured(
            Evidence,
            Split::Calibrate,
            "eval/labels/a.json",
            right(90, 100),
        ),
        measured(
            Tooleval,
            Split::Calibrate,
            "eval/labels/a.json",
            right(88, 100),
        ),
        measured(
            Tooleval,
            Split::Report,
            "eval/labels/c.json",
            right(900, 900),
        ),
        stale,
    ]);
    let c = r.choose("strong", &prompts("aaaa"));
    assert_eq!(c.mode, JudgeMode::Evidence, "{}", c.why);
    assert!(
        !c.why.contains("pooled") && !c.why.contains("earlier prompts"),
        "{}",
        c.why
    );
    // With every prompt changed, the stale figures pool (the report half still never does).
    let old = r.choose("strong", &prompts("cccc"));
    assert_eq!(old.mode, JudgeMode::Tooleval, "{}", old.why);
    assert_eq!(old.entry.unwrap().n, 600);
    assert!(
        old.why.contains("pooled over 2 label sets") && old.why.contains("earlier prompts"),
        "{}",
        old.why
    );
}
