#!/usr/bin/env python3
"""Validate the evaluation sets under testdata/eval and print their counts.

Usage: python3 testdata/eval/check.py   (from anywhere; paths are relative to this file)
Exit status 0 when every file is valid, 1 otherwise.
"""
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
problems = []


def bad(msg):
    problems.append(msg)


def load(rel, here=HERE):
    path = os.path.join(here, rel)
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
SPLITS = {"dev", "holdout"}


def check_lesson(rel, rec, obj, where, hook=None):
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
    if hook:
        hook(rel, rec, obj, where)


def check_set_a(here=HERE, files=("recall/lessons.jsonl", "recall/queries.jsonl", "dedup/pairs.jsonl"),
                splits=SPLITS, lesson_hook=None, query_hook=None):
    """Checks the lessons, queries and pairs of a set A layout (also used
    by testdata/eval-fresh/check.py) and returns them with each lesson's
    language by id."""
    # ---------------------------------------------------------------- Set A: recall
    rel = files[0]
    lessons = load(rel, here)
    for r in lessons:
        need(rel, r, "id", str)
        check_lesson(rel, r, r, "lesson", lesson_hook)
    lesson_lang = {r["id"]: r.get("lang") for r in lessons}

    rel = files[1]
    queries = load(rel, here)
    QTYPES = {"paraphrase", "cross_language", "direct", "multi", "no_answer"}
    for q in queries:
        need(rel, q, "id", str)
        lang = need(rel, q, "lang", str, LANGS)
        need(rel, q, "text", str)
        if query_hook:
            query_hook(rel, q, lang)
        t = need(rel, q, "type", str, QTYPES)
        need(rel, q, "split", str, splits)
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

    # ---------------------------------------------------------------- Set A: dedup
    rel = files[2]
    pairs = load(rel, here)
    LABELS = {"duplicate", "related", "unrelated"}
    seen_pairs = set()
    for p in pairs:
        need(rel, p, "id", str)
        lab = need(rel, p, "label", str, LABELS)
        need(rel, p, "split", str, splits)
        xl = need(rel, p, "cross_language", bool)
        check_lesson(rel, p, p.get("a"), "a", lesson_hook)
        check_lesson(rel, p, p.get("b"), "b", lesson_hook)
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
    return lessons, queries, pairs, lesson_lang


