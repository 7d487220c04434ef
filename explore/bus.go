package explore

import (
	"math"
	"strings"
	"sync"
	"time"
)

// Signal types the tracker emits.
const (
	SignalPhase = "exploration.phase" // value 1 entering the terminal phase, else 0.5; metadata from, to, round, cause
	SignalNudge = "exploration.nudge" // value 1 for force_exit, else 0.5; metadata kind, round, phase
	SignalExit  = "exploration.exit"  // value 0; metadata total_iterations, reason
)

// Signal is one event on a Bus. Value is always within 0..1.
type Signal struct {
	Type     string         `json:"type"`
	Source   string         `json:"source"`
	Target   string         `json:"target,omitempty"`
	Value    float64        `json:"value"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Time     time.Time      `json:"time"`
}

// Bus is a synchronous signal bus. Subscriptions match a signal type exactly,
// any of several types ("a|b"), or every type ("*"); Emit calls exact-type
// handlers first, then wildcard handlers, in subscription order, on the
// caller's goroutine. A Bus is safe for concurrent use; handlers may
// subscribe and unsubscribe. The nil *Bus drops every signal.
type Bus struct {
	mu   sync.RWMutex
	subs []subscription
	next uint64
}

type subscription struct {
	id       uint64
	types    []string // nil: wildcard
	wildcard bool
	handle   func(Signal)
}

// NewBus returns an empty bus.
func NewBus() *Bus { return &Bus{} }

// Subscribe registers handle for the types in pattern ("a", "a|b" or "*") and
// returns a function that removes the subscription. A nil handler or an empty
// pattern subscribes to nothing.
func (b *Bus) Subscribe(pattern string, handle func(Signal)) (unsubscribe func()) {
	if b == nil || handle == nil {
		return func() {}
	}
	var sub subscription
	for _, t := range strings.Split(pattern, "|") {
		switch t = strings.TrimSpace(t); t {
		case "":
		case "*":
			sub.wildcard = true
		default:
			sub.types = append(sub.types, t)
		}
	}
	if !sub.wildcard && len(sub.types) == 0 {
		return func() {}
	}
	sub.handle = handle
	b.mu.Lock()
	b.next++
	sub.id = b.next
	b.subs = append(b.subs, sub)
	b.mu.Unlock()
	id := sub.id
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for i, s := range b.subs {
			if s.id == id {
				b.subs = append(b.subs[:i:i], b.subs[i+1:]...)
				return
			}
		}
	}
}

// Emit delivers s, with its value clamped to 0..1 (NaN becomes 0).
func (b *Bus) Emit(s Signal) {
	if b == nil {
		return
	}
	s.Value = clamp01(s.Value)
	b.mu.RLock()
	var exact, wild []func(Signal)
	for _, sub := range b.subs {
		if sub.wildcard {
			wild = append(wild, sub.handle)
			continue
		}
		for _, t := range sub.types {
			if t == s.Type {
				exact = append(exact, sub.handle)
				break
			}
		}
	}
	b.mu.RUnlock()
	for _, h := range exact {
		h(s)
	}
	for _, h := range wild {
		h(s)
	}
}

// Send builds and emits a signal.
func (b *Bus) Send(typ, source string, value float64, metadata map[string]any, at time.Time) {
	if b == nil {
		return
	}
	b.Emit(Signal{Type: typ, Source: source, Value: value, Metadata: metadata, Time: at})
}

func clamp01(v float64) float64 {
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	return math.Min(v, 1)
}
