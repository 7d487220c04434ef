package kaizen_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
)

// TestGuidanceByInferredKind: no tags anywhere, and every description
// different; migrations and bugfixes want opposite strategies. Guidance for
// a new task that shares no word with any past one still recommends its
// kind's strategies, because kaizen infers the task kind from the
// description; the recommendation and the markdown say which kind.
func TestGuidanceByInferredKind(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend, func(c *kaizen.Config) { c.Learning.Ranking = "bayes" })
		descs := map[bool][]string{
			true: {"add a column to the orders table", "rename users.email_address to users.email", "add an index on invoices.created_at",
				"move addresses into their own table with a foreign key", "backfill the schema change of the payments table"},
			false: {"fix the crash when the cart is empty", "fix the race in the session cache", "fix the wrong total on refunds",
				"fix the memory leak in the websocket hub", "修复导出时中文乱码的问题"},
		}
		good := map[bool][]string{true: {"Sequential execution order", "Respect dependency chain"},
			false: {"Maximize parallelization", "Split by component"}}
		all := append(slices.Clone(good[true]), good[false]...)
		r := rand.New(rand.NewPCG(3, 9))
		for i := range 160 {
			mig := i%2 == 0
			p := all[r.IntN(4)]
			success := r.Float64() < 0.15
			if slices.Contains(good[mig], p) {
				success = r.Float64() < 0.9
			}
			in := outcome(sprintf("t%d", i), success, p)
			in.Task = descs[mig][r.IntN(len(descs[mig]))]
			if _, err := b.e.RecordOutcome(ctx, in); err != nil {
				t.Fatal(err)
			}
			b.clock.Advance(time.Hour)
		}
		for _, q := range []struct {
			task, kind string
			mig        bool
		}{
			{"Add a NOT NULL constraint on shipments.carrier", "migration", true},
			{"the scheduler panics and deadlocks under load", "bugfix", false},
		} {
			g, err := b.e.PlanGuidance(ctx, kaizen.PlanInput{Task: q.task})
			if err != nil {
				t.Fatal(err)
			}
			if g.Kind != q.kind || len(g.Recommended) < 2 {
				t.Fatalf("%q: kind %q, recommendation %+v", q.task, g.Kind, g.Recommendation)
			}
			for _, r := range g.Recommended[:2] {
				if !slices.Contains(good[q.mig], r.Content) {
					t.Errorf("%q: top two %s, %s, want %v", q.task, g.Recommended[0].Content, g.Recommended[1].Content, good[q.mig])
				}
			}
			if md := g.Markdown(); !strings.Contains(md, "Task kind (inferred from the description): "+q.kind) {
				t.Errorf("%q: markdown does not name the kind:\n%s", q.task, md)
			}
		}
	})
}

// TestPlanGuidanceWithExplicitKind: a plan request may name the kind of
// task instead of describing it (the viewer's rankings by kind, scripts);
// an unknown kind is refused with a typed error naming the field.
func TestPlanGuidanceWithExplicitKind(t *testing.T) {
	b := setup(t, "sqlite", func(c *kaizen.Config) { c.Learning.Ranking = "bayes" })
	for i := range 40 {
		mig := i%2 == 0
		p, desc := "Maximize parallelization", "fix the crash on empty carts"
		if mig {
			p, desc = "Sequential execution order", "add a column to the orders table"
		}
		in := outcome(sprintf("t%d", i), true, p)
		in.Task = desc
		if _, err := b.e.RecordOutcome(ctx, in); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(time.Hour)
	}
	g, err := b.e.PlanGuidance(ctx, kaizen.PlanInput{Kind: "migration"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Kind != "migration" || len(g.SimilarTasks) == 0 || g.SimilarTasks[0].Task != "add a column to the orders table" {
		t.Errorf("kind migration: kind %q, similar %+v", g.Kind, g.SimilarTasks)
	}
	if len(g.Recommended) == 0 || g.Recommended[0].Content != "Sequential execution order" {
		t.Errorf("kind migration: recommended %+v", g.Recommended)
	}
	_, err = b.e.PlanGuidance(ctx, kaizen.PlanInput{Kind: "astrology"})
	var ke *kaizen.Error
	if !errors.As(err, &ke) || ke.Kind != kaizen.KindInvalid || ke.Field != "kind" {
		t.Errorf("unknown kind: %v, want an invalid-input error on kind", err)
	}
}
