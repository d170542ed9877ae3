#!/usr/bin/env python3
"""The method table of the strong-model reference runs (scripts/reference-runs.sh table).

usage: reference_table.py --work DIR --labels LABELS.json [--data DATA --half tune|report|all] [--methods "..."]
                          [--bin SUM2ACT] [--allow-differences]

DIR is a reference set's folder: runs/<method>/ (answer files with our record) and judge/<mode>/<method>/
(`sum2act eval` output: verdicts.csv). A run named METHOD@BUDGET ran under that budget preset; runs of one
budget form one table, and `sum2act settings` must find that they differ only in the method (else the table is
refused, naming the settings, unless --allow-differences). Per method: solved by the hand labels with a Wilson
95% interval, each judge mode's pass rate beside its agreement (and Cohen's kappa) with the labels on the same
answers, parts delivered of parts asked (labels), LLM calls and tokens per query; then solved by labels per
subset. --half picks the dev split's halves by position in each subset file (tune: the first 4 queries,
report: the next 4), so development figures and reported figures never mix."""
import argparse, csv, glob, hashlib, json, math, os, subprocess, sys

from method_table import final_text  # the final answer as `sum2act eval` hashes it

MODES = ("evidence", "tooleval")


def chosen(data, half):
    """(subset, query_id) pairs of the half, by position in each subset's query file; None: all."""
    if half == "all" or not data:
        return None
    keep = set()
    for f in glob.glob(os.path.join(data, "queries", "*.json")):
        subset = os.path.basename(f)[:-5]
        ids = [q["query_id"] for q in json.load(open(f))]
        part = ids[:4] if half == "tune" else ids[4:8]
        keep.update((subset, i) for i in part)
    return keep


def episodes(work, method, keep):
    out = {}
    for f in glob.glob(os.path.join(work, "runs", method, "*", "*.json")):
        if os.path.basename(f).count(".") > 1:
            continue
        d = json.load(open(f))
        rec = d.get("sum2act")
        if not rec or (keep is not None and (rec["subset"], rec["query_id"]) not in keep):
            continue
        c = rec.get("counters", {})
        out[(rec["subset"], rec["query_id"])] = {
            "model": rec["model"],
            "hash": hashlib.sha256(final_text(d).strip().encode()).hexdigest()[:16],
            "calls": c.get("llm_calls", 0),
            "tokens": c.get("prompt_tokens", 0) + c.get("completion_tokens", 0),
            "tool_calls": c.get("tool_calls", 0),
        }
    return out


def verdicts(work, mode, method):
    path = os.path.join(work, "judge", mode, method, "verdicts.csv")
    if not os.path.exists(path):
        return {}
    out = {}
    for r in csv.DictReader(open(path)):
        out[(r["subset"], int(r["query_id"]))] = r["labels"].split(";")[0]
    return out


def kappa(pairs):
    """Cohen's kappa; None without pairs or when it is undefined: with every label and verdict alike,
    chance agreement is 1 and kappa is 0/0 (not a perfect 1.00)."""
    n = len(pairs)
    if not n:
        return None
    po = sum(a == b for a, b in pairs) / n
    cats = {x for p in pairs for x in p}
    pe = sum((sum(a == c for a, _ in pairs) / n) * (sum(b == c for _, b in pairs) / n) for c in cats)
    return None if pe == 1 else (po - pe) / (1 - pe)


def kappa_text(pairs):
    """Kappa to two decimals, or why there is none."""
    k = kappa(pairs)
    if k is not None:
        return f"{k:.2f}"
    return "-" if not pairs else f"undefined: all {pairs[0][0]}"


def ci(values, z=1.96):
    """Wilson score 95% interval of a proportion, in percent (never [100-100] at n of n)."""
    n = len(values)
    if not n:
        return (0.0, 0.0)
    p = sum(values) / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (100 * max(0.0, centre - half), 100 * min(1.0, centre + half))


