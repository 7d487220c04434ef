package viewer_test

import (
	"context"
	"sync"
	"testing"

	"github.com/kaizenhq/kaizen"
)

// TestEventsPollerLate: a change made after a stream sent its first
// version but before the project's poller first read the signature (a
// poller goroutine started late on a loaded machine) is still announced.
// The poller used to take its first reading as the baseline, so the
// change was never sent (CI: TestExploreLiveUpdate waited in vain).
func TestEventsPollerLate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.startSession(kaizen.ExploreStartInput{SessionID: "late", Strategy: "analyst"})
	sent := make(chan struct{})
	var once sync.Once
	b.viewer.SetBeforePoll(func() {
		once.Do(func() {
			<-sent // the stream has sent its first version
			if _, err := b.engine.ExploreEvent(context.Background(), kaizen.ExploreEventInput{Project: "proj", SessionID: "late",
				Events: toolRound("Grep", map[string]any{"pattern": "late"})}); err != nil {
				t.Error(err)
			}
		})
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, _ := openStream(ctx, t, b.ts.Client(), b.ts.URL+"/events?project=proj", nil)
	first := next(t, ch)
	close(sent)
	ev := next(t, ch)
	if ev.name != "version" || ev.data == first.data {
		t.Fatalf("after the change: %+v (first %q)", ev, first.data)
	}
}
