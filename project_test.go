package kaizen_test

import (
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
)

func TestProjectSignatureAndSeries(t *testing.T) {
	b := setup(t, "sqlite")
	sig := func() string {
		t.Helper()
		s, err := b.e.ProjectSignature(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s0 := sig()
	if s0 != sig() {
		t.Fatal("the signature must be stable without changes")
	}
	steps := []func() error{
		func() error { _, err := b.e.RecordOutcome(ctx, outcome("bd-1", true, "Split by feature")); return err },
		func() error {
			_, err := b.e.PromotePattern(ctx, kaizen.ManualInput{Pattern: "Split by feature"})
			return err
		},
		func() error {
			_, err := b.e.RecordError(ctx, kaizen.ErrorInput{TaskID: "bd-2", Message: "x"})
			return err
		},
		func() error {
			_, err := b.e.RecordTaskEvent(ctx, kaizen.TaskEventInput{TaskID: "s", Kind: "prompt", Text: "go"})
			return err
		},
		func() error {
			_, err := b.e.ExploreStart(ctx, kaizen.ExploreStartInput{SessionID: "s", Strategy: "analyst"})
			return err
		},
	}
	prev := s0
	for i, step := range steps {
		b.clock.Advance(time.Second)
		if err := step(); err != nil {
			t.Fatal(err)
		}
		if s := sig(); s == prev {
			t.Errorf("step %d did not change the signature", i)
		} else {
			prev = s
		}
	}
	b.clock.Advance(24 * time.Hour)
	if _, err := b.e.RecordOutcome(ctx, outcome("bd-3", false)); err != nil {
		t.Fatal(err)
	}
	series, capped, err := b.e.OutcomeSeries(ctx, "", 3)
	if err != nil || capped || len(series) != 3 {
		t.Fatalf("%v %v %v", series, capped, err)
	}
	if series[1].Total != 1 || series[1].Succeeded != 1 || series[2].Total != 1 || series[2].Succeeded != 0 || series[0].Total != 0 {
		t.Errorf("series %+v", series)
	}
	if _, _, err := b.e.OutcomeSeries(ctx, "", 0); kaizen.KindOf(err) != kaizen.KindInvalid {
		t.Errorf("days 0: %v", err)
	}
	ps, err := b.e.Projects(ctx)
	if err != nil || len(ps) != 1 || ps[0] != "proj" {
		t.Errorf("projects %v %v", ps, err)
	}
}
