#!/usr/bin/env python3
"""The method table of scripts/bench-methods.sh, from merged runs and their `sum2act eval --json` output.

usage: method_table.py --labels LABELS.json RUN_DIR [RUN_DIR ...]
(each RUN_DIR has RUN_DIR.json beside it: the eval output). Per run: answered, evidence-judge pass rate with
its bootstrap 95% CI over queries, the hand labels of exactly these answers (matched by subset, query id,
method, model and answer hash: pass rate and parts delivered of parts asked) and the judge's agreement with
them, unsupported claims per answer, LLM calls, tokens, tool calls per query and wall seconds per episode (at the run's concurrency), and
ControlLLM's tool metrics (IR, NR, HR, CR, in %)."""
import argparse, glob, hashlib, json, os, sys


def final_text(d):
    """The final answer as `sum2act eval` hashes it (eval::input::final_text)."""
    rec = d.get("sum2act") or {}
    if rec.get("finish") == "give_answer" and rec.get("answer", "").strip():
        return rec["answer"]
    fa = d.get("answer_generation", {}).get("final_answer", "")
    try:
        v = json.loads(fa)
        if isinstance(v, dict):
            return str(v.get("final_answer", ""))
    except ValueError:
        pass
    return fa


def answers(run):
    """(subset, query_id, method, model, hash) of every answer file of a run."""
    out = {}
    for f in glob.glob(os.path.join(run, "*", "*.json")):
        d = json.load(open(f))
        rec = d.get("sum2act")
        if not rec:
            continue
        h = hashlib.sha256(final_text(d).strip().encode()).hexdigest()[:16]
        out[(rec["subset"], rec["query_id"], rec["method"], rec["model"], h)] = rec
    return out


def row(run, labels):
    ev = json.load(open(run + ".json"))
    p = ev["pass_rate"]["overall"]
    x = ev["metrics"][-1]
    t = (ev.get("tool_metrics") or [{}])[-1]
    keys = answers(run)
    matched = [l for l in labels if (l["subset"], l["query_id"], l["method"], l["model"], l["answer_hash"]) in keys]
    q = max(p["queries"], 1)
    walls = [r.get("counters", {}).get("wall_ms") for r in keys.values()]
    walls = [w for w in walls if w is not None]
    wall = sum(walls) / len(walls) / 1000 if walls else None
    cal = {}
    cal_path = os.path.join(run + ".eval", "calibration.json")
    if os.path.exists(cal_path):
        cal = json.load(open(cal_path))
    solved = sum(l["label"] == "Solved" for l in matched)
    asked = sum(len(l.get("parts_asked", [])) for l in matched)
    delivered = sum(len(l.get("parts_delivered", [])) for l in matched)
    return {
        "run": os.path.basename(run.rstrip("/")),
        "n": p["queries"],
        "answered": p["answered"],
        "pass": p["pass_rate"],
        "ci": (p["ci"]["low"], p["ci"]["high"]),
        "labelled": len(matched),
        "label_pass": 100 * solved / len(matched) if matched else None,
        "agreement": 100 * cal["accuracy"] if cal.get("n") else None,
        "kappa": cal.get("kappa") if cal.get("n") else None,
        "unsupported": (p["claims"] - p["claims_supported"]) / q,
        "parts": f"{delivered}/{asked}" if matched else "-",
        "calls": x["avg_llm_calls"],
        "tokens": x["avg_tokens"],
        "tools": x["tool_calls"] / q,
        "wall": wall,
        "ir": t.get("ir"), "nr": t.get("nr"), "hr": t.get("hr"), "cr": t.get("cr"),
    }


def fmt(v, spec="{:.1f}"):
    return "-" if v is None else spec.format(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--labels", required=True)
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    labels = json.load(open(a.labels))["labels"]
    print("| run | n | answered | evidence pass [95% CI] | hand labels: pass (n) | agreement | unsupported claims / answer | parts delivered / asked | LLM calls / q | tokens / q | tool calls / q | s / episode | IR | NR | HR | CR |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for run in a.runs:
        if not os.path.exists(run + ".json") or os.path.getsize(run + ".json") == 0:
            print(f"| {os.path.basename(run)} | no evaluation |")
            continue
        r = row(run, labels)
        pct = lambda v: fmt(None if v is None else 100 * v, "{:.0f}")
        print(f"| {r['run']} | {r['n']} | {r['answered']:.0f}% | {r['pass']:.1f} [{r['ci'][0]:.1f}–{r['ci'][1]:.1f}] | "
              f"{fmt(r['label_pass'])} ({r['labelled']}) | {fmt(r['agreement'])}% | {r['unsupported']:.2f} | {r['parts']} | "
              f"{r['calls']:.1f} | {r['tokens']:.0f} | {r['tools']:.1f} | {fmt(r['wall'], '{:.0f}')} | "
              f"{pct(r['ir'])} | {pct(r['nr'])} | {pct(r['hr'])} | {pct(r['cr'])} |")


if __name__ == "__main__":
    sys.exit(main())
