#!/usr/bin/env python3
"""What `steer tune --final-check` changed in a set of tunings: per tuning, the configuration the
search's own readings rank first, what the final check measured for it again, and the answer.

    final_check_summary.py DIR [--objective energy|time|weighted:A] [--recheck DIR2 | --pairs]

DIR holds one store and one output per tuning: NAME.db and NAME.out or NAME.json, the output
of `steer tune ... --final-check N --db NAME.db`, as text or --json (both are read), as
scripts/bench/live_tuning.sh writes them with TUNE_ARGS="--final-check N". The search's
ranking is recomputed from the store with the tuning's objective (for weighted:A with the bests
over the whole run, as `steer tune` ranks its finalists); the final check's figures are read
from the output, which is the only place they are kept.

--pairs: print, one NAME=VALUE,... line each, the search-first and the answer of every tuning
(each configuration once), for `steer tune --searcher list` (scripts/bench/measure_again.sh).

--recheck DIR2: stores of later tunings that measured the same configurations again
(DIR2/round_*.db, as scripts/bench/measure_again.sh writes them); the table then adds each
tuning's search-first and answer by their median over the rounds, scored with the bests of the
tuning itself, and says which of the two measured lower.
"""
import argparse
import glob
import json
import os
import re
import sqlite3
import sys


def config_of_text(tokens):
    return frozenset(tuple(t.split("=", 1)) for t in tokens)


def config_of_json(d):
    return frozenset((k, str(v)) for k, v in d.items())


def config_of_key(key):
    return frozenset(tuple(p.split("=", 1)) for p in key.split(","))


