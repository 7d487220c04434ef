package recalleval

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"strings"
	"sync"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/model"
)

// ScriptedJudge is a chat model standing in for the merge judge
// (experience.JudgeMerge) in tests and measurements: it reads the prompt's
// JSON and answers with Answer's classes, or with Raw's text when Raw is
// set. It records every request.
type ScriptedJudge struct {
	// Answer returns one class per candidate ("duplicate", "related",
	// "unrelated").
	Answer func(lesson experience.MergeJudgeItem, cands []experience.MergeJudgeItem) []string
	// Raw, when set, is the reply's text whatever the prompt.
	Raw func(lesson experience.MergeJudgeItem, cands []experience.MergeJudgeItem) string

	mu       sync.Mutex
	requests []model.ChatRequest
}

var _ model.Chat = (*ScriptedJudge)(nil)

// Requests returns the requests received so far.
func (j *ScriptedJudge) Requests() []model.ChatRequest {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]model.ChatRequest(nil), j.requests...)
}

// Complete answers one merge-judge request.
func (j *ScriptedJudge) Complete(ctx context.Context, req model.ChatRequest) (model.ChatResponse, error) {
	j.mu.Lock()
	j.requests = append(j.requests, req)
	j.mu.Unlock()
	if len(req.Messages) != 2 {
		return model.ChatResponse{}, errors.New("scripted judge: want a system and a user message")
	}
	var in experience.MergeJudgeInput
	if err := json.Unmarshal([]byte(req.Messages[1].Content), &in); err != nil {
		return model.ChatResponse{}, err
	}
	var content string
	if j.Raw != nil {
		content = j.Raw(in.NewLesson, in.Candidates)
	} else {
		classes := j.Answer(in.NewLesson, in.Candidates)
		var reply experience.MergeVerdicts
		for i, c := range in.Candidates {
			reply.Verdicts = append(reply.Verdicts, experience.MergeVerdict{ID: c.ID, Class: classes[i]})
		}
		b, err := json.Marshal(reply)
		if err != nil {
			return model.ChatResponse{}, err
		}
		content = string(b)
	}
	if req.Accept != nil {
		if err := req.Accept(content); err != nil {
			return model.ChatResponse{}, err
		}
	}
	return model.ChatResponse{Content: content, Provider: "scripted", Model: "scripted-judge"}, nil
}

// OracleJudge answers with the labels of pairs: a candidate that is a
// pair's first lesson, judged for that pair's second lesson, gets the
// pair's label; any other candidate is unrelated. ErrPercent of the
// (lesson, candidate) verdicts, chosen by a hash of the two texts, are
// flipped to one of the two wrong classes. Seen counts the judged
// lessons whose labelled counterpart was among the candidates.
type OracleJudge struct {
	ScriptedJudge
	labels     map[string]string
	ErrPercent uint32
	seenMu     sync.Mutex
	seen       map[string]bool
}

// pairKey keys a (new lesson, candidate) pair by their texts.
func pairKey(newTrigger, newRule, candTrigger, candRule string) string {
	return strings.Join([]string{strings.TrimSpace(newTrigger), strings.TrimSpace(newRule),
		strings.TrimSpace(candTrigger), strings.TrimSpace(candRule)}, "\x00")
}

// NewOracleJudge returns the oracle of pairs, erring on errPercent of its
// verdicts.
func NewOracleJudge(pairs []Pair, errPercent uint32) *OracleJudge {
	o := &OracleJudge{labels: map[string]string{}, ErrPercent: errPercent, seen: map[string]bool{}}
	for _, p := range pairs {
		o.labels[pairKey(p.B.Trigger, p.B.Rule, p.A.Trigger, p.A.Rule)] = p.Label
	}
	o.Answer = func(l experience.MergeJudgeItem, cands []experience.MergeJudgeItem) []string {
		out := make([]string, len(cands))
		for i, c := range cands {
			k := pairKey(l.Trigger, l.Rule, c.Trigger, c.Rule)
			label, ok := o.labels[k]
			if !ok {
				label = "unrelated"
			} else {
				o.seenMu.Lock()
				o.seen[k] = true
				o.seenMu.Unlock()
			}
			out[i] = flip(label, k, o.ErrPercent)
		}
		return out
	}
	return o
}

// Seen reports whether the pair's counterpart was shown to the judge.
func (o *OracleJudge) Seen(p Pair) bool {
	o.seenMu.Lock()
	defer o.seenMu.Unlock()
	return o.seen[pairKey(p.B.Trigger, p.B.Rule, p.A.Trigger, p.A.Rule)]
}

// flip returns label, or on errPercent of keys (by an FNV hash) one of
// the two other classes.
func flip(label, key string, errPercent uint32) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	v := h.Sum32()
	if v%100 >= errPercent {
		return label
	}
	var others []string
	for _, c := range experience.MergeClasses {
		if c != label {
			others = append(others, c)
		}
	}
	return others[(v/100)%uint32(len(others))]
}

// AlwaysDuplicate is an adversarial judge: every candidate is a duplicate.
func AlwaysDuplicate() *ScriptedJudge {
	return &ScriptedJudge{Answer: func(_ experience.MergeJudgeItem, cands []experience.MergeJudgeItem) []string {
		out := make([]string, len(cands))
		for i := range out {
			out[i] = "duplicate"
		}
		return out
	}}
}
