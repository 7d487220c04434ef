package learningsvc

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// indexWorld is a project of n patterns with every case the guidance index
// must get right: manual states, anti-patterns and inverted patterns,
// strategy tags and contents equal to strategy labels (mentions), equal
// contents and equal evidence (ties), patterns deprecated by their
// evidence, and events after the index time.
func indexWorld(n int, t0 time.Time, future bool, r *rand.Rand) []*store.PatternRecord {
	day := 24 * time.Hour
	recs := make([]*store.PatternRecord, 0, n)
	for i := range n {
		p := learning.Pattern{ID: fmt.Sprintf("p-%05d", i), Project: "x", Kind: learning.KindPattern,
			Content: fmt.Sprintf("Pattern %d", i%(n/3+1)), Tags: []string{}, SuccessCount: r.Int64N(20), FailureCount: r.Int64N(20)}
		m := learning.Maturity{Project: "x", PatternID: p.ID}
		at := func() time.Time {
			if future && r.IntN(40) == 0 { // after the index time
				return t0.Add(time.Duration(r.Int64N(int64(5 * day))))
			}
			return t0.Add(-time.Duration(r.Int64N(int64(200 * day))))
		}
		switch k := r.IntN(10); {
		case k < 2: // ties: the same evidence as many others
			m.Helpful = learning.DecayedSum{Value: 6, Ref: t0.Add(-day)}
			m.Harmful = learning.DecayedSum{Value: 1, Ref: t0.Add(-day)}
		case k < 9:
			if r.IntN(8) > 0 {
				m.Helpful = learning.DecayedSum{Value: 30 * r.Float64(), Ref: at()}
			}
			if r.IntN(3) > 0 {
				m.Harmful = learning.DecayedSum{Value: 12 * r.Float64(), Ref: at()}
			}
		}
		switch r.IntN(25) {
		case 0:
			m.Manual, m.ManualReason = learning.Proven, "validated"
		case 1:
			m.Manual, m.ManualReason = learning.Deprecated, "broke the build"
		case 2:
			p.Kind, p.SourceID = learning.KindAntiPattern, fmt.Sprintf("p-%05d", r.IntN(n))
		case 3:
			p.AntiPatternID = "anti-" + p.ID
		}
		if r.IntN(8) == 0 {
			st := learning.Strategies[r.IntN(len(learning.Strategies))]
			p.Tags = []string{st.Tag()}
		}
		if r.IntN(30) == 0 {
			st := learning.Strategies[r.IntN(len(learning.Strategies))]
			p.Content = st.Label + "."
		}
		recs = append(recs, &store.PatternRecord{Pattern: p, Maturity: m, Version: 1})
	}
	return recs
}

// fullGuidance is guidance over every pattern evaluated (what plan
// guidance did before the index).
func fullGuidance(s *Service, recs []*store.PatternRecord, in PlanInput, now time.Time) string {
	var views []learning.PatternView
	var antis []learning.Pattern
	reasons := map[string]string{}
	for _, r := range recs {
		if r.Pattern.Kind == learning.KindAntiPattern {
			antis = append(antis, r.Pattern)
			continue
		}
		ev, err := s.evaluate(context.Background(), nil, r.Maturity, now)
		if err != nil {
			panic(err)
		}
		views = append(views, learning.PatternView{Pattern: &r.Pattern, Maturity: ev})
		if r.Maturity.ManualReason != "" {
			reasons[r.Pattern.ID] = r.Maturity.ManualReason
		}
	}
	out, _ := json.Marshal(s.lc.BuildGuidance(in, views, reasons, antis, nil, nil, now))
	return string(out)
}

// TestGuidanceIndexSameAsEveryPattern: guidance from the index (the
// patterns that can reach the top, the mentioned and the changed ones)
// is the guidance over every pattern, byte for byte, at the index time and
// later, with patterns changed and added since the index was built; and
// it evaluates a small part of the patterns.
func TestGuidanceIndexSameAsEveryPattern(t *testing.T) {
	// Events after the index time need the store to evaluate before
	// them (time travel), so that world is asked from t0+5d on.
	t.Run("events before the index", func(t *testing.T) { testGuidanceIndex(t, false) })
	t.Run("events after the index", func(t *testing.T) { testGuidanceIndex(t, true) })
}

