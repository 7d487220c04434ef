package storetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/learning"
)

// Times: microsecond precision, as callers store them.
var (
	// base is an arbitrary instant.
	base = time.UnixMicro(1_717_171_717_123_456)
	// zone is not UTC: a time must round-trip as an instant.
	zone = time.FixedZone("UTC+05:30", 5*3600+30*60)
	// past is before the Unix epoch.
	past = time.UnixMicro(-1_234_567_890_123_457)
)

// at is base plus sec seconds.
func at(sec int) time.Time { return base.Add(time.Duration(sec) * time.Second) }

// ptr returns a pointer to a copy of t.
func ptr(t time.Time) *time.Time { return &t }

// mixed holds what a careless backend mangles: accents, combining marks,
// CJK, emoji, Cyrillic, quotes, backslashes, control whitespace, SQL
// wildcards, markup and JSON punctuation.
const mixed = "héllo wörld e\u0301 — 世界 🚀 Привет ∑ \"double\" 'single' back\\slash\n\ttab\r\n" +
	"100% snake_case [x] {\"y\": 1} <b>&amp;</b> ☃ "

// longText is at least n bytes of mixed text, labelled. It does not
// compress well (as real text of that size would not fit an index entry
// uncompressed, neither does this), and the same label gives the same text.
func longText(label string, n int) string {
	alphabet := []rune(mixed + "abcdefghijklmnopqrstuvwxyz0123456789")
	r := rand.New(rand.NewPCG(uint64(len(label)), uint64(n)))
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", label, mixed)
	for b.Len() < n {
		b.WriteRune(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// uniProject is a project name that is not plain ASCII, like a path.
const uniProject = "/home/ユーザー/проект ✓"

// trickyList is a string list with an empty element, a separator, a
// duplicate, quotes, unicode and a long element, in no sorted order.
func trickyList(label string) []string {
	return []string{"z", "", "a,b", `with "quote"`, "a,b", "日本/ファイル.go", longText(label, 1024)}
}

// bigInt is not representable in a float64: a backend that passes
// integers through floats (or JSON numbers) loses it.
const bigInt = 1<<53 + 1

func fullOutcome(project, id string) learning.Outcome {
	return learning.Outcome{
		ID:               id,
		Project:          project,
		TaskID:           "task-" + id,
		DurationMs:       bigInt,
		ErrorCount:       3,
		RetryCount:       2,
		Success:          true,
		FilesTouched:     []string{"main.go", "store/store.go", "docs/README.md"},
		Strategy:         "file-based",
		FailureMode:      learning.FailureContextOverflow,
		FailureDetails:   "context window exceeded",
		Timestamp:        at(1).In(zone),
		Patterns:         []string{"pattern-2", "pattern-1"},
		Criteria:         []string{"type_safe", "tests_pass"},
		ErrorCountSource: "accumulator",
		Exploration:      fullExploration(),
		Score: learning.Score{
			Duration:  0.6,
			Errors:    0.1 + 0.2,
			Retries:   1.0 / 3,
			Success:   1,
			Raw:       0.7000000000000001,
			Type:      learning.Helpful,
			Reasoning: "fast; few errors",
		},
		RecordedAt: at(2),
		Task:       "add a discount_code column to the orders table; 给订单表加字段",
		Tags:       []string{"migration", "backend"},
		CriterionScores: map[string]learning.Score{"type_safe": {Errors: 0.2, Raw: 0.3, Type: learning.Harmful,
			Reasoning: "judged from the task's own evidence for type_safe"}},
		Inferred:  true,
		Inference: "the last test run passed (closed: session_end)",
	}
}

func unicodeOutcome(id string) learning.Outcome {
	o := fullOutcome(uniProject, id)
	o.TaskID = "задача-" + id + "-任务"
	o.FilesTouched = trickyList("file")
	o.Strategy = longText("strategy", 2<<10)
	o.FailureDetails = longText("details", 16<<10)
	o.Patterns, o.Criteria = trickyList("pattern"), trickyList("criterion")
	o.ErrorCountSource = "输入"
	o.Score.Reasoning = longText("reasoning", 4<<10)
	o.Timestamp, o.RecordedAt = past, past.Add(time.Microsecond)
	o.DurationMs, o.ErrorCount, o.RetryCount = math.MaxInt64, math.MaxInt32, 0
	o.Score.Duration, o.Score.Errors = math.SmallestNonzeroFloat64, math.MaxFloat64
	return o
}

// wantOutcome is o as a backend returns it: nil lists read back empty.
func wantOutcome(o learning.Outcome) learning.Outcome {
	o.FilesTouched, o.Patterns, o.Criteria, o.Tags = list(o.FilesTouched), list(o.Patterns), list(o.Criteria), list(o.Tags)
	return o
}

func list(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func fullCriterion(project, name string) learning.Criterion {
	return learning.Criterion{
		Project:       project,
		Name:          name,
		Helpful:       learning.DecayedSum{Value: 2.718281828459045, Ref: at(10).In(zone)},
		Harmful:       learning.DecayedSum{Value: 1e-300, Ref: at(11)},
		HelpfulCount:  bigInt,
		HarmfulCount:  7,
		NeutralCount:  5,
		LastValidated: at(12),
		CreatedAt:     at(1),
		UpdatedAt:     at(13),
	}
}

func unicodeCriterion(name string) learning.Criterion {
	c := fullCriterion(uniProject, name)
	c.Helpful.Ref, c.LastValidated, c.CreatedAt = past, past, past.Add(-time.Hour)
	return c
}

func fullPattern(project, id, content string) learning.Pattern {
	return learning.Pattern{
		ID:            id,
		Project:       project,
		Content:       content,
		Kind:          learning.KindPattern,
		IsNegative:    true,
		SuccessCount:  bigInt,
		FailureCount:  3,
		Tags:          []string{"go", "db", "refactor"},
		ExampleTasks:  []string{"task-9", "task-2", "task-5"},
		Reason:        "Failed 3/5 times (60% failure rate)",
		SourceID:      "source-" + id,
		AntiPatternID: "anti-" + id,
		Generation:    4,
		CreatedAt:     at(20).In(zone),
		UpdatedAt:     at(21),
	}
}

func unicodePattern(id string) learning.Pattern {
	p := fullPattern(uniProject, id, longText("按文件拆分 Split by file", 16<<10))
	p.Tags, p.ExampleTasks = trickyList("tag"), trickyList("example")
	p.Reason = longText("原因", 2<<10)
	p.SourceID, p.AntiPatternID = "源-"+id, "反-"+id
	p.CreatedAt, p.UpdatedAt = past, past.Add(time.Microsecond)
	return p
}

// wantPattern is p as a backend returns it: nil lists read back empty.
func wantPattern(p learning.Pattern) learning.Pattern {
	p.Tags, p.ExampleTasks = list(p.Tags), list(p.ExampleTasks)
	return p
}

func fullMaturity(project, patternID string) learning.Maturity {
	return learning.Maturity{
		Project:       project,
		PatternID:     patternID,
		Helpful:       learning.DecayedSum{Value: 4.25, Ref: at(40).In(zone)},
		Harmful:       learning.DecayedSum{Value: 1.0 / 3, Ref: at(41)},
		HelpfulCount:  bigInt,
		HarmfulCount:  2,
		NeutralCount:  9,
		Manual:        learning.Deprecated,
		ManualReason:  "breaks the build",
		PromotedAt:    ptr(at(42)),
		DeprecatedAt:  ptr(at(43).In(zone)),
		LastValidated: at(44),
		Generation:    6,
		ResetAt:       ptr(at(45)),
		UpdatedAt:     at(46),
	}
}

func unicodeMaturity(patternID string) learning.Maturity {
	m := fullMaturity(uniProject, patternID)
	m.ManualReason = longText("理由", 16<<10)
	m.PromotedAt, m.LastValidated = ptr(past), past
	return m
}

func fullMaturityFeedback(project, id string) learning.MaturityFeedback {
	return learning.MaturityFeedback{
		Success:    true,
		ID:         id,
		Project:    project,
		PatternID:  "pattern-1",
		Type:       learning.Helpful,
		Weight:     0.1 + 0.2,
		TaskID:     "task-" + id,
		Timestamp:  at(50).In(zone),
		Generation: bigInt,
	}
}

func unicodeMaturityFeedback(id string) learning.MaturityFeedback {
	f := fullMaturityFeedback(uniProject, id)
	f.PatternID, f.TaskID, f.Timestamp, f.Weight = "模式-"+mixed, "задача-"+id, past, math.MaxFloat64
	return f
}

func fullError(project, id string) learning.ErrorEntry {
	return learning.ErrorEntry{
		ID:         id,
		Project:    project,
		TaskID:     "task-" + id,
		Type:       learning.ErrConflict,
		Message:    "merge conflict in store.go",
		StackTrace: "main.go:12\nstore.go:34",
		ToolName:   "git",
		Context:    "rebasing onto main",
		Timestamp:  at(60).In(zone),
		Resolved:   true,
		ResolvedAt: ptr(at(61)),
	}
}

func unicodeError(id string) learning.ErrorEntry {
	e := fullError(uniProject, id)
	e.TaskID = "задача-" + id
	e.Message = longText("сообщение", 4<<10)
	e.StackTrace = longText("堆栈", 16<<10)
	e.ToolName = "工具 " + mixed
	e.Context = longText("上下文", 2<<10)
	e.Timestamp, e.ResolvedAt = past, ptr(past.Add(time.Second))
	return e
}

func fullExploration() *learning.ExplorationSummary {
	return &learning.ExplorationSummary{SessionID: "sess-1", Strategy: "analyst", Phase: "SUMMARIZE", Rounds: 17,
		ToolCalls: 42, NewInfoRate: 0.625, Transitions: 3, Nudges: 4, Exit: "final_answer"}
}
