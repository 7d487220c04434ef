#!/usr/bin/env python3
"""Validate the fresh holdout set under testdata/eval-fresh and print its counts.

Usage: python3 testdata/eval-fresh/check.py   (from anywhere; paths are relative to this file)

The record checks are those of testdata/eval/check.py (set A only), for the
flat layout of this directory (lessons.jsonl, queries.jsonl, pairs.jsonl),
plus the set's own requirements: every record is split "holdout", at least
80 lessons with at least 40 % Chinese, at least 80 queries with at least 20
no_answer, at least 100 pairs with at least 20 cross-language and at least
30 same-domain hard negatives among the unrelated ones.
Exit status 0 when every file is valid, 1 otherwise.
"""
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
problems = []


def bad(msg):
    problems.append(msg)


def load(rel):
    path = os.path.join(HERE, rel)
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                bad(f"{rel}:{n}: blank line")
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                bad(f"{rel}:{n}: invalid JSON: {e}")
                continue
            if not isinstance(rec, dict):
                bad(f"{rel}:{n}: not an object")
                continue
            rec["_line"] = n
            out.append(rec)
    ids = collections.Counter(r.get("id") for r in out)
    for i, c in ids.items():
        if i is None:
            bad(f"{rel}: record without id")
        elif c > 1:
            bad(f"{rel}: duplicate id {i}")
    return out


def need(rel, rec, field, typ, choices=None, nonempty=True):
    v = rec.get(field)
    if not isinstance(v, typ):
        bad(f"{rel}:{rec['_line']}: field {field!r} missing or not {typ.__name__}")
        return None
    if nonempty and typ is str and not v.strip():
        bad(f"{rel}:{rec['_line']}: field {field!r} empty")
    if choices is not None and v not in choices:
        bad(f"{rel}:{rec['_line']}: field {field!r}={v!r} not in {sorted(choices)}")
    return v


def table(title, counter):
    print(f"  {title}:")
    for k in sorted(counter, key=lambda x: tuple(str(y) for y in (x if isinstance(x, tuple) else (x,)))):
        print(f"    {k if not isinstance(k, tuple) else ' / '.join(map(str, k))}: {counter[k]}")


LESSON_FIELDS = ("trigger", "rule", "why")
KINDS = {"avoid", "prefer", "verify", "clarify"}
LANGS = {"en", "zh"}
SPLITS = {"holdout"}  # this set is holdout only


def check_lesson(rel, rec, obj, where):
    if not isinstance(obj, dict):
        bad(f"{rel}:{rec['_line']}: {where} is not an object")
        return
    if obj.get("lang") not in LANGS:
        bad(f"{rel}:{rec['_line']}: {where}.lang invalid")
    if obj.get("kind") not in KINDS:
        bad(f"{rel}:{rec['_line']}: {where}.kind invalid")
    for f in LESSON_FIELDS:
        if not isinstance(obj.get(f), str) or not obj[f].strip():
            bad(f"{rel}:{rec['_line']}: {where}.{f} missing or empty")
    has_han = any(0x4E00 <= ord(c) <= 0x9FFF for c in (obj.get("trigger") or "") + (obj.get("rule") or ""))
    if obj.get("lang") == "zh" and not has_han:
        bad(f"{rel}:{rec['_line']}: {where} is lang zh without Chinese text")
    if obj.get("lang") == "en" and has_han:
        bad(f"{rel}:{rec['_line']}: {where} is lang en with Chinese text")


# ---------------------------------------------------------------- recall
rel = "lessons.jsonl"
lessons = load(rel)
for r in lessons:
    need(rel, r, "id", str)
    check_lesson(rel, r, r, "lesson")
lesson_lang = {r["id"]: r.get("lang") for r in lessons}

