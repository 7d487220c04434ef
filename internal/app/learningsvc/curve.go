package learningsvc

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// The learning curve of a project: how its success rate evolved as
// outcomes accumulated (a rolling rate over the outcome number, with its
// 95 % Wilson interval, and the cumulative rate), and how the guidance
// changed along the way: when patterns became proven or deprecated, when
// they were inverted into anti-patterns and when an anti-pattern was
// withdrawn because its pattern recovered. The changes are recomputed from
// the stored pattern observations with the current configuration, the
// same way Learned recomputes a past state.

// Curve query bounds and defaults.
const (
	DefaultCurveWindow = 20
	MaxCurveWindow     = 1000
	DefaultCurvePoints = 240
	MaxCurvePoints     = 2000
	// maxCurveOutcomes bounds the outcomes a curve reads (the newest).
	maxCurveOutcomes = 50_000
	// maxCurveChanges bounds the changes a curve lists (the newest).
	maxCurveChanges = 500
)

// CurveQuery asks for a project's learning curve.
type CurveQuery struct {
	Project string `json:"project,omitempty"`
	// Window is how many outcomes each point's rolling rate covers (the
	// point's outcome and the ones before it): 1–1000, default 20.
	Window int `json:"window,omitempty"`
	// Points bounds the evenly spaced points of the curve (2–2000, default
	// 240); the outcomes where the guidance changed are added to them.
	Points int `json:"points,omitempty"`
}

// Kinds of guidance change on a learning curve.
const (
	CurveProven      = "proven"
	CurveDeprecated  = "deprecated"
	CurveAntiPattern = "anti_pattern"
	CurveRecovered   = "recovered"
)

// CurvePoint is the curve at one outcome.
type CurvePoint struct {
	// Outcome is the outcome's number in the project's series (1 for the
	// first outcome that finished), At when its task finished.
	Outcome int       `json:"outcome"`
	At      time.Time `json:"at"`
	// Rolling is the rate of the last Window outcomes up to this one (fewer
	// at the start); Cumulative the rate of every outcome of the curve up
	// to this one. Each carries its 95 % Wilson interval.
	Rolling    RateInterval `json:"rolling"`
	Cumulative RateInterval `json:"cumulative"`
}

// CurveChange is a change of the guidance on the curve.
type CurveChange struct {
	// Outcome is the number of the last outcome that finished at or before
	// the change (0: before the first outcome).
	Outcome int       `json:"outcome"`
	At      time.Time `json:"at"`
	// Kind is proven, deprecated, anti_pattern or recovered.
	Kind      string `json:"kind"`
	PatternID string `json:"pattern_id"`
	Content   string `json:"content"`
	// Manual marks a promotion or deprecation by a person.
	Manual bool `json:"manual,omitempty"`
	// TaskID is the task whose observation made the change.
	TaskID string `json:"bead_id,omitempty"`
	// Detail gives the numbers behind the change (the decayed evidence,
	// the seed's inversion reason, the uses since the inversion).
	Detail string `json:"detail"`
	// Current reports that the pattern is still in the state the change
	// put it in (still proven, still inverted…).
	Current bool `json:"current"`
	// feedback is the id of the observation that made the change.
	feedback string
}

// LearningCurve is a project's learning curve.
type LearningCurve struct {
	Project string `json:"project"`
	Window  int    `json:"window"`
	// Outcomes counts the outcomes of the curve; Skipped the older ones it
	// does not cover (more than 50,000 outcomes: the newest are read).
	Outcomes int `json:"outcomes"`
	Skipped  int `json:"skipped"`
	// Points are evenly spaced over the outcomes (the last one included)
	// plus those where the guidance changed, in outcome order.
	Points []CurvePoint `json:"points"`
	// First and Last are the rates of the first and the last Window
	// outcomes of the curve (zero without outcomes).
	First RateInterval `json:"first"`
	Last  RateInterval `json:"last"`
	// Changes are the guidance changes in time order (the newest 500);
	// ChangesTotal counts them all.
	Changes      []CurveChange `json:"changes"`
	ChangesTotal int           `json:"changes_total"`
}

