package storetest

import (
	"math"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// testCriterionEvents: AddCriterionEvent under concurrency loses no event,
// keeps the counts exact and the decayed sums equal to the seed's formula
// over every event (whatever the order, and on PostgreSQL however the
// events are spread over shards), and composes with LockCriterion and
// PutCriterion.
func testCriterionEvents(t *testing.T, setup setupFunc) {
	const half = 30.0
	event := func(i int) learning.FeedbackEvent {
		typ := []learning.FeedbackType{learning.Helpful, learning.Harmful, learning.Neutral}[i%3]
		// out of order: times spread over 40 days, not increasing with i
		return learning.FeedbackEvent{Project: "p", Criterion: "type_safe", Type: typ, RawValue: 0.1 + float64(i%7)/10,
			Timestamp: at(0).Add(time.Duration((i*37)%40) * 24 * time.Hour)}
	}
	now := at(0).Add(50 * 24 * time.Hour)
	want := func(n int) (helpful, harmful float64, counts [3]int64) {
		var h, x []learning.Timed
		for i := range n {
			e := event(i)
			switch e.Type {
			case learning.Helpful:
				h = append(h, learning.Timed{Value: e.RawValue, At: e.Timestamp})
				counts[0]++
			case learning.Harmful:
				x = append(x, learning.Timed{Value: e.RawValue, At: e.Timestamp})
				counts[1]++
			default:
				counts[2]++
			}
		}
		return learning.RecomputeDecayed(h, now, half), learning.RecomputeDecayed(x, now, half), counts
	}
	check := func(t *testing.T, what string, c learning.Criterion, n int) {
		t.Helper()
		h, x, counts := want(n)
		if c.HelpfulCount != counts[0] || c.HarmfulCount != counts[1] || c.NeutralCount != counts[2] {
			t.Errorf("%s: counts %d/%d/%d, want %v", what, c.HelpfulCount, c.HarmfulCount, c.NeutralCount, counts)
		}
		for _, s := range []struct {
			name      string
			got, want float64
		}{{"helpful", c.Helpful.At(now, half), h}, {"harmful", c.Harmful.At(now, half), x}} {
			if math.Abs(s.got-s.want) > 1e-9*math.Max(1, s.want) {
				t.Errorf("%s: %s sum %.15g, want %.15g", what, s.name, s.got, s.want)
			}
		}
	}

	t.Run("Concurrent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		errs := together(workers, func(i int) error {
			return b.s.Update(b.ctx, func(tx store.Tx) error {
				e := event(i)
				c, err := tx.AddCriterionEvent(b.ctx, e, e.RawValue, half, at(1))
				if err == nil && c.HelpfulCount+c.HarmfulCount+c.NeutralCount < 1 {
					t.Errorf("event %d: the returned criterion does not count it: %+v", i, c)
				}
				return err
			})
		})
		requireNoErrors(t, "AddCriterionEvent", errs)
		c, err := get(b, func(tx store.Tx) (learning.Criterion, error) { return tx.GetCriterion(b.ctx, "p", "type_safe") })
		if err != nil {
			t.Fatal(err)
		}
		check(t, "GetCriterion", c, workers)
		if c.CreatedAt.IsZero() || !c.UpdatedAt.Equal(at(1)) || c.LastValidated.IsZero() {
			t.Errorf("times: %+v", c)
		}
		list := read(b, func(tx store.Tx) ([]learning.Criterion, error) { return tx.ListCriteria(b.ctx, "p") })
		if len(list) != 1 {
			t.Fatalf("ListCriteria: %v", list)
		}
		check(t, "ListCriteria", list[0], workers)
	})

	t.Run("WithLockAndPut", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		add := func(i int) {
			b.update(func(tx store.Tx) error {
				e := event(i)
				_, err := tx.AddCriterionEvent(b.ctx, e, e.RawValue, half, at(1))
				return err
			})
		}
		for i := range 10 {
			add(i)
		}
		// a read-modify-write of the whole aggregate sees every event
		b.update(func(tx store.Tx) error {
			c, err := tx.LockCriterion(b.ctx, "p", "type_safe", at(1))
			if err != nil {
				return err
			}
			check(t, "LockCriterion", c, 10)
			c.NeutralCount += 100
			return tx.PutCriterion(b.ctx, c)
		})
		for i := 10; i < 20; i++ {
			add(i)
		}
		c, err := get(b, func(tx store.Tx) (learning.Criterion, error) { return tx.GetCriterion(b.ctx, "p", "type_safe") })
		if err != nil {
			t.Fatal(err)
		}
		c.NeutralCount -= 100
		check(t, "after PutCriterion and more events", c, 20)
	})
}