def main():
    lessons, queries, pairs, lesson_lang = check_set_a()

    # ---------------------------------------------------------------- Set B: errors
    rel = "errors/errors_holdout.jsonl"
    errors = load(rel)
    ELANGS = {"go", "python", "node", "rust", "java", "shell", "db"}
    groups = collections.defaultdict(list)
    texts = collections.Counter()
    for e in errors:
        need(rel, e, "id", str)
        g = need(rel, e, "group", str)
        need(rel, e, "lang", str, ELANGS)
        need(rel, e, "command", str)
        t = need(rel, e, "error", str)
        if g:
            groups[g].append(e)
        if t:
            texts[t] += 1
    for t, c in texts.items():
        if c > 1:
            bad(f"{rel}: identical error text appears {c} times: {t[:60]!r}")
    for g, ms in groups.items():
        if not 2 <= len(ms) <= 8:
            bad(f"{rel}: group {g} has {len(ms)} members (want 2-8)")
        if len({m.get('lang') for m in ms}) != 1:
            bad(f"{rel}: group {g} mixes lang values")

    # ---------------------------------------------------------------- Set C: secrets
    rel = "secrets/holdout.jsonl"
    secrets = load(rel)
    all_secret_values = []
    for s in secrets:
        need(rel, s, "id", str)
        text = need(rel, s, "text", str)
        fmt = need(rel, s, "format", str)
        secs = need(rel, s, "secrets", list, nonempty=False)
        keep = s.get("keep", [])
        if not isinstance(keep, list):
            bad(f"{rel}:{s['_line']}: keep is not a list")
            keep = []
        if text is None or secs is None:
            continue
        for x in secs:
            if not isinstance(x, str) or len(x) < 6:
                bad(f"{rel}:{s['_line']}: secret value missing or shorter than 6 characters")
            elif x not in text:
                bad(f"{rel}:{s['_line']}: secret {x[:12]}... does not occur in text")
            else:
                all_secret_values.append(x)
        for k in keep:
            if not isinstance(k, str) or k not in text:
                bad(f"{rel}:{s['_line']}: keep value {str(k)[:20]!r} does not occur in text")
            elif any(k in x or x in k for x in secs):
                bad(f"{rel}:{s['_line']}: keep value overlaps a secret")
        if not secs and fmt and not fmt.startswith("lookalike:"):
            bad(f"{rel}:{s['_line']}: record without secrets must have a format starting with 'lookalike:'")
        if secs and fmt and fmt.startswith("lookalike:"):
            bad(f"{rel}:{s['_line']}: lookalike record lists secrets")
        if secs and s.get("type") in (None, "", "lookalike"):
            bad(f"{rel}:{s['_line']}: secret record without a type")
    for s in secrets:
        if s.get("secrets") == [] and isinstance(s.get("text"), str):
            for x in all_secret_values:
                if x in s["text"]:
                    bad(f"{rel}:{s['_line']}: look-alike text contains a secret listed elsewhere")

    # ---------------------------------------------------------------- report
    print("recall/lessons.jsonl")
    print(f"  lessons: {len(lessons)}")
    table("by lang", collections.Counter(r.get("lang") for r in lessons))
    table("by kind", collections.Counter(r.get("kind") for r in lessons))
    print("recall/queries.jsonl")
    print(f"  queries: {len(queries)}")
    table("by type / split", collections.Counter((q.get("type"), q.get("split")) for q in queries))
    table("by split", collections.Counter(q.get("split") for q in queries))
    table("cross_language direction (query lang -> lesson lang)",
          collections.Counter((q.get("lang"), lesson_lang.get((q.get("relevant") or [None])[0]))
                              for q in queries if q.get("type") == "cross_language"))
    table("by query lang", collections.Counter(q.get("lang") for q in queries))
    covered = {x for q in queries for x in q.get("relevant") or []}
    print(f"  lessons never relevant: {sorted(set(lesson_lang) - covered)}")
    print("dedup/pairs.jsonl")
    print(f"  pairs: {len(pairs)}")
    table("by label / split", collections.Counter((p.get("label"), p.get("split")) for p in pairs))
    table("by label / cross_language", collections.Counter((p.get("label"), p.get("cross_language")) for p in pairs))
    print(f"  hard negatives (unrelated, hard_negative=true): "
          f"{sum(1 for p in pairs if p.get('label') == 'unrelated' and p.get('hard_negative'))}")
    print(f"  cross-language duplicates: "
          f"{sum(1 for p in pairs if p.get('label') == 'duplicate' and p.get('cross_language'))}")
    print("errors/errors_holdout.jsonl")
    print(f"  messages: {len(errors)}  groups: {len(groups)}")
    table("messages by lang", collections.Counter(e.get("lang") for e in errors))
    table("groups by size", collections.Counter(len(v) for v in groups.values()))
    print(f"  multi-line messages: {sum(1 for e in errors if chr(10) in (e.get('error') or ''))}")
    print("secrets/holdout.jsonl")
    pos = [s for s in secrets if s.get("secrets")]
    print(f"  texts: {len(secrets)}  with secrets: {len(pos)}  look-alikes: {len(secrets) - len(pos)}")
    print(f"  secret substrings: {sum(len(s['secrets']) for s in pos)}")
    print(f"  distinct secret types: {len({s.get('type') for s in pos})}")
    print(f"  texts with keep values: {sum(1 for s in secrets if s.get('keep'))}")
    print(f"  texts containing Chinese: {sum(1 for s in secrets if any(0x4e00 <= ord(c) <= 0x9fff for c in s.get('text', '')))}")

    if problems:
        print(f"\n{len(problems)} problem(s):", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        sys.exit(1)
    print("\nOK: all files valid")


if __name__ == "__main__":
    main()
