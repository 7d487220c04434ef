package recalleval_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/recalleval"
	"github.com/kaizenhq/kaizen/internal/testkit"
)

// The writer's decision paths on crafted pairs (none of them from a
// labelled set): each pair's first lesson goes into a project of its own,
// then its second; the test checks the decision and what it did to the
// store.

var (
	lessonRetryEN = recalleval.Lesson{Lang: "en", Kind: "avoid", Trigger: "when adding automatic retries to an HTTP client",
		Rule: "do not retry POST requests that are not idempotent unless the request carries an idempotency key"}
	lessonRetryZH = recalleval.Lesson{Lang: "zh", Kind: "avoid", Trigger: "给 HTTP 客户端加自动重试的时候",
		Rule: "不要重试非幂等的 POST 请求，除非请求带了幂等键"}
	lessonMutableDefaultEN = recalleval.Lesson{Lang: "en", Kind: "avoid", Trigger: "when a Python function takes a list or dict default argument",
		Rule: "never use a mutable default value; default to None and create the object inside the function"}
	lessonMutableDefaultZH = recalleval.Lesson{Lang: "zh", Kind: "avoid", Trigger: "给 Python 函数的参数设置默认值时",
		Rule: "不要用列表或字典这种可变对象做默认值，默认 None，在函数里再新建"}
	lessonPinSHA = recalleval.Lesson{Lang: "en", Kind: "avoid", Trigger: "when a CI workflow uses third-party actions",
		Rule: "never reference an action by a mutable tag or branch; pin it to a full commit SHA"}
	lessonFloatTag = recalleval.Lesson{Lang: "en", Kind: "prefer", Trigger: "when a CI workflow uses official actions",
		Rule: "reference them by their major version tag such as @v4 so that fixes arrive automatically"}
	lessonTestFirst = recalleval.Lesson{Lang: "en", Kind: "prefer", Trigger: "when fixing a reported bug",
		Rule: "write a failing test that reproduces it before changing the code"}
	lessonDockerRoot = recalleval.Lesson{Lang: "en", Kind: "avoid", Trigger: "when writing a Dockerfile for a production service",
		Rule: "do not run the process as root; add a user and switch to it with USER"}
	lessonDockerLayers = recalleval.Lesson{Lang: "en", Kind: "avoid", Trigger: "when writing a Dockerfile for a production service",
		Rule: "do not copy the whole source tree before installing dependencies; copy the manifests first so the layer is cached"}
	lessonDockerLayersPrefer = recalleval.Lesson{Lang: "en", Kind: "prefer", Trigger: "when writing a Dockerfile for a production service",
		Rule: "copy the dependency manifests and install them before copying the source so the layer is cached"}
)

// writePair writes a then b into a project of its own and returns b's
// decision and the project's heuristics.
func writePair(t *testing.T, e *kaizen.Engine, project string, a, b recalleval.Lesson) (experience.EvidenceAction, []experience.Heuristic) {
	t.Helper()
	ctx := context.Background()
	r, err := recalleval.EvalDedup(ctx, e, project+"-", []recalleval.Pair{{ID: "p", Label: "duplicate", A: a, B: b}})
	if err != nil {
		t.Fatal(err)
	}
	list, err := e.ListHeuristics(ctx, kaizen.HeuristicQuery{Project: project + "-p"})
	if err != nil {
		t.Fatal(err)
	}
	return r.Decisions["p"], list.Items
}

// TestWriterDecisionPaths drives the default writer (the merge classifier
// of the offline embedder) through its paths: a duplicate restated in the
// other language and one reworded in the same language update the first
// heuristic (one heuristic, two supporting tasks, two pieces of
// evidence); a contradiction, a same-domain lesson and one from another
// area are created (two heuristics). Nothing is appended: the shipped
// classifier never finds a related lesson likely enough (P(related) >
// FoldCost · P(unrelated)) to risk folding an unrelated one.
func TestWriterDecisionPaths(t *testing.T) {
	ctx := context.Background()
	b := testkit.Open(t, "sqlite")
	if b.E.EmbedderID() != experience.OfflineMergeEmbedderID() {
		t.Skipf("embedder %s", b.E.EmbedderID())
	}
	for _, c := range []struct {
		name string
		a, b recalleval.Lesson
		want experience.EvidenceAction
	}{
		{"en-zh duplicate", lessonRetryEN, lessonRetryZH, experience.EvidenceUpdated},
		{"zh-en duplicate", lessonMutableDefaultZH, lessonMutableDefaultEN, experience.EvidenceUpdated},
		{"same-language duplicate, other kind", lessonDockerLayers, lessonDockerLayersPrefer, experience.EvidenceUpdated},
		{"contradiction", lessonPinSHA, lessonFloatTag, experience.EvidenceCreated},
		{"same situation, other lesson", lessonDockerRoot, lessonDockerLayers, experience.EvidenceCreated},
		{"other area", lessonRetryEN, lessonTestFirst, experience.EvidenceCreated},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, hs := writePair(t, b.E, "paths-"+c.name, c.a, c.b)
			if got != c.want {
				t.Fatalf("decision %s, want %s", got, c.want)
			}
			switch got {
			case experience.EvidenceUpdated:
				if len(hs) != 1 {
					t.Fatalf("%d heuristics after an update, want 1", len(hs))
				}
				d, err := b.E.GetHeuristic(ctx, hs[0].Project, hs[0].ID)
				if err != nil {
					t.Fatal(err)
				}
				if d.Heuristic.Trigger != c.a.Trigger || d.Heuristic.SupportTasks != 2 || d.Heuristic.EvidenceCount != 2 || len(d.Evidence) != 2 {
					t.Errorf("updated heuristic: trigger %q, support %d, evidence %d (%d rows); want the first lesson's, 2, 2",
						d.Heuristic.Trigger, d.Heuristic.SupportTasks, d.Heuristic.EvidenceCount, len(d.Evidence))
				}
			case experience.EvidenceCreated:
				if len(hs) != 2 {
					t.Fatalf("%d heuristics after a create, want 2", len(hs))
				}
			}
		})
	}
	// The first lesson of a project has no neighbour: created.
	got, hs := writePair(t, b.E, "paths-first", lessonTestFirst, lessonRetryEN)
	if got != experience.EvidenceCreated || len(hs) != 2 {
		t.Errorf("two unrelated lessons: %s, %d heuristics", got, len(hs))
	}
}

