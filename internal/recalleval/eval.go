// Package recalleval measures recall and de-duplication of lessons through
// the real engine: lessons are written by the heuristic writer (an agent's
// extraction submission), queries go through Engine.Recall (the path of
// hooks, the CLI and MCP), and dedup pairs are written one after the other
// into a project of their own. It reads the JSON Lines sets of
// testdata/recall-eval and testdata/eval (the same record shapes) and
// reports recall@k, MRR, the relevant share of injected heuristics, false
// injection on questions no lesson answers, and dedup accuracy with its
// confusion matrix.
package recalleval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
)

// Lesson is one labelled lesson.
type Lesson struct {
	ID      string `json:"id"`
	Lang    string `json:"lang"`
	Kind    string `json:"kind"`
	Trigger string `json:"trigger"`
	Rule    string `json:"rule"`
	Why     string `json:"why"`
}

// Query is one labelled query; Relevant is empty for a question no lesson
// answers.
type Query struct {
	ID       string   `json:"id"`
	Lang     string   `json:"lang"`
	Text     string   `json:"text"`
	Relevant []string `json:"relevant"`
	Type     string   `json:"type"`
	Split    string   `json:"split"`
}

// Pair is one labelled dedup pair: duplicate, related or unrelated.
type Pair struct {
	ID            string `json:"id"`
	Label         string `json:"label"`
	A             Lesson `json:"a"`
	B             Lesson `json:"b"`
	CrossLanguage bool   `json:"cross_language"`
	HardNegative  bool   `json:"hard_negative"`
	Topic         string `json:"topic,omitempty"`
	Split         string `json:"split"`
}

// ReadJSONL reads a JSON Lines file of T.
func ReadJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// RecallReport is what a recall evaluation measured.
type RecallReport struct {
	Queries    int `json:"queries"`
	Answerable int `json:"answerable"`
	NoAnswer   int `json:"no_answer"`
	// RecallAtK is the share of answerable queries with a relevant lesson
	// among the first K ranked heuristics (before abstention).
	RecallAtK float64 `json:"recall_at_k"`
	K         int     `json:"k"`
	// MRR is the mean reciprocal rank of the first relevant lesson.
	MRR float64 `json:"mrr"`
	// InjectedHit is the share of answerable queries with a relevant
	// lesson among the injected heuristics.
	InjectedHit float64 `json:"injected_hit"`
	// InjectedRelevant is the share of injected heuristics (over all
	// queries) that are relevant.
	InjectedRelevant float64 `json:"injected_relevant"`
	Injected         int     `json:"injected"`
	// FalseInjection is the share of no-answer queries that got anything
	// injected.
	FalseInjection float64 `json:"false_injection"`
	// ByType holds recall@K per query type.
	ByType map[string]float64 `json:"recall_at_k_by_type"`
	Misses []string           `json:"misses,omitempty"`
	// Results are the rankings, for calibration (Calibrate).
	Results []QueryResult `json:"results,omitempty"`
}

// Load writes every lesson through the engine's heuristic writer, one
// submitted experience per lesson, and returns the heuristic each lesson
// became (a lesson merged into an earlier one maps to that one).
func Load(ctx context.Context, e *kaizen.Engine, project string, lessons []Lesson) (map[string]string, error) {
	ids := map[string]string{}
	for _, l := range lessons {
		id, _, err := write(ctx, e, project, "eval-"+l.ID, l)
		if err != nil {
			return nil, fmt.Errorf("lesson %s: %w", l.ID, err)
		}
		ids[l.ID] = id
	}
	return ids, nil
}