func testGuidanceIndex(t *testing.T, future bool) {
	const n = 4000
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(1, 2))
	s := &Service{lc: learning.DefaultConfig()}
	recs := indexWorld(n, t0, future, r)
	snap := &cachedProject{version: 1, base: newPatternBaseOf(recs)}
	snap.base.guidance(s, t0.Add(indexLead)) // the index time: t0
	// A later snapshot on the same base: some patterns changed (evidence,
	// state, tags, kind), some added.
	later := &cachedProject{version: 2, base: snap.base, overlay: map[string]*store.PatternRecord{}}
	more := indexWorld(n/10, t0.Add(3*24*time.Hour), false, r)
	for i, nr := range more {
		if i%2 == 0 { // a change of an existing pattern
			old := recs[r.IntN(n)]
			nr.Pattern.ID, nr.Maturity.PatternID = old.Pattern.ID, old.Pattern.ID
			if _, dup := later.overlay[old.Pattern.ID]; dup {
				continue
			}
		} else {
			nr.Pattern.ID = fmt.Sprintf("new-%05d", i)
			nr.Maturity.PatternID = nr.Pattern.ID
			later.added = append(later.added, nr.Pattern.ID)
		}
		later.overlay[nr.Pattern.ID] = nr
	}
	var reqs []PlanInput
	for _, st := range learning.Strategies[:4] {
		reqs = append(reqs, PlanInput{Project: "x", Task: "We will " + st.Label + " and see", Limit: 7})
	}
	reqs = append(reqs, PlanInput{Project: "x", Task: "fix the login page"}, PlanInput{Project: "x", Limit: 1},
		PlanInput{Project: "x", Task: "plan", Limit: 200}, PlanInput{Project: "x", Task: "plan", Limit: 1000})
	day := 24 * time.Hour
	for _, at := range []time.Duration{0, time.Hour, 4 * day, 5*day + time.Hour, 30 * day, 400 * day} {
		now := t0.Add(at)
		for _, sn := range []*cachedProject{snap, later} {
			if (sn == later && at < 3*day) || (future && at < 5*day) {
				continue // the changes are dated after t0+3d, the future events up to t0+5d
			}
			for _, in := range reqs {
				want := fullGuidance(s, allRecords(sn, recs), in, now)
				ps, ok, err := s.guidanceViews(context.Background(), nil, sn, in, now, nil)
				if err != nil || !ok {
					t.Fatalf("guidanceViews at +%v: ok %v, %v", at, ok, err)
				}
				gotG, _ := json.Marshal(s.lc.BuildGuidance(in, ps.views, ps.reasons, ps.antis, nil, nil, now))
				if got := string(gotG); got != want {
					t.Fatalf("at +%v (version %d), task %q limit %d: guidance differs\nindex %s\nevery %s", at, sn.version, in.Task, in.Limit, got, want)
				}
				if in.Task == "fix the login page" && len(ps.views) > n/5 {
					t.Errorf("at +%v: %d of %d patterns evaluated: the index prunes nothing", at, len(ps.views), n)
				}
			}
		}
	}
	// Before the index time the index cannot answer.
	if _, ok, _ := s.guidanceViews(context.Background(), nil, snap, reqs[0], snap.base.g.at.Add(-time.Second), nil); ok {
		t.Fatal("guidanceViews answered before the index time")
	}
}

// allRecords is every record of a snapshot on a base of recs, in the
// store's order (base order, changed records in place, added ones last).
func allRecords(sn *cachedProject, recs []*store.PatternRecord) []*store.PatternRecord {
	all := make([]*store.PatternRecord, len(recs), len(recs)+len(sn.added))
	for i, r := range recs {
		if o, ok := sn.overlay[r.Pattern.ID]; ok {
			r = o
		}
		all[i] = r
	}
	for _, id := range sn.added {
		all = append(all, sn.overlay[id])
	}
	return all
}