def check_settings(binary, work, methods, allow):
    """`sum2act settings` over the runs of one table: refuses (exit 2) runs that differ in more than the method."""
    if not binary:
        return
    dirs = [os.path.join(work, "runs", m) for m in methods if os.path.isdir(os.path.join(work, "runs", m))]
    if len(dirs) < 2:
        return
    args = [binary, "settings", *dirs] + (["--allow-differences"] if allow else [])
    r = subprocess.run(args, capture_output=True, text=True)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        sys.exit(r.returncode)
    print(r.stdout.strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--labels", required=True, action="append")
    ap.add_argument("--data")
    ap.add_argument("--half", default="all", choices=("tune", "report", "all"))
    ap.add_argument("--methods", default="sum2act react dfsdt plan graph")
    ap.add_argument("--bin", help="the sum2act binary, to check the runs' settings")
    ap.add_argument("--allow-differences", action="store_true")
    a = ap.parse_args()
    groups = {}
    for m in a.methods.split():
        groups.setdefault(m.split("@")[1] if "@" in m else "", []).append(m)
    for budget, methods in groups.items():
        if budget:
            print(f"\n## runs with the `{budget}` settings (budget preset or method variant)\n")
        table(a, methods)


def table(a, methods):
    labels = {}
    for f in a.labels:
        for l in json.load(open(f))["labels"]:
            labels[(l["subset"], l["query_id"], l["method"], l["model"], l["answer_hash"])] = l
    keep = chosen(a.data, a.half)
    rows, by_subset = [], {}
    check_settings(a.bin, a.work, methods, a.allow_differences)
    for m in methods:
        eps = episodes(a.work, m, keep)
        if not eps:
            continue
        lab = {k: labels.get((k[0], k[1], m.split("@")[0], e["model"], e["hash"])) for k, e in eps.items()}
        solved = [1.0 if l and l["label"] == "Solved" else 0.0 for l in lab.values() if l]
        lo, hi = ci(solved)
        row = {
            "method": m.split("@")[0], "n": len(eps), "labelled": len(solved), "solved": int(sum(solved)), "lo": lo, "hi": hi,
            "asked": sum(len(l.get("parts_asked", [])) for l in lab.values() if l),
            "delivered": sum(len(l.get("parts_delivered", [])) for l in lab.values() if l),
            "calls": sum(e["calls"] for e in eps.values()) / len(eps),
            "tokens": sum(e["tokens"] for e in eps.values()) / len(eps),
            "tool_calls": sum(e["tool_calls"] for e in eps.values()) / len(eps),
        }
        for mode in MODES:
            v = verdicts(a.work, mode, m)
            judged = [k for k in eps if k in v]
            row[mode] = 100 * sum(v[k] == "Solved" for k in judged) / len(judged) if judged else None
            pairs = [(lab[k]["label"], v[k]) for k in judged if lab.get(k) and lab[k]["label"] != "Unsure"]
            row[mode + "_agree"] = 100 * sum(x == y for x, y in pairs) / len(pairs) if pairs else None
            row[mode + "_kappa"] = kappa_text(pairs)
        rows.append(row)
        for k, l in lab.items():
            if l:
                s = by_subset.setdefault(k[0], {}).setdefault(m, [0, 0])
                s[0] += l["label"] == "Solved"
                s[1] += 1
    fmt = lambda x, f: "-" if x is None else f.format(x)
    print(f"half: {a.half}")
    print("| method | solved by labels [95% CI] | evidence judge pass (agreement, kappa) | tooleval judge pass "
          "(agreement, kappa) | parts delivered / asked | LLM calls / query | tool calls / query | tokens / query |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        judge = [f"{fmt(r[m], '{:.1f}')} ({fmt(r[m + '_agree'], '{:.0f}%')}, {r[m + '_kappa']})" for m in MODES]
        print(f"| {r['method']} | {r['solved']} of {r['labelled']} ({100 * r['solved'] / max(r['labelled'], 1):.1f}) "
              f"[{r['lo']:.1f}–{r['hi']:.1f}] | {judge[0]} | {judge[1]} | {r['delivered']}/{r['asked']} | "
              f"{r['calls']:.1f} | {r['tool_calls']:.1f} | {r['tokens']:,.0f} |")
    names = [r["method"] for r in rows]
    print("\n| subset | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for s in sorted(by_subset):
        cells = [f"{by_subset[s][m][0]}/{by_subset[s][m][1]}" if m in by_subset[s] else "-" for m in methods]
        print(f"| {s} | " + " | ".join(cells) + " |")
    for mode in MODES:
        pairs = []
        for m in methods:
            eps = episodes(a.work, m, keep)
            v = verdicts(a.work, mode, m)
            for k, e in eps.items():
                l = labels.get((k[0], k[1], m.split("@")[0], e["model"], e["hash"]))
                if l and l["label"] != "Unsure" and k in v:
                    pairs.append((l["label"], v[k]))
        if pairs:
            agree = 100 * sum(x == y for x, y in pairs) / len(pairs)
            print(f"\n{mode} judge against the labels, all methods: {agree:.1f}% agreement, kappa "
                  f"{kappa_text(pairs)}, n = {len(pairs)}")


if __name__ == "__main__":
    main()