// LearningCurve computes a project's learning curve.
func (s *Service) LearningCurve(ctx context.Context, q CurveQuery) (*LearningCurve, error) {
	const op = "learning curve"
	project, err := s.env.ResolveProject(op, q.Project)
	if err != nil {
		return nil, err
	}
	if q.Window == 0 {
		q.Window = DefaultCurveWindow
	}
	if q.Window < 1 || q.Window > MaxCurveWindow {
		return nil, app.Invalid(op, "window", "must be between 1 and %d outcomes, got %d", MaxCurveWindow, q.Window)
	}
	if q.Points == 0 {
		q.Points = DefaultCurvePoints
	}
	if q.Points < 2 || q.Points > MaxCurvePoints {
		return nil, app.Invalid(op, "points", "must be between 2 and %d, got %d", MaxCurvePoints, q.Points)
	}
	now := s.env.Now()
	c := &LearningCurve{Project: project, Window: q.Window, Points: []CurvePoint{}, Changes: []CurveChange{}}
	var results []store.OutcomeResult
	var changes []CurveChange
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		if results, err = tx.OutcomeResults(ctx, project, store.OutcomeFilter{Limit: maxCurveOutcomes}); err != nil {
			return err
		}
		if len(results) == maxCurveOutcomes {
			n, err := tx.CountOutcomes(ctx, project, store.OutcomeFilter{})
			if err != nil {
				return err
			}
			c.Skipped = int(n) - len(results)
		}
		changes, err = s.guidanceChanges(ctx, tx, project, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(results, func(a, b store.OutcomeResult) int {
		return cmp.Or(a.Timestamp.Compare(b.Timestamp), a.RecordedAt.Compare(b.RecordedAt), cmp.Compare(a.ID, b.ID))
	})
	c.Outcomes = len(results)
	// The outcome before or at a time: the number of outcomes finished by then.
	number := func(at time.Time) int {
		return c.Skipped + sort.Search(len(results), func(i int) bool { return results[i].Timestamp.After(at) })
	}
	c.ChangesTotal = len(changes)
	if len(changes) > maxCurveChanges {
		changes = changes[len(changes)-maxCurveChanges:]
	}
	// A change made by an outcome's observation (its id is
	// outcomeFeedbackID's) is placed at that outcome (outcomes may share a
	// finish time); any other at the outcomes
	// finished by its time.
	byID := make(map[string]int, len(results))
	for i, r := range results {
		byID[strings.TrimPrefix(r.ID, "out-")] = i
	}
	for i := range changes {
		ch := &changes[i]
		ch.Outcome = number(ch.At)
		if id, ok := strings.CutSuffix(strings.TrimPrefix(ch.feedback, "mf-"), "/"+ch.PatternID); ok {
			if j, ok := byID[id]; ok {
				ch.Outcome = c.Skipped + j + 1
			}
		}
	}
	c.Changes = append(c.Changes, changes...)
	if len(results) == 0 {
		return c, nil
	}
	ok := make([]int, len(results)+1) // ok[i]: successes among the first i outcomes
	for i, r := range results {
		ok[i+1] = ok[i]
		if r.Success {
			ok[i+1]++
		}
	}
	span := func(from, to int) RateInterval { // outcomes from..to (0-based, inclusive)
		return rateOf(results[from].Timestamp, results[to].Timestamp, to-from+1, ok[to+1]-ok[from])
	}
	n := len(results)
	c.First, c.Last = span(0, min(q.Window, n)-1), span(max(0, n-q.Window), n-1)
	at := map[int]bool{}
	for k := range min(q.Points, n) {
		at[k*(n-1)/max(min(q.Points, n)-1, 1)] = true
	}
	at[n-1] = true
	for _, ch := range changes {
		if i := ch.Outcome - c.Skipped - 1; i >= 0 && i < n {
			at[i] = true
		}
	}
	idx := make([]int, 0, len(at))
	for i := range at {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		c.Points = append(c.Points, CurvePoint{Outcome: c.Skipped + i + 1, At: results[i].Timestamp,
			Rolling: span(max(0, i-q.Window+1), i), Cumulative: span(0, i)})
	}
	return c, nil
}

// curveReplay is a pattern's maturity and observations replayed in time
// order.
type curveReplay struct {
	rec        store.PatternRecord
	generation int64
	m          learning.Maturity
	counts     learning.Pattern // success and failure counts of the generation
	inverted   bool
	invertedAt time.Time
	since      learning.Pattern // uses since the inversion
	changes    []CurveChange
}

// guidanceChanges replays every pattern's observations in time order and
// returns the changes of the guidance, oldest first: a pattern becoming
// proven or deprecated by its decayed evidence (the seed's state rule) or
// by a person (the manual override in force now), inverted (the seed's
// inversion rule on its observations since its last reset) and recovered
// (the uses since its inversion no longer meet that rule; only with
// AntiPatternRecovery). A reset of the pattern (a new generation) starts
// it over.
func (s *Service) guidanceChanges(ctx context.Context, tx store.Tx, project string, now time.Time) ([]CurveChange, error) {
	recs, err := tx.PatternsWithMaturity(ctx, project, store.PatternFilter{Kind: learning.KindPattern})
	if err != nil {
		return nil, err
	}
	replays := make(map[string]*curveReplay, len(recs))
	for _, r := range recs {
		replays[r.Pattern.ID] = &curveReplay{rec: r, generation: -1}
	}
	hl := s.lc.Maturity.HalfLifeDays
	err = tx.EachMaturityFeedback(ctx, project, func(f learning.MaturityFeedback) error {
		r := replays[f.PatternID]
		if r == nil || f.Generation < r.generation {
			return nil
		}
		if f.Generation > r.generation { // the first use, or after a reset
			r.restart(f.Generation)
		}
		change := func(kind, detail string) {
			r.changes = append(r.changes, CurveChange{At: f.Timestamp, Kind: kind, PatternID: r.rec.Pattern.ID,
				Content: r.rec.Pattern.Content, TaskID: f.TaskID, Detail: detail, feedback: f.ID})
		}
		t := f.Timestamp
		before := s.lc.Maturity.StateFor(r.m.Helpful.At(t, hl), r.m.Harmful.At(t, hl))
		r.m.Apply(f, hl)
		r.counts.Observe(f, 0)
		if r.inverted {
			// As the engine does, a use of an inverted pattern first checks
			// its recovery, which starts a new evaluation.
			r.since.Observe(f, 0)
			manual := r.rec.Maturity.Manual != "" && r.rec.Maturity.Generation == r.generation
			if s.lc.AntiPatternRecovery && !manual && r.since.Observations() >= int64(s.lc.AntiPattern.MinObservations) &&
				!s.lc.ShouldInvert(r.since) {
				change(CurveRecovered, fmt.Sprintf("%d of %d uses since the inversion on %s succeeded",
					r.since.SuccessCount, r.since.Observations(), r.invertedAt.UTC().Format("2006-01-02")))
				r.restart(r.generation + 1)
				return nil
			}
		}
		helpful, harmful := r.m.Helpful.At(t, hl), r.m.Harmful.At(t, hl)
		after := s.lc.Maturity.StateFor(helpful, harmful)
		if after != before && (after == learning.Proven || after == learning.Deprecated) {
			change(string(after), fmt.Sprintf("decayed helpful %.2f, harmful %.2f (%.0f%% harmful)",
				helpful, harmful, 100*harmful/max(helpful+harmful, 1e-12)))
		}
		if r.inverted {
			return nil
		}
		if s.lc.ShouldInvert(r.counts) {
			r.inverted, r.invertedAt = true, t
			r.since = learning.Pattern{Kind: learning.KindPattern, Generation: r.generation}
			change(CurveAntiPattern, s.lc.InversionReason(r.counts.FailureCount, r.counts.Observations()))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []CurveChange
	for _, rec := range recs {
		r := replays[rec.Pattern.ID]
		m := rec.Maturity
		switch {
		case m.Manual == learning.Proven && m.PromotedAt != nil:
			r.changes = append(r.changes, CurveChange{At: *m.PromotedAt, Kind: CurveProven, Manual: true,
				PatternID: rec.Pattern.ID, Content: rec.Pattern.Content, Detail: "promoted by hand: " + m.ManualReason})
		case m.Manual == learning.Deprecated && m.DeprecatedAt != nil:
			r.changes = append(r.changes, CurveChange{At: *m.DeprecatedAt, Kind: CurveDeprecated, Manual: true,
				PatternID: rec.Pattern.ID, Content: rec.Pattern.Content, Detail: "deprecated by hand: " + m.ManualReason})
		}
		if len(r.changes) == 0 {
			continue
		}
		eval, err := s.evaluate(ctx, tx, m, now)
		if err != nil {
			return nil, err
		}
		// Only the pattern's last change of each kind can still hold.
		last := map[string]int{}
		for i, c := range r.changes {
			last[c.Kind] = i
		}
		for kind, i := range last {
			c := &r.changes[i]
			switch kind {
			case CurveProven, CurveDeprecated:
				c.Current = string(eval.State) == kind
			case CurveAntiPattern:
				c.Current = rec.Pattern.AntiPatternID != ""
			case CurveRecovered:
				c.Current = rec.Pattern.AntiPatternID == ""
			}
		}
		out = append(out, r.changes...)
	}
	slices.SortStableFunc(out, func(a, b CurveChange) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.PatternID, b.PatternID))
	})
	return out, nil
}

// restart begins a generation of the pattern: a new evaluation with no
// evidence, counts or inversion.
func (r *curveReplay) restart(generation int64) {
	r.generation = generation
	r.m = learning.Maturity{Generation: generation}
	r.counts = learning.Pattern{Kind: learning.KindPattern, Generation: generation}
	r.inverted, r.invertedAt, r.since = false, time.Time{}, learning.Pattern{}
}
