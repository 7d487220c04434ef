package jobs

import (
	"testing"
	"time"
)

// A WakeAt while the runner is awake (it may have read the store before
// the work committed) does not wake it but shortens its next sleep, once.
func TestWakeAtWhileAwake(t *testing.T) {
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	r := New(nil, Options{Now: func() time.Time { return now }})
	woken := func() bool {
		select {
		case <-r.wake:
			return true
		default:
			return false
		}
	}
	r.WakeAt(now.Add(5 * time.Second))
	r.WakeAt(now.Add(time.Minute)) // the earliest is kept
	if woken() {
		t.Fatal("WakeAt woke a runner that is awake")
	}
	if d := r.sleep(time.Hour); d != 5*time.Second {
		t.Fatalf("sleep after a WakeAt while awake = %v, want 5s", d)
	}
	// asleep until now+5s
	r.WakeAt(now.Add(10 * time.Second))
	if woken() {
		t.Fatal("WakeAt for work due after the runner's look woke it")
	}
	r.WakeAt(now.Add(time.Second))
	if !woken() {
		t.Fatal("WakeAt for work due before the runner's look did not wake it")
	}
	r.awake()
	if d := r.sleep(time.Hour); d != time.Hour {
		t.Fatalf("a due time recorded while awake shortened two sleeps: %v", d)
	}
	r.awake()
	r.WakeAt(now.Add(-time.Second)) // already due
	if d := r.sleep(time.Hour); d != 0 {
		t.Fatalf("sleep with work already due = %v, want 0", d)
	}
}
