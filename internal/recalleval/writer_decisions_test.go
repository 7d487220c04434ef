package recalleval_test

import (
	"context"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/recalleval"
	"github.com/kaizenhq/kaizen/internal/testkit"
)

// More crafted pairs (dedup18; none from a labelled set, written after the
// error analysis of docs/experience.md, "Heuristic writer decisions"):
// each names one of the decisions the writer must get right.
var (
	lessonClockEN = recalleval.Lesson{Lang: "en", Kind: "avoid", Trigger: "when Go code under test reads the current time",
		Rule: "do not call time.Now directly; inject a clock so the test can control it"}
	lessonClockZH = recalleval.Lesson{Lang: "zh", Kind: "avoid", Trigger: "被测的 Go 代码读取当前时间时",
		Rule: "不要直接调用 time.Now，注入一个时钟，让测试能控制时间"}
	lessonFakeTimer = recalleval.Lesson{Lang: "en", Kind: "avoid", Trigger: "when a Go test waits for a timer or a timeout to fire",
		Rule: "do not sleep in the test; advance an injected fake clock past the deadline"}
	lessonSQLParams = recalleval.Lesson{Lang: "en", Kind: "avoid", Trigger: "when a SQL query includes values typed by users",
		Rule: "never build the statement by string concatenation; use bound parameters"}
	lessonSQLExplain = recalleval.Lesson{Lang: "en", Kind: "verify", Trigger: "when a SQL query on a large table is slow",
		Rule: "run EXPLAIN ANALYZE and add an index that matches the filter columns"}
	lessonNoForcePush = recalleval.Lesson{Lang: "en", Kind: "avoid", Trigger: "when a rebased branch has to be pushed",
		Rule: "never use git push --force"}
	lessonForcePush = recalleval.Lesson{Lang: "en", Kind: "prefer", Trigger: "when a rebased branch has to be pushed",
		Rule: "use git push --force"}
)

// TestWriterDecisionsDedup18 drives the default writer (the shipped merge
// classifier of the offline embedder) through four decisions on pairs it
// was not fitted on: a Chinese restatement of an English lesson updates
// it; a lesson of the same domain (SQL) about another problem is created;
// two rules of opposite polarity on one trigger ("never use git push
// --force" / "use git push --force") are created however many words they
// share (the contradiction veto); and a related lesson (another use of
// the same injected clock) is not folded: the shipped classifier keeps it
// apart rather than risk folding an unrelated one (it appends only when
// P(related) > FoldCost · P(unrelated), which the offline features do not
// reach; docs/experience.md).
func TestWriterDecisionsDedup18(t *testing.T) {
	b := testkit.Open(t, "sqlite")
	if b.E.EmbedderID() != experience.OfflineMergeEmbedderID() {
		t.Skipf("embedder %s", b.E.EmbedderID())
	}
	if !experience.Contradicts(lessonNoForcePush.MergeLesson(), lessonForcePush.MergeLesson()) {
		t.Fatal("the opposite-polarity pair is not a contradiction")
	}
	// The classifier alone would merge it (P(duplicate) ≈ 0.99: the texts
	// differ by one word): the veto is what keeps it apart.
	x, err := experience.MergeFeatures(lessonNoForcePush.MergeLesson(), lessonForcePush.MergeLesson(), offlineEmbed())
	if err != nil {
		t.Fatal(err)
	}
	if act, _, err := experience.OfflineMergeClassifier().Decide(x); err != nil || act != experience.EvidenceUpdated {
		t.Fatalf("the classifier alone decides %s (%v) on the opposite-polarity pair; the test no longer exercises the veto", act, err)
	}
	for _, c := range []struct {
		name  string
		a, b  recalleval.Lesson
		want  experience.EvidenceAction
		heurs int
	}{
		{"en-zh duplicate", lessonClockEN, lessonClockZH, experience.EvidenceUpdated, 1},
		{"zh-en duplicate", lessonClockZH, lessonClockEN, experience.EvidenceUpdated, 1},
		{"same-domain unrelated", lessonSQLParams, lessonSQLExplain, experience.EvidenceCreated, 2},
		{"opposite polarity", lessonNoForcePush, lessonForcePush, experience.EvidenceCreated, 2},
		{"related kept apart", lessonClockEN, lessonFakeTimer, experience.EvidenceCreated, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, hs := writePair(t, b.E, "d18-"+c.name, c.a, c.b)
			if got != c.want || len(hs) != c.heurs {
				t.Fatalf("decision %s with %d heuristics, want %s with %d", got, len(hs), c.want, c.heurs)
			}
		})
	}
}

