package recalleval_test

import (
	"testing"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/recalleval"
	"github.com/kaizenhq/kaizen/internal/testkit"
)

// Pairs written for dup18 (none from a labelled set): one situation with
// two different actions, and duplicates the OtherRule guard must leave to
// the classifier.
var (
	lessonBodyLimit = recalleval.Lesson{Lang: "en", Kind: "prefer", Trigger: "when a Go HTTP handler reads the request body",
		Rule: "cap its size with http.MaxBytesReader before decoding it"}
	lessonBodyLimitRe = recalleval.Lesson{Lang: "en", Kind: "avoid", Trigger: "when a Go HTTP handler reads the request body",
		Rule: "don't decode it without capping its size with http.MaxBytesReader"}
	lessonBodyLimitZH = recalleval.Lesson{Lang: "zh", Kind: "prefer", Trigger: "Go 的 HTTP handler 读取请求体时",
		Rule: "先用 http.MaxBytesReader 限制大小再解码"}
	lessonRetryBackoff = recalleval.Lesson{Lang: "en", Kind: "prefer", Trigger: "when a client retries a failed request",
		Rule: "wait with exponential backoff and random jitter between attempts"}
	lessonRetryWhich = recalleval.Lesson{Lang: "en", Kind: "prefer", Trigger: "when a client retries a failed request",
		Rule: "retry only on errors that are retryable, such as 503 and timeouts, not on 400"}
	lessonQueueIdem = recalleval.Lesson{Lang: "en", Kind: "prefer", Trigger: "when a service writes to a message queue",
		Rule: "make the consumer idempotent so a redelivered message does no harm"}
	lessonQueueDLQ = recalleval.Lesson{Lang: "en", Kind: "prefer", Trigger: "when a service writes to a message queue",
		Rule: "set a dead-letter queue for messages the consumer keeps failing on"}
)

// TestWriterOtherRule drives the default writer through the OtherRule
// guard: a lesson naming an existing lesson's situation word for word
// with another action is created, not merged (the classifier alone says
// duplicate: the copied trigger outweighs the different rule), while a
// reworded and a Chinese restatement of the same action still update it.
func TestWriterOtherRule(t *testing.T) {
	b := testkit.Open(t, "sqlite")
	if b.E.EmbedderID() != experience.OfflineMergeEmbedderID() {
		t.Skipf("embedder %s", b.E.EmbedderID())
	}
	for _, c := range []struct {
		name  string
		a, b  recalleval.Lesson
		want  experience.EvidenceAction
		heurs int
		// guarded says whether OtherRule keeps the pair apart while the
		// classifier alone would fold it (the test must exercise the
		// guard, not the classifier).
		guarded bool
	}{
		{"same trigger, other rule (retries)", lessonRetryBackoff, lessonRetryWhich, experience.EvidenceCreated, 2, true},
		{"same trigger, other rule (queue)", lessonQueueIdem, lessonQueueDLQ, experience.EvidenceCreated, 2, true},
		{"reworded duplicate", lessonBodyLimit, lessonBodyLimitRe, experience.EvidenceUpdated, 1, false},
		{"en-zh duplicate", lessonBodyLimit, lessonBodyLimitZH, experience.EvidenceUpdated, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := experience.OtherRule(c.a.MergeLesson(), c.b.MergeLesson()); got != c.guarded {
				t.Fatalf("OtherRule = %v, want %v", got, c.guarded)
			}
			if c.guarded {
				x, err := experience.MergeFeatures(c.a.MergeLesson(), c.b.MergeLesson(), offlineEmbed())
				if err != nil {
					t.Fatal(err)
				}
				if act, _, err := experience.OfflineMergeClassifier().Decide(x); err != nil || act == experience.EvidenceCreated {
					t.Fatalf("the classifier alone decides %s (%v); the pair no longer exercises the guard", act, err)
				}
			}
			got, hs := writePair(t, b.E, "or-"+c.name, c.a, c.b)
			if got != c.want || len(hs) != c.heurs {
				t.Fatalf("decision %s with %d heuristics, want %s with %d", got, len(hs), c.want, c.heurs)
			}
		})
	}
}