rel = "queries.jsonl"
queries = load(rel)
QTYPES = {"paraphrase", "cross_language", "direct", "multi", "no_answer"}
for q in queries:
    need(rel, q, "id", str)
    lang = need(rel, q, "lang", str, LANGS)
    need(rel, q, "text", str)
    t = need(rel, q, "type", str, QTYPES)
    need(rel, q, "split", str, SPLITS)
    relv = need(rel, q, "relevant", list, nonempty=False)
    if relv is None:
        continue
    for x in relv:
        if x not in lesson_lang:
            bad(f"{rel}:{q['_line']}: relevant id {x!r} does not exist")
    if len(set(relv)) != len(relv):
        bad(f"{rel}:{q['_line']}: repeated relevant id")
    if t == "no_answer" and relv:
        bad(f"{rel}:{q['_line']}: no_answer query with relevant lessons")
    if t != "no_answer" and not relv:
        bad(f"{rel}:{q['_line']}: {t} query without relevant lessons")
    if t == "multi" and len(relv) < 2:
        bad(f"{rel}:{q['_line']}: multi query with fewer than two relevant lessons")
    if t in ("direct", "paraphrase", "cross_language") and len(relv) != 1:
        bad(f"{rel}:{q['_line']}: {t} query should have exactly one relevant lesson")
    if t in ("direct", "paraphrase") and relv and relv[0] in lesson_lang and lesson_lang[relv[0]] != lang:
        bad(f"{rel}:{q['_line']}: {t} query language differs from its lesson")
    if t == "cross_language" and relv and relv[0] in lesson_lang and lesson_lang[relv[0]] == lang:
        bad(f"{rel}:{q['_line']}: cross_language query in the lesson's own language")
    has_han = any(0x4E00 <= ord(c) <= 0x9FFF for c in q.get("text") or "")
    if (lang == "zh") != has_han:
        bad(f"{rel}:{q['_line']}: query lang {lang} does not match its text")

# ---------------------------------------------------------------- dedup
rel = "pairs.jsonl"
pairs = load(rel)
LABELS = {"duplicate", "related", "unrelated"}
seen_pairs = set()
for p in pairs:
    need(rel, p, "id", str)
    lab = need(rel, p, "label", str, LABELS)
    need(rel, p, "split", str, SPLITS)
    xl = need(rel, p, "cross_language", bool)
    check_lesson(rel, p, p.get("a"), "a")
    check_lesson(rel, p, p.get("b"), "b")
    a, b = p.get("a"), p.get("b")
    if isinstance(a, dict) and isinstance(b, dict):
        if xl is not None and xl != (a.get("lang") != b.get("lang")):
            bad(f"{rel}:{p['_line']}: cross_language does not match the languages of a and b")
        ka = json.dumps({k: a.get(k) for k in ("lang", "kind") + LESSON_FIELDS}, sort_keys=True, ensure_ascii=False)
        kb = json.dumps({k: b.get(k) for k in ("lang", "kind") + LESSON_FIELDS}, sort_keys=True, ensure_ascii=False)
        if ka == kb:
            bad(f"{rel}:{p['_line']}: a and b are identical")
        key = frozenset([ka, kb])
        if key in seen_pairs:
            bad(f"{rel}:{p['_line']}: the same pair appears twice")
        seen_pairs.add(key)
    if "hard_negative" in p and not isinstance(p["hard_negative"], bool):
        bad(f"{rel}:{p['_line']}: hard_negative not a bool")
    if p.get("hard_negative") and lab != "unrelated":
        bad(f"{rel}:{p['_line']}: hard_negative set on a {lab} pair")

# ---------------------------------------------------------------- the set's own minimums
zh = sum(1 for r in lessons if r.get("lang") == "zh")
if len(lessons) < 80:
    bad(f"lessons.jsonl: {len(lessons)} lessons, want at least 80")
if lessons and zh / len(lessons) < 0.40:
    bad(f"lessons.jsonl: {zh}/{len(lessons)} Chinese, want at least 40 %")
if len(queries) < 80:
    bad(f"queries.jsonl: {len(queries)} queries, want at least 80")
n_noans = sum(1 for q in queries if q.get("type") == "no_answer")
if n_noans < 20:
    bad(f"queries.jsonl: {n_noans} no_answer queries, want at least 20")
for t in ("direct", "paraphrase", "cross_language", "multi"):
    if not any(q.get("type") == t for q in queries):
        bad(f"queries.jsonl: no {t} query")
xdir = collections.Counter(q.get("lang") for q in queries if q.get("type") == "cross_language")
if not xdir.get("en") or not xdir.get("zh"):
    bad("queries.jsonl: cross_language queries must go both ways (en→zh and zh→en)")
if len(pairs) < 100:
    bad(f"pairs.jsonl: {len(pairs)} pairs, want at least 100")
n_xl = sum(1 for p in pairs if p.get("cross_language"))
if n_xl < 20:
    bad(f"pairs.jsonl: {n_xl} cross-language pairs, want at least 20")
n_hard = sum(1 for p in pairs if p.get("label") == "unrelated" and p.get("hard_negative"))
if n_hard < 30:
    bad(f"pairs.jsonl: {n_hard} hard-negative unrelated pairs, want at least 30")

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
