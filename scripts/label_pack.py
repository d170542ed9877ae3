#!/usr/bin/env python3
"""Blind labelling of a reference set: anonymised episode files for labellers, and their labels back.

  label_pack.py pack --work DIR --out PACK --key KEY.json [--methods "..."] [--double 0.25] [--seed 7]
                     [--skip-labelled LABELS.json]
  label_pack.py merge --pack PACK --key KEY.json --labels OUT.json --description "..." [--data SUFFIX]

`pack` writes PACK/episodes/E###.md, one per answer of every run under DIR/runs/ (METHOD or METHOD@BUDGET),
in a shuffled order that hides the method: the request, the offered APIs, every step with the WHOLE tool
reply (the answer file keeps it), DFSDT's other branches (the earlier
attempts its model was shown), refused Finish steps, and the final answer. No method, model, budget or judge
output appears. KEY.json (kept out of PACK: not for labellers) maps each episode to its answer; PACK/assignments/*.txt
split the episodes between labellers, a share of them (--double) given to two.

`merge` reads PACK/labels/*.jsonl (one JSON object per line: episode, label, parts_asked, parts_delivered,
reason, cause), writes the label file (format 2: the first labeller's label per answer) and prints the
agreement between labellers on the answers labelled twice."""
import argparse, glob, hashlib, json, os, random

from method_table import final_text

WHOLE_CAP = 20_000  # characters of a whole reply shown to a labeller


def episodes(work, methods):
    for run in sorted(os.listdir(os.path.join(work, "runs"))):
        if methods and run not in methods:
            continue
        for f in sorted(glob.glob(os.path.join(work, "runs", run, "*", "*.json"))):
            if os.path.basename(f).count(".") > 1:
                continue
            d = json.load(open(f))
            if d.get("sum2act"):
                yield run, d


def shown(step):
    """The whole reply. How much of it the agent read is not said: it would hint at the budget, and the
    rubric does not depend on it (an answer that calls a list cut off while the reply held it fails)."""
    obs = step.get("observation", {})
    whole = json.dumps({"error": obs.get("error", ""), "response": obs.get("response", "")}, ensure_ascii=False)
    return whole[:WHOLE_CAP], ""


def tree_attempts(d):
    """DFSDT's calls off the answer's path: (action, input, observation) of every Action Input node."""
    tree = d.get("answer_generation", {}).get("tree") or d.get("tree") or {}
    out = []

    def walk(node, action):
        if not isinstance(node, dict):
            return
        kind = node.get("node_type")
        if kind == "Action":
            action = node.get("description", "")
        if kind == "Action Input" and node.get("observation") is not None:
            out.append((action, node.get("description", ""), node.get("observation", "")))
        for c in node.get("children", []):
            walk(c, action)

    walk(tree.get("tree", tree), "")
    return out


def render(d):
    rec = d["sum2act"]
    lines = [f"# Request\n\n{rec['query']}\n", "# APIs offered\n"]
    for fn in d.get("answer_generation", {}).get("function", []):
        if isinstance(fn, dict) and fn.get("name") != "Finish":
            lines.append(f"- `{fn.get('name')}`: {str(fn.get('description', ''))[:300]}")
    lines.append("\n# Steps (whole tool replies)\n")
    path = set()
    for s in rec.get("steps", []):
        whole, note = shown(s)
        path.add((s.get("action"), s.get("arguments")))
        lines.append(f"## Step {s.get('index')}: `{s.get('action')}` {s.get('arguments')}")
        if s.get("thought"):
            lines.append(f"Thought: {s['thought'][:1500]}")
        if s.get("action") == "Finish":
            lines.append(f"Finish: {s.get('arguments', '')[:4000]}")
            obs = s.get("observation", {})
            if obs.get("error"):
                lines.append(f"Refused by the harness: {obs['error'][:1500]}")
        else:
            lines.append(f"Reply{note}:\n```\n{whole}\n```")
        for n in s.get("notes", []) or []:
            lines.append(f"Harness note: {str(n)[:500]}")
    others = [a for a in tree_attempts(d) if (a[0], a[1]) not in path]
    if others:
        lines.append("\n# Earlier attempts the model was also shown (other branches of its search)\n")
        for action, args, obs in others:
            lines.append(f"- `{action}` {args}\n```\n{obs[:WHOLE_CAP]}\n```")
    lines.append(f"\n# Final answer ({rec.get('finish')})\n\n{final_text(d) or '(none)'}\n")
    return "\n".join(lines)


