package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"sort"
	"strings"
)

// ContextHash summarises a context for ExecutionRecord.ContextHash: a hash
// of the sorted key=value pairs of the given keys (every key when none are
// given). Two calls in the same context get the same hash.
func ContextHash(ctx map[string]string, keys ...string) string {
	if len(keys) == 0 {
		keys = sortedKeys(ctx)
	} else {
		keys = append([]string(nil), keys...)
		sort.Strings(keys)
	}
	h := sha256.New()
	for _, k := range keys {
		v, ok := ctx[k]
		if !ok {
			continue
		}
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(v))
		h.Write([]byte{0})
	}
	return "ctx:" + hex.EncodeToString(h.Sum(nil))[:16]
}

// Rate is a success rate with its 95 % Wilson score interval.
type Rate struct {
	Successes int     `json:"successes"`
	Total     int     `json:"total"`
	Rate      float64 `json:"rate"`
	Low       float64 `json:"low"`
	High      float64 `json:"high"`
}

// NewRate computes the rate and its interval. With no trials the rate is 0
// and the interval [0, 1].
func NewRate(successes, total int) Rate {
	r := Rate{Successes: successes, Total: total}
	if total <= 0 {
		r.High = 1
		return r
	}
	if successes < 0 {
		successes = 0
	}
	if successes > total {
		successes = total
	}
	r.Successes = successes
	r.Rate = float64(successes) / float64(total)
	r.Low, r.High = wilson(successes, total)
	return r
}

// wilson returns the 95 % Wilson score interval of k successes in n trials.
func wilson(k, n int) (float64, float64) {
	const z = 1.959963984540054
	p := float64(k) / float64(n)
	nf := float64(n)
	den := 1 + z*z/nf
	center := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return math.Max(0, center-half), math.Min(1, center+half)
}

// ContextRate is the success rate of an artifact in one context.
type ContextRate struct {
	ContextHash string `json:"context_hash"`
	Rate
	// LastError is the most recent error in that context.
	LastError string `json:"last_error,omitempty"`
}

// SuccessRateByContext groups execution records by context hash and
// returns the success rate of each, ordered by context hash (seed: "统计
// Artifact 在不同上下文下的成功率").
func SuccessRateByContext(records []ExecutionRecord) []ContextRate {
	type acc struct {
		ok, total int
		last      ExecutionRecord
	}
	m := map[string]*acc{}
	for _, r := range records {
		a := m[r.ContextHash]
		if a == nil {
			a = &acc{}
			m[r.ContextHash] = a
		}
		a.total++
		if r.Success {
			a.ok++
		} else if !r.Timestamp.Before(a.last.Timestamp) {
			a.last = r
		}
	}
	out := make([]ContextRate, 0, len(m))
	for _, k := range sortedKeys(m) {
		a := m[k]
		out = append(out, ContextRate{ContextHash: k, Rate: NewRate(a.ok, a.total), LastError: a.last.Error})
	}
	return out
}

// FailingContexts returns the contexts in which an artifact (nearly) always
// fails: at least minRuns calls and a success rate at most maxRate (seed:
// "识别在某些条件下总是失败的模式"). The least successful come first.
func FailingContexts(records []ExecutionRecord, minRuns int, maxRate float64) []ContextRate {
	var out []ContextRate
	for _, c := range SuccessRateByContext(records) {
		if c.Total >= minRuns && c.Rate.Rate <= maxRate {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Rate.Rate != out[j].Rate.Rate {
			return out[i].Rate.Rate < out[j].Rate.Rate
		}
		return out[i].Total > out[j].Total
	})
	return out
}

// RecordsFromTrace derives the artifact execution records of a trace: one
// per activated artifact per attempt, the context hashed with keys (every
// key when none). Use it to append to each artifact's execution_history.
func RecordsFromTrace(t *ExecutionTrace, keys ...string) []ExecutionRecord {
	var out []ExecutionRecord
	for _, a := range t.Attempts {
		h := ContextHash(a.Context, keys...)
		for _, art := range a.ActivatedArtifacts {
			out = append(out, ExecutionRecord{Timestamp: a.Timestamp, Success: a.Success, Error: firstLine(a.Error, MaxExampleLen),
				ContextHash: h, ArtifactID: art, TraceID: t.ID})
		}
	}
	return out
}

func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if k := strings.IndexByte(s, '\n'); k >= 0 {
		s = s[:k]
	}
	return Truncate(s, n)
}
