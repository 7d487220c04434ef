package team

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

var sentinels = []error{ErrInvalid, ErrCycle, ErrUnknownTask, ErrTransition, ErrNotEligible, ErrNotReady, ErrStaleEpoch,
	ErrLeaseExpired, ErrNotHolder, ErrUnknownType, ErrPayload, ErrDelivery, ErrUnknownPattern, ErrRunFinished,
	ErrTimerNotDue, ErrBadEvent, ErrBadRun, ErrSwarmActive, ErrComposition, ErrCoordinator, ErrLimit}

func typed(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// FuzzStepEvent feeds arbitrary events to fresh runs of every pattern: no
// panic, only typed errors, iterations within bounds.
func FuzzStepEvent(f *testing.F) {
	f.Add(uint8(0), []byte(`{"kind":"task","task_key":"plan-1","task":{"status":"failed"}}`))
	inputs := propInputs()
	f.Fuzz(func(t *testing.T, pi uint8, data []byte) {
		p := Patterns[int(pi)%len(Patterns)]
		r, _, err := Start(RunSpec{ID: "r", Pattern: p, Team: "alpha", Config: DefaultConfig(), Input: mustJSON(t, inputs[p])}, t0)
		if err != nil {
			t.Fatal(err)
		}
		var ev Event
		if json.Unmarshal(data, &ev) != nil {
			return
		}
		for i := 0; i < 3; i++ {
			nr, _, err := Step(r, ev, t0.Add(time.Duration(i)*10*time.Minute))
			if err != nil {
				if !typed(err) {
					t.Fatalf("untyped error %T: %v", err, err)
				}
				continue
			}
			if nr.Iteration > nr.MaxIterations {
				t.Fatalf("iteration %d > %d", nr.Iteration, nr.MaxIterations)
			}
			r = nr
			if r.Finished() {
				return
			}
		}
	})
}