func write(ctx context.Context, e *kaizen.Engine, project, task string, l Lesson) (string, experience.EvidenceAction, error) {
	why := l.Why
	if why == "" {
		why = "it went wrong before"
	}
	doc, err := json.Marshal(map[string]any{"goal": "a past task", "transferable_heuristics": []map[string]string{
		{"kind": l.Kind, "trigger": l.Trigger, "rule": l.Rule, "why": why, "evidence": "task " + task}}})
	if err != nil {
		return "", "", err
	}
	res, err := e.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{Project: project, TaskID: task, Kind: "experience", Result: doc})
	if err != nil {
		return "", "", err
	}
	if res.Experience == nil || len(res.Experience.Heuristics) != 1 {
		return "", "", fmt.Errorf("the writer returned no heuristic")
	}
	h := res.Experience.Heuristics[0]
	return h.HeuristicID, h.Action, nil
}

// EvalRecall runs every query through Engine.Recall (a dry run: nothing
// is counted) and measures the ranking of heuristics and what was
// injected. k is the rank cut of recall@k; the engine must be configured
// to score at least k heuristics (recall_top_k).
func EvalRecall(ctx context.Context, e *kaizen.Engine, project string, ids map[string]string, queries []Query, k int) (*RecallReport, error) {
	return EvalRecallTriggers(ctx, e, project, ids, nil, queries, k)
}

// Triggers maps each heuristic Load wrote to the trigger of the lesson
// that created it (the first lesson mapped to it), for
// EvalRecallTriggers.
func Triggers(lessons []Lesson, ids map[string]string) map[string]string {
	out := map[string]string{}
	for _, l := range lessons {
		if id, ok := ids[l.ID]; ok {
			if _, seen := out[id]; !seen {
				out[id] = l.Trigger
			}
		}
	}
	return out
}

// EvalRecallTriggers is EvalRecall that also measures each ranked
// heuristic's trigger topic (Ranked.TriggerTopic: the cosine of the query
// and its trigger, by the engine's embedder) for the heuristics whose
// trigger triggers gives; the others get none (the check passes).
func EvalRecallTriggers(ctx context.Context, e *kaizen.Engine, project string, ids, triggers map[string]string, queries []Query, k int) (*RecallReport, error) {
	r := &RecallReport{K: k, ByType: map[string]float64{}}
	typeN := map[string]int{}
	var hits, injHits, injRel int
	var rr float64
	noAnswerInjected := 0
	for _, q := range queries {
		rec, err := e.Recall(ctx, kaizen.RecallInput{Project: project, Query: q.Text, Kinds: []string{"heuristic"}, DryRun: true})
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.ID, err)
		}
		want := map[string]bool{}
		for _, l := range q.Relevant {
			id, ok := ids[l]
			if !ok {
				return nil, fmt.Errorf("query %s: unknown lesson %s", q.ID, l)
			}
			want[id] = true
		}
		var ranked []kaizen.RecalledItem
		for _, it := range rec.Items {
			if it.Kind == experience.ItemHeuristic {
				ranked = append(ranked, it)
			}
		}
		slices.SortStableFunc(ranked, func(a, b kaizen.RecalledItem) int {
			switch {
			case a.Score > b.Score:
				return -1
			case a.Score < b.Score:
				return 1
			}
			return strings.Compare(a.RefID, b.RefID)
		})
		qr := QueryResult{ID: q.ID, Type: q.Type, Answer: len(want) > 0, Ranked: make([]Ranked, 0, len(ranked))}
		for _, it := range ranked {
			var tt *float64
			if trig, ok := triggers[it.RefID]; ok {
				v, err := e.Embedder().Embed(ctx, []string{q.Text, trig})
				if err != nil {
					return nil, fmt.Errorf("query %s: %w", q.ID, err)
				}
				var dot float64
				for i := range v[0] {
					dot += float64(v[0][i]) * float64(v[1][i])
				}
				tt = &dot
			}
			qr.Ranked = append(qr.Ranked, Ranked{Topic: it.Topic, Relevant: want[it.RefID], ID: it.RefID, TriggerTopic: tt})
		}
		r.Results = append(r.Results, qr)
		injected := 0
		injectedRelevant := 0
		for _, h := range rec.Heuristics {
			injected++
			if want[h.ID] {
				injectedRelevant++
			}
		}
		r.Queries++
		r.Injected += injected
		injRel += injectedRelevant
		if len(want) == 0 {
			r.NoAnswer++
			if injected > 0 {
				noAnswerInjected++
			}
			continue
		}
		r.Answerable++
		typeN[q.Type]++
		rank := 0
		for i, it := range ranked {
			if want[it.RefID] {
				rank = i + 1
				break
			}
		}
		if rank > 0 {
			rr += 1 / float64(rank)
		}
		if rank > 0 && rank <= k {
			hits++
			r.ByType[q.Type]++
		} else {
			r.Misses = append(r.Misses, q.ID)
		}
		if injectedRelevant > 0 {
			injHits++
		}
	}
	if r.Answerable > 0 {
		r.RecallAtK = float64(hits) / float64(r.Answerable)
		r.MRR = rr / float64(r.Answerable)
		r.InjectedHit = float64(injHits) / float64(r.Answerable)
	}
	for t, n := range typeN {
		r.ByType[t] /= float64(n)
	}
	if r.Injected > 0 {
		r.InjectedRelevant = float64(injRel) / float64(r.Injected)
	}
	if r.NoAnswer > 0 {
		r.FalseInjection = float64(noAnswerInjected) / float64(r.NoAnswer)
	}
	return r, nil
}