def median(values):
    values = sorted(values)
    return values[(len(values) - 1) // 2]


def finalists_of(path):
    """[(config, score)] in the final check's order, best first."""
    text = open(path).read()
    if text.lstrip().startswith("{"):
        d = json.loads(text)
        return [(config_of_json(f["config"]), f["score"]) for f in d.get("finalists", [])]
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith("measured again"):
            inside = True
            continue
        if inside:
            m = re.match(r"\s+([0-9.eE+-]+) \[", line)
            if not m:
                break
            tokens = [t for t in line.split() if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", t)]
            out.append((config_of_text(tokens), float(m.group(1))))
    return out


def scores(rows, objective, bests=None):
    """Score per row under the objective, as steer ranks them (lower is better); weighted:A
    normalises with the least time and energy of `bests` (default: of the rows themselves)."""
    if objective == "time":
        return [t for _, t, _ in rows]
    if objective == "energy":
        return [e for _, _, e in rows]
    alpha = float(objective.split(":", 1)[1])
    t_best = min(t for _, t, _ in bests or rows)
    e_best = min(e for _, _, e in bests or rows)
    return [alpha * t / t_best + (1 - alpha) * e / e_best for _, t, e in rows]


def apart_score(rounds, config, rows, objective):
    """Median over the rounds of the configuration's score, normalised with the tuning's bests."""
    values = []
    for r in rounds:
        t, e = r.get(config, (None, None))
        if t is None or (objective != "time" and e is None):
            continue
        values.append(scores([(config, t, e)], objective, bests=rows)[0])
    return median(values) if values else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--objective", default="energy")
    what = ap.add_mutually_exclusive_group()
    what.add_argument("--recheck", help="folder of round_*.db: the configurations measured again apart")
    what.add_argument("--pairs", action="store_true", help="print the configurations to measure again")
    args = ap.parse_args()
    rounds = []
    if args.recheck:
        for db in sorted(glob.glob(os.path.join(args.recheck, "round_*.db"))):
            con = sqlite3.connect(db)
            rounds.append({config_of_key(k): (t, e) for k, t, e in con.execute(
                "SELECT config_key, median_ms, energy_joules_per_launch FROM tests WHERE status = 'ok'")})
        if not rounds:
            sys.exit(f"final_check_summary.py: {args.recheck} holds no round_*.db")
    if not (args.objective in ("time", "energy") or re.fullmatch(r"weighted:[0-9.]+", args.objective)):
        sys.exit(f"final_check_summary.py: objective '{args.objective}': expected time, energy or weighted:A")
    head = ("| tuning | valid tests | search's first: its reading | measured again in the check | "
            "the answer | answer's reading in the search (rank) | answer measured again |")
    rule = "|---|---:|---:|---:|---|---:|---:|"
    if rounds:
        head += f" measured apart, {len(rounds)} rounds: search's first | answer |"
        rule += "---:|---:|"
    if not args.pairs:
        print(head)
        print(rule)
    changed = total = answer_lower = 0
    curse = []  # the search-first measured again in the final check over its reading in the search, %
    apart_gain = []  # where the answer changed: the answer's figure apart over the search-first's, %
    gaps = []  # (search-first's reading, answer's final-check figure) against their figures apart, %
    pairs = []
    for db in sorted(glob.glob(os.path.join(args.dir, "*.db"))):
        name = os.path.basename(db)[:-3]
        outs = [os.path.join(args.dir, name + ext) for ext in (".out", ".json")]
        outs = [p for p in outs if os.path.exists(p)]
        if not outs:
            print(f"final_check_summary.py: {db} has no output {name}.out or {name}.json; skipped", file=sys.stderr)
            continue
        out = outs[0]
        con = sqlite3.connect(db)
        col = "energy_joules_per_launch" if args.objective != "time" else "median_ms"
        raw = con.execute(f"SELECT config_key, median_ms, energy_joules_per_launch FROM tests "
                          f"WHERE status = 'ok' AND {col} IS NOT NULL ORDER BY sequence").fetchall()
        if not raw:
            print(f"final_check_summary.py: {db} holds no valid test with {col}; skipped", file=sys.stderr)
            continue
        rows = [(config_of_key(k), t, e) for k, t, e in raw]
        s = scores(rows, args.objective)
        order = sorted(range(len(rows)), key=lambda i: s[i])
        rank = {rows[i][0]: r + 1 for r, i in enumerate(order)}
        reading = {rows[i][0]: s[i] for i in range(len(rows))}
        fin = finalists_of(out)
        if not fin:
            print(f"final_check_summary.py: {out} lists no finalists; skipped", file=sys.stderr)
            continue
        first = rows[order[0]][0]
        again = dict(fin)
        answer, answer_score = fin[0]
        if args.pairs:
            names = [p.split("=", 1)[0] for p in raw[0][0].split(",")]
            for c in (first, answer):
                key = ",".join(f"{n}={dict(c)[n]}" for n in names)
                if key not in pairs:
                    pairs.append(key)
            continue
        total += 1
        if first in again:
            curse.append((again[first] / reading[first] - 1) * 100)
        same = answer == first
        changed += not same
        nan = float("nan")
        line = (f"| {name} | {len(rows)} | {reading[first]:.4f} | {again.get(first, nan):.4f} | "
                f"{'the same' if same else 'another'} | {reading.get(answer, nan):.4f} ({rank.get(answer, '?')}) | "
                f"{answer_score:.4f} |")
        if rounds:
            apart = [apart_score(rounds, c, rows, args.objective) for c in (first, answer)]
            line += "".join(f" {a:.4f} |" for a in apart)
            answer_lower += (not same) and apart[1] < apart[0]
            if not same:
                apart_gain.append((apart[1] / apart[0] - 1) * 100)
            gaps.append(((reading[first] / apart[0] - 1) * 100, (answer_score / apart[1] - 1) * 100))
        print(line)
    if args.pairs:
        print("\n".join(pairs))
        return
    print(f"\nthe final check changed the answer in {changed} of {total} tunings")
    if curse:
        print(f"the search's first measured again in the final check, over its reading in the search: "
              f"{', '.join(f'{x:+.1f} %' for x in sorted(curse))} (median {median(curse):+.1f} %)")
    if rounds:
        print(f"measured apart, the answer was lower than the search's first in {answer_lower} of the {changed}")
        if apart_gain:
            g = sorted(apart_gain)
            print(f"the answer against the search's first, measured apart: {', '.join(f'{x:+.2f} %' for x in g)}")
        for i, what in enumerate(("the search's first, its reading", "the answer, the final check's figure")):
            g = sorted(x[i] for x in gaps)
            print(f"{what} against its figure apart: {', '.join(f'{x:+.1f} %' for x in g)} (median {median(g):+.1f} %)")


if __name__ == "__main__":
    main()