def pack(a):
    items = []
    done = set()
    for f in a.skip_labelled:
        done |= {(l["subset"], l["query_id"], l["method"], l["answer_hash"]) for l in json.load(open(f))["labels"]}
    for run, d in episodes(a.work, set(a.methods.split()) if a.methods else None):
        rec = d["sum2act"]
        h = hashlib.sha256(final_text(d).strip().encode()).hexdigest()[:16]
        if (rec["subset"], rec["query_id"], rec["method"], h) in done:
            continue  # this very answer is labelled already
        items.append({"run": run, "subset": rec["subset"], "query_id": rec["query_id"],
                      "method": rec["method"], "model": rec["model"], "answer_hash": h, "text": render(d)})
    rng = random.Random(a.seed)
    rng.shuffle(items)
    os.makedirs(os.path.join(a.out, "episodes"), exist_ok=True)
    os.makedirs(os.path.join(a.out, "labels"), exist_ok=True)
    key = {}
    for i, it in enumerate(items, 1):
        e = f"E{i:03d}"
        open(os.path.join(a.out, "episodes", e + ".md"), "w").write(it.pop("text"))
        key[e] = it
    json.dump(key, open(a.key, "w"), indent=1)
    ids = list(key)
    double = ids[: int(len(ids) * a.double + 0.999)]
    n = a.labellers
    shares = [ids[k::n] for k in range(n)]
    for k, extra in enumerate(double):
        owner = next(j for j in range(n) if extra in shares[j])
        shares[(owner + 1 + k % (n - 1)) % n].append(extra)
    os.makedirs(os.path.join(a.out, "assignments"), exist_ok=True)
    for k, share in enumerate(shares):
        open(os.path.join(a.out, "assignments", f"labeller{k + 1}.txt"), "w").write("\n".join(sorted(share)) + "\n")
    print(f"{len(ids)} episodes, {len(double)} to two labellers, {n} assignments in {a.out}/assignments")


def kappa(pairs):
    n = len(pairs)
    po = sum(x == y for x, y in pairs) / n
    cats = {c for p in pairs for c in p}
    pe = sum((sum(x == c for x, _ in pairs) / n) * (sum(y == c for _, y in pairs) / n) for c in cats)
    return None if pe == 1 else (po - pe) / (1 - pe)


def merge(a):
    key = json.load(open(a.key))
    by_episode = {}
    for f in sorted(glob.glob(os.path.join(a.pack, "labels", "*.jsonl"))):
        who = os.path.basename(f)[:-6]
        for line in open(f):
            if line.strip():
                l = json.loads(line)
                by_episode.setdefault(l["episode"], []).append((who, l))
    labels, pairs = [], []
    for e, got in sorted(by_episode.items()):
        if e not in key:
            continue
        k, first = key[e], got[0][1]
        labels.append({"subset": k["subset"], "query_id": k["query_id"], "method": k["method"], "model": k["model"],
                       "answer_hash": k["answer_hash"], "label": first["label"],
                       "parts_asked": first.get("parts_asked", []), "parts_delivered": first.get("parts_delivered", []),
                       "reason": first.get("reason", ""), "cause": first.get("cause", "none")})
        if len(got) > 1:
            pairs.append((got[0][1]["label"], got[1][1]["label"]))
    seen = {(l["subset"], l["query_id"], l["method"], l["model"], l["answer_hash"]) for l in labels}
    out = {"format": 2, "data": a.data, "description": a.description, "labels": labels}
    json.dump(out, open(a.labels, "w"), indent=1)
    print(f"{len(labels)} answers labelled ({len(seen)} distinct), {len(key) - len(by_episode)} episodes unlabelled")
    if pairs:
        agree = sum(x == y for x, y in pairs) / len(pairs)
        solved = sum((x == "Solved") == (y == "Solved") for x, y in pairs) / len(pairs)
        k = kappa(pairs)
        print(f"labelled twice: {len(pairs)}; exact agreement {100 * agree:.1f}%, Cohen's kappa "
              f"{'-' if k is None else f'{k:.2f}'}; Solved vs not {100 * solved:.1f}%")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--work", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--methods", default="")
    p.add_argument("--double", type=float, default=0.25)
    p.add_argument("--labellers", type=int, default=4)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--skip-labelled", action="append", default=[], metavar="LABELS.json",
                   help="leave out answers these label files already label (same answer hash)")
    m = sub.add_parser("merge")
    m.add_argument("--pack", required=True)
    m.add_argument("--key", required=True)
    m.add_argument("--labels", required=True)
    m.add_argument("--description", required=True)
    m.add_argument("--data", default="", help="the data directory the labels are for, as a path suffix (default: any; "
                   "each label names its answer by hash)")
    a = ap.parse_args()
    pack(a) if a.cmd == "pack" else merge(a)


if __name__ == "__main__":
    main()