// DedupReport is what a dedup evaluation measured: the writer's decision
// for the second lesson of each pair written after the first into a
// project of its own.
type DedupReport struct {
	Pairs    int     `json:"pairs"`
	Correct  int     `json:"correct"`
	Accuracy float64 `json:"accuracy"`
	// Confusion counts label → decision (updated, appended, created).
	Confusion map[string]map[string]int `json:"confusion"`
	// UnrelatedFolded counts unrelated pairs merged or appended.
	UnrelatedFolded int      `json:"unrelated_folded"`
	Wrong           []string `json:"wrong,omitempty"`
	// Decisions holds each pair's decision by pair id.
	Decisions map[string]experience.EvidenceAction `json:"decisions,omitempty"`
}

// Right reports whether a writer decision is right for a label: a
// duplicate updates, a related lesson is appended as evidence, an
// unrelated one is created.
func Right(label string, action experience.EvidenceAction) bool {
	switch label {
	case "duplicate":
		return action == experience.EvidenceUpdated
	case "related":
		return action == experience.EvidenceAppend
	case "unrelated":
		return action == experience.EvidenceCreated
	}
	return false
}

// EvalDedup writes each pair's first lesson, then its second, into a
// project of its own (prefix + pair id) through the real writer.
func EvalDedup(ctx context.Context, e *kaizen.Engine, prefix string, pairs []Pair) (*DedupReport, error) {
	r := &DedupReport{Confusion: map[string]map[string]int{}, Decisions: map[string]experience.EvidenceAction{}}
	for _, p := range pairs {
		project := prefix + strings.ToLower(p.ID)
		if _, _, err := write(ctx, e, project, "a", p.A); err != nil {
			return nil, fmt.Errorf("pair %s a: %w", p.ID, err)
		}
		_, act, err := write(ctx, e, project, "b", p.B)
		if err != nil {
			return nil, fmt.Errorf("pair %s b: %w", p.ID, err)
		}
		r.Pairs++
		r.Decisions[p.ID] = act
		if r.Confusion[p.Label] == nil {
			r.Confusion[p.Label] = map[string]int{}
		}
		r.Confusion[p.Label][string(act)]++
		if Right(p.Label, act) {
			r.Correct++
		} else {
			r.Wrong = append(r.Wrong, p.ID+":"+p.Label+"→"+string(act))
		}
		if p.Label == "unrelated" && act != experience.EvidenceCreated {
			r.UnrelatedFolded++
		}
	}
	if r.Pairs > 0 {
		r.Accuracy = float64(r.Correct) / float64(r.Pairs)
	}
	return r, nil
}