// TestWriterAppendPath reaches the append path, which the offline
// embedder's defaults never take (the classifier prefers create when
// unsure and its thresholds are update 0.55 = append 0.55): with
// merge.method "threshold" and thresholds that leave room between update
// and append, a related lesson of the same kind is appended as evidence
// (one heuristic, support unchanged, evidence 2, the second lesson's rule
// kept in the evidence text) and one of another kind is created.
func TestWriterAppendPath(t *testing.T) {
	ctx := context.Background()
	b := testkit.Open(t, "sqlite", func(c *kaizen.Config) {
		c.Experience.Merge.Method = experience.MergeByThreshold
		c.Experience.Merge.Calibrated = map[string]experience.MergeCalibration{
			experience.OfflineMergeEmbedderID(): {Update: 0.95, Append: 0.25}}
	})
	got, hs := writePair(t, b.E, "append-same-kind", lessonDockerRoot, lessonDockerLayers)
	if got != experience.EvidenceAppend || len(hs) != 1 {
		t.Fatalf("related lesson of the same kind: %s, %d heuristics; want appended, 1", got, len(hs))
	}
	d, err := b.E.GetHeuristic(ctx, hs[0].Project, hs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Heuristic.Rule != lessonDockerRoot.Rule || d.Heuristic.SupportTasks != 1 || d.Heuristic.EvidenceCount != 2 {
		t.Errorf("after an append: rule %q, support %d, evidence %d; want the first rule, 1, 2", d.Heuristic.Rule, d.Heuristic.SupportTasks, d.Heuristic.EvidenceCount)
	}
	kept := false
	for _, ev := range d.Evidence {
		if ev.Action == experience.EvidenceAppend && strings.Contains(ev.Text, lessonDockerLayers.Rule) {
			kept = true
		}
	}
	if !kept {
		t.Errorf("the appended lesson's rule is not in the evidence: %+v", d.Evidence)
	}
	if got, hs := writePair(t, b.E, "append-other-kind", lessonDockerRoot, lessonDockerLayersPrefer); got != experience.EvidenceCreated || len(hs) != 2 {
		t.Errorf("related lesson of another kind: %s, %d heuristics; want created, 2", got, len(hs))
	}
}

// TestRecallTriggerCheck: a query that reaches the topic floor through a
// lesson's rule, not its trigger (a dev query of the extra set about
// secrets in an access log, and a lesson on structured logs with request
// ids: topic 0.63, trigger 0.26) is held back by the trigger check and
// says why; with the check off it is injected. A query about the lesson's
// trigger is injected with the check on.
func TestRecallTriggerCheck(t *testing.T) {
	ctx := context.Background()
	lesson := recalleval.Lesson{ID: "L080", Lang: "zh", Kind: "prefer", Trigger: "给服务添加日志时",
		Rule: "使用结构化日志（键值对或 JSON），并在每条日志里带上 request id / trace id",
		Why:  "纯文本日志难以检索和聚合，没有关联 id 就无法把一次请求的多条日志串起来"}
	const ruleOnly = "our access-log middleware prints every incoming request verbatim, bearer header and JSON payload included"
	for _, c := range []struct {
		name  string
		off   bool
		query string
		want  bool
	}{
		{"check on, rule words only", false, ruleOnly, false},
		{"check off, rule words only", true, ruleOnly, true},
		{"check on, about the trigger", false, "给订单服务添加日志：用结构化日志，每条带上 request id", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := testkit.Open(t, "sqlite", func(cfg *kaizen.Config) {
				if c.off {
					cal := cfg.Experience.Recall.Calibrated[experience.OfflineMergeEmbedderID()]
					cal.MinTriggerTopic = 0
					cfg.Experience.Recall.Calibrated = map[string]experience.RecallCalibration{experience.OfflineMergeEmbedderID(): cal}
				}
			})
			if b.E.EmbedderID() != experience.OfflineMergeEmbedderID() {
				t.Skipf("embedder %s", b.E.EmbedderID())
			}
			if _, err := recalleval.Load(ctx, b.E, "p", []recalleval.Lesson{lesson}); err != nil {
				t.Fatal(err)
			}
			rec, err := b.E.Recall(ctx, kaizen.RecallInput{Project: "p", Query: c.query, Kinds: []string{"heuristic"}, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(rec.Heuristics) == 1; got != c.want {
				t.Fatalf("injected %v, want %v (items %+v, abstained %v: %s)", got, c.want, rec.Items, rec.Abstained, rec.AbstainReason)
			}
			if !c.want && (!rec.Abstained || !strings.Contains(rec.AbstainReason, "trigger")) {
				t.Errorf("held back without saying why: abstained %v, %q", rec.Abstained, rec.AbstainReason)
			}
		})
	}
}
