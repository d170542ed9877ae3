//! Issue 42 item 15: the reference method table (`scripts/reference_table.py`, printed by the demo's
//! strong-model replay) never shows kappa 1.00 for labels and verdicts that are all alike: kappa is 0/0
//! there, and the table says so.

use std::path::Path;
use std::process::Command;

use serde_json::json;

/// A reference set's folder with `n` answers of sum2act, all labelled and judged `label`.
fn work_all_alike(dir: &Path, n: u64, label: &str) -> std::path::PathBuf {
    let answers = dir.join("runs/sum2act/G1_instruction");
    std::fs::create_dir_all(&answers).unwrap();
    let verdicts = dir.join("judge/evidence/sum2act");
    std::fs::create_dir_all(&verdicts).unwrap();
    let mut csv = String::from("subset,query_id,labels\n");
    let mut labels = Vec::new();
    for id in 1..=n {
        let answer = format!("answer {id}");
        let file = json!({"sum2act": {"subset": "G1_instruction", "query_id": id, "model": "strong",
                                      "finish": "give_answer", "answer": answer, "counters": {}}});
        std::fs::write(answers.join(format!("{id}_sum2act.json")), file.to_string()).unwrap();
        csv.push_str(&format!("G1_instruction,{id},{label}\n"));
        // The hash `sum2act eval` and the script both take of the final answer.
        let hash = sum2act_eval::labels::answer_hash(&answer);
        labels.push(
            json!({"subset": "G1_instruction", "query_id": id, "method": "sum2act",
                           "model": "strong", "answer_hash": hash, "label": label}),
        );
    }
    std::fs::write(verdicts.join("verdicts.csv"), csv).unwrap();
    let file = dir.join("labels.json");
    std::fs::write(&file, json!({"labels": labels}).to_string()).unwrap();
    file
}

#[test]
fn kappa_of_all_alike_labels_is_said_to_be_undefined_not_one() {
    let tmp = tempfile::tempdir().unwrap();
    let labels = work_all_alike(tmp.path(), 6, "Solved");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/reference_table.py");
    let Ok(out) = Command::new("python3")
        .arg(script)
        .arg("--work")
        .arg(tmp.path())
        .arg("--labels")
        .arg(&labels)
        .args(["--methods", "sum2act"])
        .output()
    else {
        eprintln!("skipped: no python3");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("6 of 6"), "{text}");
    assert!(!text.contains("1.00"), "kappa shown as perfect: {text}");
    assert!(text.contains("kappa undefined: all Solved"), "{text}");
}
