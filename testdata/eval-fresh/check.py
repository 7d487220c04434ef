#!/usr/bin/env python3
"""Validate the fresh holdout set under testdata/eval-fresh and print its counts.

Usage: python3 testdata/eval-fresh/check.py   (from anywhere; paths are relative to this file)
       python3 testdata/eval-fresh/check.py --dir DIR --min-lessons N --min-queries N --min-pairs N
               [--min-contradictions N]   (another blind set of the same layout, e.g. eval-fresh2)

The record checks are those of testdata/eval/check.py (set A only, imported: check_set_a), for the
flat layout of this directory (lessons.jsonl, queries.jsonl, pairs.jsonl),
plus the set's own requirements: every record is split "holdout", at least
80 lessons with at least 40 % Chinese, at least 80 queries with at least 20
no_answer, at least 100 pairs with at least 20 cross-language and at least
30 same-domain hard negatives among the unrelated ones.
Exit status 0 when every file is valid, 1 otherwise.
"""

import argparse
import collections
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

ap = argparse.ArgumentParser(description="Validate a blind holdout set of the eval-fresh layout.")
ap.add_argument("--dir", default=HERE, help="the set's directory (default: this file's)")
ap.add_argument("--min-lessons", type=int, default=80)
ap.add_argument("--min-queries", type=int, default=80)
ap.add_argument("--min-pairs", type=int, default=100)
ap.add_argument("--min-contradictions", type=int, default=0)
args = ap.parse_args()

# The record checks, helpers and problem list of testdata/eval/check.py.
_spec = importlib.util.spec_from_file_location("evalcheck", os.path.join(HERE, "..", "eval", "check.py"))
base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(base)
bad, table, problems = base.bad, base.table, base.problems


def has_han(s):
    return any(0x4E00 <= ord(c) <= 0x9FFF for c in s)


def lesson_lang_matches(rel, rec, obj, where):
    han = has_han((obj.get("trigger") or "") + (obj.get("rule") or ""))
    if obj.get("lang") == "zh" and not han:
        bad(f"{rel}:{rec['_line']}: {where} is lang zh without Chinese text")
    if obj.get("lang") == "en" and han:
        bad(f"{rel}:{rec['_line']}: {where} is lang en with Chinese text")


def query_lang_matches(rel, q, lang):
    if (lang == "zh") != has_han(q.get("text") or ""):
        bad(f"{rel}:{q['_line']}: query lang {lang} does not match its text")


lessons, queries, pairs, lesson_lang = base.check_set_a(
    args.dir, ("lessons.jsonl", "queries.jsonl", "pairs.jsonl"), {"holdout"},  # this set is holdout only
    lesson_hook=lesson_lang_matches, query_hook=query_lang_matches)

# ---------------------------------------------------------------- the set's own minimums
zh = sum(1 for r in lessons if r.get("lang") == "zh")
if len(lessons) < args.min_lessons:
    bad(f"lessons.jsonl: {len(lessons)} lessons, want at least {args.min_lessons}")
if lessons and zh / len(lessons) < 0.40:
    bad(f"lessons.jsonl: {zh}/{len(lessons)} Chinese, want at least 40 %")
if len(queries) < args.min_queries:
    bad(f"queries.jsonl: {len(queries)} queries, want at least {args.min_queries}")
n_noans = sum(1 for q in queries if q.get("type") == "no_answer")
if n_noans < 20:
    bad(f"queries.jsonl: {n_noans} no_answer queries, want at least 20")
for t in ("direct", "paraphrase", "cross_language", "multi"):
    if not any(q.get("type") == t for q in queries):
        bad(f"queries.jsonl: no {t} query")
xdir = collections.Counter(q.get("lang") for q in queries if q.get("type") == "cross_language")
if not xdir.get("en") or not xdir.get("zh"):
    bad("queries.jsonl: cross_language queries must go both ways (en→zh and zh→en)")
if len(pairs) < args.min_pairs:
    bad(f"pairs.jsonl: {len(pairs)} pairs, want at least {args.min_pairs}")
n_xl = sum(1 for p in pairs if p.get("cross_language"))
if n_xl < 20:
    bad(f"pairs.jsonl: {n_xl} cross-language pairs, want at least 20")
n_hard = sum(1 for p in pairs if p.get("label") == "unrelated" and p.get("hard_negative"))
if n_hard < 30:
    bad(f"pairs.jsonl: {n_hard} hard-negative unrelated pairs, want at least 30")
n_contra = sum(1 for p in pairs if p.get("label") == "unrelated" and p.get("hard_negative")
               and "contradiction" in (p.get("note") or ""))
if n_contra < args.min_contradictions:
    bad(f"pairs.jsonl: {n_contra} contradiction pairs, want at least {args.min_contradictions}")

# ---------------------------------------------------------------- report
print("lessons.jsonl")
print(f"  lessons: {len(lessons)} ({zh} zh = {100 * zh / max(len(lessons), 1):.0f} %)")
table("by lang", collections.Counter(r.get("lang") for r in lessons))
table("by kind", collections.Counter(r.get("kind") for r in lessons))
print("queries.jsonl")
print(f"  queries: {len(queries)}")
table("by type / split", collections.Counter((q.get("type"), q.get("split")) for q in queries))
table("cross_language direction (query lang -> lesson lang)",
      collections.Counter((q.get("lang"), lesson_lang.get((q.get("relevant") or [None])[0]))
                          for q in queries if q.get("type") == "cross_language"))
table("by query lang", collections.Counter(q.get("lang") for q in queries))
covered = {x for q in queries for x in q.get("relevant") or []}
print(f"  lessons never relevant (distractors): {len(set(lesson_lang) - covered)} {sorted(set(lesson_lang) - covered)}")
print("pairs.jsonl")
print(f"  pairs: {len(pairs)}")
table("by label / split", collections.Counter((p.get("label"), p.get("split")) for p in pairs))
table("by label / cross_language", collections.Counter((p.get("label"), p.get("cross_language")) for p in pairs))
print(f"  hard negatives (unrelated, hard_negative=true): {n_hard} "
      f"({sum(1 for p in pairs if p.get('hard_negative') and p.get('cross_language'))} cross-language, "
      f"{sum(1 for p in pairs if p.get('hard_negative') and 'contradiction' in (p.get('note') or ''))} contradictions)")
print(f"  duplicates whose two kinds differ (e.g. avoid X vs prefer not-X): "
      f"{sum(1 for p in pairs if p.get('label') == 'duplicate' and p['a'].get('kind') != p['b'].get('kind'))}")


def toks(s):
    s = s.lower()
    return set(re.findall(r"[a-z0-9_]+", s)) | {c for c in s if 0x4E00 <= ord(c) <= 0x9FFF}


def jacc(a, b):
    x, y = toks(a["trigger"] + " " + a["rule"]), toks(b["trigger"] + " " + b["rule"])
    return len(x & y) / max(len(x | y), 1)


groups = collections.defaultdict(list)
for p in pairs:
    if p.get("cross_language"):
        continue
    g = "hard negative" if p.get("hard_negative") else p.get("label")
    groups[g].append(jacc(p["a"], p["b"]))
print("  same-language token Jaccard over trigger+rule (mean):")
for g in sorted(groups):
    print(f"    {g}: {sum(groups[g]) / len(groups[g]):.2f} over {len(groups[g])}")

if problems:
    print(f"\n{len(problems)} problem(s):", file=sys.stderr)
    for p in problems:
        print("  " + p, file=sys.stderr)
    sys.exit(1)
print("\nOK: all files valid")
