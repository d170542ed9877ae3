#!/usr/bin/env python3
"""The strong judge's entries of eval/judge_calibration.json, from the recorded verdicts of a reference run.

usage: judge_registry.py --work runs/reference/dev --labels eval/labels/strong_dev.json --data DATA
                         [--registry eval/judge_calibration.json] [--date YYYY-MM-DD]

For each judge mode and each half of the dev split (tune -> split "calibrate", report -> "report"), the
verdicts of every method's recorded `eval` run (judge/MODE/METHOD/verdicts.csv, one vote) are paired with
the hand labels of the same answers (Unsure labels left out), the five methods summed: agreement, Cohen's
kappa and the confusion matrix (rows: label Solved, Unsolved; columns: verdict Solved, Unsolved, Unsure).
The entries with judge_model "strong", the mode and the split are replaced; others are kept. These are the
figures `scripts/reference-runs.sh table` prints, so the registry and the tables cannot drift apart.
"""
import argparse
import json

from reference_table import MODES, chosen, episodes, kappa, verdicts

METHODS = "sum2act react dfsdt plan graph".split()
SPLITS = {"tune": ("calibrate", "queries 1-4 of each subset"), "report": ("report", "queries 5-8 of each subset")}


def entry(work, labels, data, half, mode, date, label_file):
    keep = chosen(data, half)
    pairs = []
    for m in METHODS:
        eps = episodes(work, m, keep)
        v = verdicts(work, mode, m)
        for k, e in eps.items():
            l = labels.get((k[0], k[1], m, e["model"], e["hash"]))
            if l and l["label"] != "Unsure" and k in v:
                pairs.append((l["label"], v[k]))
    cols = ["Solved", "Unsolved", "Unsure"]
    confusion = [[sum(1 for a, b in pairs if a == row and b == col) for col in cols] for row in cols[:2]]
    split, which = SPLITS[half]
    return {
        "judge_model": "strong",
        "mode": mode,
        "label_set": f"{label_file} ({which})",
        "split": split,
        "n": len(pairs),
        "agreement": sum(a == b for a, b in pairs) / len(pairs),
        "kappa": kappa(pairs),
        "confusion": confusion,
        "votes": 1,
        "measured": date,
        "command": f"scripts/reference-runs.sh unpack dev; scripts/judge_registry.py --work runs/reference/dev "
                   f"--labels {label_file} --data DATA: the recorded verdicts of the five methods' eval runs "
                   f"(judge/{mode}/METHOD/verdicts.csv, one vote) against the labels of the same answers, "
                   f"{which}, summed (the judge of readers playing a strong model, docs/reference-runs.md)",
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--labels", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--registry", default="eval/judge_calibration.json")
    ap.add_argument("--date", required=True)
    a = ap.parse_args()
    labels = {}
    for l in json.load(open(a.labels))["labels"]:
        labels[(l["subset"], l["query_id"], l["method"], l["model"], l["answer_hash"])] = l
    reg = json.load(open(a.registry))
    for half in SPLITS:
        for mode in MODES:
            new = entry(a.work, labels, a.data, half, mode, a.date, a.labels)
            for i, old in enumerate(reg["entries"]):
                if (old.get("judge_model"), old.get("mode"), old.get("split")) == ("strong", mode, new["split"]):
                    new["prompts"] = old.get("prompts", {})
                    reg["entries"][i] = {k: new[k] for k in old if k in new} | new
                    break
            else:
                reg["entries"].append(new)
            print(f"{mode} {new['split']}: {new['agreement']:.1%} kappa {new['kappa']:.2f} n = {new['n']}")
    with open(a.registry, "w") as f:
        json.dump(reg, f, indent=2, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