// TestWriterRelatedAppendsEvidence: "related" means append as evidence
// (docs/experience.md). With thresholds that leave room between update
// and append (merge.method "threshold"), the related pair of
// TestWriterDecisionsDedup18 is appended to the first heuristic: one
// heuristic, its trigger and rule unchanged, its support unchanged, one
// more piece of evidence; the opposite-polarity pair is still created
// (the veto applies to the thresholds too).
func TestWriterRelatedAppendsEvidence(t *testing.T) {
	ctx := context.Background()
	b := testkit.Open(t, "sqlite", func(c *kaizen.Config) {
		c.Experience.Merge.Method = experience.MergeByThreshold
		c.Experience.Merge.Calibrated = map[string]experience.MergeCalibration{
			experience.OfflineMergeEmbedderID(): {Update: 0.95, Append: 0.2}}
	})
	got, hs := writePair(t, b.E, "d18-related", lessonClockEN, lessonFakeTimer)
	if got != experience.EvidenceAppend || len(hs) != 1 {
		t.Fatalf("related lesson: %s, %d heuristics; want appended, 1", got, len(hs))
	}
	d, err := b.E.GetHeuristic(ctx, hs[0].Project, hs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Heuristic.Trigger != lessonClockEN.Trigger || d.Heuristic.Rule != lessonClockEN.Rule ||
		d.Heuristic.SupportTasks != 1 || d.Heuristic.EvidenceCount != 2 {
		t.Errorf("after an append: %q / %q, support %d, evidence %d; want the first lesson's, 1, 2",
			d.Heuristic.Trigger, d.Heuristic.Rule, d.Heuristic.SupportTasks, d.Heuristic.EvidenceCount)
	}
	if got, hs := writePair(t, b.E, "d18-opposite", lessonNoForcePush, lessonForcePush); got != experience.EvidenceCreated || len(hs) != 2 {
		t.Errorf("opposite polarity under the thresholds: %s, %d heuristics; want created, 2", got, len(hs))
	}
}

// Cross-language pairs (q18; written for the veto, not from a labelled
// set): two contradictions whose sides are in different languages, and
// restatements of the same two lessons that must still merge.
var (
	lessonCtxFieldZH = recalleval.Lesson{Lang: "zh", Kind: "avoid", Trigger: "Go 方法需要请求上下文时",
		Rule: "不要把 context.Context 存在结构体字段里，每次调用都作为第一个参数显式传入"}
	lessonCtxFieldEN = recalleval.Lesson{Lang: "en", Kind: "prefer", Trigger: "when a Go method needs the request context",
		Rule: "keep the context in a ctx field on the struct instead of passing it to every call"}
	lessonCtxParamEN = recalleval.Lesson{Lang: "en", Kind: "avoid", Trigger: "when a Go method needs the request context",
		Rule: "don't store context.Context in a struct field; pass ctx as the first parameter of every call"}
	lessonTzEN = recalleval.Lesson{Lang: "en", Kind: "prefer", Trigger: "when adding a time column to a PostgreSQL table",
		Rule: "use timestamptz, not plain timestamp"}
	lessonNaiveZH = recalleval.Lesson{Lang: "zh", Kind: "prefer", Trigger: "给 PostgreSQL 表加时间列时",
		Rule: "统一用 timestamp without time zone，时区交给应用层转换"}
	lessonTzZH = recalleval.Lesson{Lang: "zh", Kind: "prefer", Trigger: "给 PostgreSQL 表加时间列时",
		Rule: "用 timestamptz，不要用不带时区的 timestamp"}
)

// TestWriterCrossLanguageContradictions: an English lesson and a Chinese
// one that prescribe opposite actions are created as two heuristics (the
// contradiction veto reads the stance of each rule across languages:
// "不要把 context 存在结构体字段里" against "keep the context in a ctx
// field … instead of passing it"; "use timestamptz, not plain timestamp"
// against "用 timestamp without time zone", where "without" names a type,
// not a rejection), while the Chinese restatement of each English lesson
// still updates it.
func TestWriterCrossLanguageContradictions(t *testing.T) {
	b := testkit.Open(t, "sqlite")
	if b.E.EmbedderID() != experience.OfflineMergeEmbedderID() {
		t.Skipf("embedder %s", b.E.EmbedderID())
	}
	for _, c := range []struct {
		name    string
		a, b    recalleval.Lesson
		opposed bool
		want    experience.EvidenceAction
		heurs   int
	}{
		{"zh-en contradiction: context in a struct field", lessonCtxFieldZH, lessonCtxFieldEN, true, experience.EvidenceCreated, 2},
		{"en-zh contradiction: timestamptz vs timestamp without time zone", lessonTzEN, lessonNaiveZH, true, experience.EvidenceCreated, 2},
		{"zh-en duplicate: context as a parameter", lessonCtxFieldZH, lessonCtxParamEN, false, experience.EvidenceUpdated, 1},
		{"en-zh duplicate: timestamptz", lessonTzEN, lessonTzZH, false, experience.EvidenceUpdated, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := experience.Contradicts(c.a.MergeLesson(), c.b.MergeLesson()); got != c.opposed {
				t.Errorf("Contradicts = %v, want %v", got, c.opposed)
			}
			got, hs := writePair(t, b.E, "q18-"+c.name, c.a, c.b)
			if got != c.want || len(hs) != c.heurs {
				t.Fatalf("decision %s with %d heuristics, want %s with %d", got, len(hs), c.want, c.heurs)
			}
		})
	}
}
