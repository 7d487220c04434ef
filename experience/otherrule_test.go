package experience

import "testing"

func TestOtherRule(t *testing.T) {
	a := MergeLesson{Kind: "prefer", Trigger: "when a client retries a failed request", Rule: "wait with exponential backoff and random jitter between attempts"}
	for _, c := range []struct {
		name string
		b    MergeLesson
		want bool
	}{
		{"same trigger, other rule", MergeLesson{Kind: "prefer", Trigger: "when a client retries a failed request", Rule: "retry only on errors that are retryable, such as 503 and timeouts"}, true},
		{"same trigger, same rule with its terms", MergeLesson{Kind: "avoid", Trigger: "when a client retries a failed request", Rule: "don't retry at once; wait with exponential backoff and jitter"}, false},
		// The guard's cost: a duplicate whose rule is reworded with other
		// words under a copied trigger is kept apart too (none of the dev
		// duplicates is; docs/experience.md).
		{"same trigger, same rule in other words", MergeLesson{Kind: "avoid", Trigger: "when a client retries a failed request", Rule: "don't hammer the server; space the tries further apart each time"}, true},
		{"other trigger", MergeLesson{Kind: "prefer", Trigger: "when a cron job overlaps its previous run", Rule: "take a lock so only one run proceeds"}, false},
		{"other language", MergeLesson{Kind: "prefer", Trigger: "客户端重试失败的请求时", Rule: "只对 503 和超时这类可重试的错误重试"}, false},
		{"blank rule", MergeLesson{Kind: "prefer", Trigger: "when a client retries a failed request"}, false},
		{"blank trigger", MergeLesson{Kind: "prefer", Rule: "retry only on errors that are retryable"}, false},
	} {
		if got := OtherRule(a, c.b); got != c.want {
			t.Errorf("%s: OtherRule = %v, want %v", c.name, got, c.want)
		}
		if got := OtherRule(c.b, a); got != c.want {
			t.Errorf("%s (swapped): OtherRule = %v, want %v", c.name, got, c.want)
		}
	}
	if OtherRule(MergeLesson{}, MergeLesson{}) {
		t.Error("two empty lessons are not another rule")
	}
}
