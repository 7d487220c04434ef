package explore

import (
	"math"
	"slices"
	"sync"
	"testing"
)

func TestBus(t *testing.T) {
	t.Parallel()
	bus := NewBus()
	var got []string
	rec := func(tag string) func(Signal) {
		return func(s Signal) { got = append(got, tag+":"+s.Type+":"+formatNumber(s.Value)) }
	}
	bus.Subscribe("*", rec("all"))
	unsubA := bus.Subscribe("a", rec("a"))
	bus.Subscribe("a|b", rec("ab"))
	bus.Subscribe("b|*", rec("b*")) // a wildcard subscription gets each signal once
	bus.Subscribe("", rec("never"))
	bus.Subscribe("a", nil)

	bus.Send("a", "test", 0.3, nil, t0)
	bus.Send("b", "test", 7, nil, t0)
	bus.Send("c", "test", -2, nil, t0)
	bus.Emit(Signal{Type: "a", Value: math.NaN()})
	unsubA()
	unsubA() // idempotent
	bus.Send("a", "test", 1, nil, t0)

	want := []string{
		"a:a:0.3", "ab:a:0.3", "all:a:0.3", "b*:a:0.3", // exact handlers first, then wildcards
		"ab:b:1", "all:b:1", "b*:b:1",
		"all:c:0", "b*:c:0",
		"a:a:0", "ab:a:0", "all:a:0", "b*:a:0",
		"ab:a:1", "all:a:1", "b*:a:1",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("deliveries\n got %q\nwant %q", got, want)
	}
	var nilBus *Bus
	nilBus.Send("a", "x", 1, nil, t0)
	nilBus.Subscribe("a", rec("x"))()
}

func TestBusConcurrent(t *testing.T) {
	t.Parallel()
	bus := NewBus()
	var mu sync.Mutex
	n := 0
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			un := bus.Subscribe("x|*", func(Signal) { mu.Lock(); n++; mu.Unlock() })
			for range 50 {
				bus.Send("x", "g", float64(i), nil, t0)
			}
			un()
		}()
	}
	wg.Wait()
	if n == 0 {
		t.Fatal("no deliveries")
	}
}
