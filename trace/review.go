package trace

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
)

// ReviewConfig configures the task-end review.
type ReviewConfig struct {
	// ConditionKeys are the context keys a pattern's condition keeps
	// (when every occurrence shares the value). Default ["cwd"].
	ConditionKeys []string `toml:"condition_keys" json:"condition_keys"`
	// NeedsPersonMinAttempts: a chain that failed every attempt marks its
	// skill as needing a person when it had at least this many attempts
	// (default 1: every chain that never passed; the seed's example has 3).
	NeedsPersonMinAttempts int `toml:"needs_person_min_attempts" json:"needs_person_min_attempts"`
	// InitialWeight of a new pattern's warning weight (default 1).
	InitialWeight float64 `toml:"initial_weight" json:"initial_weight"`
}

// DefaultReviewConfig returns the defaults documented on ReviewConfig.
func DefaultReviewConfig() ReviewConfig {
	return ReviewConfig{ConditionKeys: []string{ContextCwd}, NeedsPersonMinAttempts: 1, InitialWeight: 1}
}

// Validate checks the ranges.
func (c ReviewConfig) Validate() error {
	switch {
	case c.NeedsPersonMinAttempts < 1:
		return invalid(ErrInvalidConfig, "review", "needs_person_min_attempts", "is %d, want ≥ 1", c.NeedsPersonMinAttempts)
	case !(c.InitialWeight > 0 && c.InitialWeight <= 10):
		return invalid(ErrInvalidConfig, "review", "initial_weight", "is %v, want (0, 10]", c.InitialWeight)
	}
	return nil
}

// PatternChange is a failure pattern the review created or updated (the
// full new value, to upsert).
type PatternChange struct {
	Pattern FailurePattern `json:"pattern"`
	Created bool           `json:"created"`
	// TraceID is the trace that taught it.
	TraceID string `json:"trace_id"`
}

// SkillVerdict is what one task's traces say about a skill: counts to add
// to the skill's statistics (apply with SkillStats.Apply), and whether a
// person is needed.
type SkillVerdict struct {
	SkillID string `json:"skill_id"`
	// Traces, Succeeded, Recovered (succeeded after failing), GaveUp
	// (failed every attempt) and Attempts counted over the task's closed
	// traces.
	Traces    int `json:"traces"`
	Succeeded int `json:"succeeded"`
	Recovered int `json:"recovered"`
	GaveUp    int `json:"gave_up"`
	Attempts  int `json:"attempts"`
	// NeedsPerson: some chain failed every attempt (seed: 标记需要人工介入).
	NeedsPerson bool     `json:"needs_person"`
	Reason      string   `json:"reason,omitempty"`
	TraceIDs    []string `json:"trace_ids,omitempty"`
}

// SkillStats are a skill's running statistics (seed: Skill.success_rate).
type SkillStats struct {
	SkillID     string  `json:"skill_id"`
	Traces      int     `json:"traces"`
	Succeeded   int     `json:"succeeded"`
	Recovered   int     `json:"recovered"`
	GaveUp      int     `json:"gave_up"`
	Attempts    int     `json:"attempts"`
	SuccessRate float64 `json:"success_rate"`
	NeedsPerson bool    `json:"needs_person"`
	Reason      string  `json:"reason,omitempty"`
}

// Apply adds a verdict's counts and recomputes the success rate (traces
// that succeeded / traces). NeedsPerson stays set until a person clears it.
func (s SkillStats) Apply(v SkillVerdict) SkillStats {
	s.SkillID = v.SkillID
	s.Traces += v.Traces
	s.Succeeded += v.Succeeded
	s.Recovered += v.Recovered
	s.GaveUp += v.GaveUp
	s.Attempts += v.Attempts
	if s.Traces > 0 {
		s.SuccessRate = float64(s.Succeeded) / float64(s.Traces)
	}
	if v.NeedsPerson {
		s.NeedsPerson, s.Reason = true, v.Reason
	}
	return s
}

// Heuristic kinds of the experience system this review proposes.
const (
	HeuristicAvoid  = "avoid"
	HeuristicVerify = "verify"
)

// HeuristicProposal is a transferable heuristic for the experience system
// (kind, trigger, rule, why, evidence).
type HeuristicProposal struct {
	Kind      string   `json:"kind"`
	Trigger   string   `json:"trigger"`
	Rule      string   `json:"rule"`
	Why       string   `json:"why"`
	Evidence  []string `json:"evidence"`
	SkillID   string   `json:"skill_id"`
	PatternID string   `json:"pattern_id,omitempty"`
	// Confidence grows with how often the pattern was seen.
	Confidence float64 `json:"confidence"`
}

// TaskReview is the outcome of the task-end review.
type TaskReview struct {
	Patterns   []PatternChange     `json:"patterns"`
	Skills     []SkillVerdict      `json:"skills"`
	Heuristics []HeuristicProposal `json:"heuristics"`
}

// ReviewTask runs the task-end review (seed: 任务结束复盘) over a task's
// traces. For every trace with final_success && len(attempts) > 1 it
// learns, per distinct error, which fix resolved it: the fix of the first
// later attempt whose error differs or that succeeded. Each such error
// creates or updates a failure pattern of the skill (condition from the
// command family, arguments and shared context; error type; frequency + 1;
// last occurred; suggested fix: the most frequent fix summarised as a
// short imperative). A trace already counted by a pattern (its id is in
// TraceIDs) is not counted again, so re-running the review changes
// nothing. Chains that failed every attempt lower the skill's success rate
// and mark it as needing a person. Open traces are ignored.
//
// patterns are the skills' existing patterns; the result holds only the
// patterns created or changed, in a deterministic order.
func ReviewTask(traces []ExecutionTrace, patterns []FailurePattern, now time.Time, cfg ReviewConfig) (TaskReview, error) {
	if err := cfg.Validate(); err != nil {
		return TaskReview{}, err
	}
	for i := range traces {
		if err := traces[i].Validate(); err != nil {
			return TaskReview{}, err
		}
	}
	for i := range patterns {
		if err := patterns[i].Validate(); err != nil {
			return TaskReview{}, err
		}
	}
	sorted := append([]ExecutionTrace(nil), traces...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if !sorted[i].CreatedAt.Equal(sorted[j].CreatedAt) {
			return sorted[i].CreatedAt.Before(sorted[j].CreatedAt)
		}
		return sorted[i].ID < sorted[j].ID
	})
	work := make([]FailurePattern, len(patterns))
	for i := range patterns {
		work[i] = clonePattern(patterns[i])
	}
	changed := map[string]*PatternChange{}
	var order []string
	verdicts := map[string]*SkillVerdict{}
	var out TaskReview
	for ti := range sorted {
		t := &sorted[ti]
		if t.Open {
			continue
		}
		v := verdicts[t.SkillID]
		if v == nil {
			v = &SkillVerdict{SkillID: t.SkillID}
			verdicts[t.SkillID] = v
		}
		v.Traces++
		v.Attempts += len(t.Attempts)
		switch {
		case t.FinalSuccess:
			v.Succeeded++
			if t.Recovered() {
				v.Recovered++
			}
		default:
			v.GaveUp++
			if len(t.Attempts) >= cfg.NeedsPersonMinAttempts {
				v.NeedsPerson = true
				v.TraceIDs = append(v.TraceIDs, t.ID)
				last := t.Attempts[len(t.Attempts)-1]
				v.Reason = fmt.Sprintf("%s failed all %d attempts; last error: %s", skillLabel(t), len(t.Attempts), firstLine(last.Error, 200))
				out.Heuristics = append(out.Heuristics, gaveUpHeuristic(t))
			}
		}
		if !t.Recovered() {
			continue
		}
		for _, lesson := range lessons(t) {
			p, created := learn(work, t, lesson, now, cfg)
			if p == nil {
				continue // already counted
			}
			if !created {
				for i := range work {
					if work[i].ID == p.ID {
						work[i] = *p
					}
				}
			} else {
				work = append(work, *p)
			}
			if c, ok := changed[p.ID]; ok {
				c.Pattern = clonePattern(*p)
				c.TraceID = t.ID
			} else {
				changed[p.ID] = &PatternChange{Pattern: clonePattern(*p), Created: created, TraceID: t.ID}
				order = append(order, p.ID)
			}
		}
	}
	for _, id := range order {
		out.Patterns = append(out.Patterns, *changed[id])
		if h, ok := verifyHeuristic(changed[id].Pattern); ok {
			out.Heuristics = append(out.Heuristics, h)
		}
	}
	for _, k := range sortedKeys(verdicts) {
		out.Skills = append(out.Skills, *verdicts[k])
	}
	return out, nil
}

// lesson is one error of a recovered chain and the fix that resolved it.
type lesson struct {
	failed []Attempt // the failed attempts with this error
	fixBy  Attempt   // the attempt whose fix resolved it
}

// lessons splits a recovered chain into its distinct errors: attempts k..j-1
// share an error (overlapping signatures, or the same type when there are
// no signatures) and attempt j, which succeeded or failed differently,
// carries the fix that resolved it.
func lessons(t *ExecutionTrace) []lesson {
	var out []lesson
	as := t.Attempts
	for k := 0; k < len(as)-1; {
		if as[k].Success {
			k++
			continue
		}
		j := k + 1
		for j < len(as) && !as[j].Success && sameError(as[k], as[j]) {
			j++
		}
		if j < len(as) {
			out = append(out, lesson{failed: as[k:j], fixBy: as[j]})
		}
		k = j
	}
	return out
}

func sameError(a, b Attempt) bool {
	if len(a.Signatures) > 0 && len(b.Signatures) > 0 {
		for _, s := range a.Signatures {
			if contains(b.Signatures, s) {
				return true
			}
		}
		return false
	}
	return a.ErrorType != "" && a.ErrorType == b.ErrorType
}

// errorIdentity returns the signatures and type of a failed attempt,
// fingerprinting its error when the attempt carries none.
func errorIdentity(a Attempt) (sigs []string, typ, template string) {
	sig := Fingerprint(a.Error, a.Context[ContextCommand])
	sigs = append([]string(nil), a.Signatures...)
	if len(sigs) == 0 {
		sigs = []string{sig.Strict, sig.Loose}
	}
	typ = a.ErrorType
	if typ == "" {
		typ = sig.Type
	}
	return sigs, typ, sig.Message
}

func learn(patterns []FailurePattern, t *ExecutionTrace, l lesson, now time.Time, cfg ReviewConfig) (*FailurePattern, bool) {
	first := l.failed[0]
	sigs, typ, template := errorIdentity(first)
	for _, a := range l.failed[1:] {
		s, _, _ := errorIdentity(a)
		for _, x := range s {
			sigs = appendUnique(sigs, x)
		}
	}
	var p *FailurePattern
	for i := range patterns {
		if patterns[i].SkillID != t.SkillID {
			continue
		}
		for _, s := range sigs {
			if contains(patterns[i].Signatures, s) {
				if p == nil || patterns[i].Frequency > p.Frequency || patterns[i].Frequency == p.Frequency && patterns[i].ID < p.ID {
					p = &patterns[i]
				}
				break
			}
		}
	}
	last := l.failed[len(l.failed)-1].Timestamp
	firstAt := first.Timestamp
	cmd, _ := ParseCommand(first.Context[ContextCommand])
	fix := SuggestFix(l.fixBy.FixActions)
	if fix == "" && l.fixBy.FixApplied != "" {
		fix = Truncate(capitalize(firstSentence(l.fixBy.FixApplied, 200)), 240)
	}
	created := false
	var np FailurePattern
	if p == nil {
		created = true
		key := primarySignature(sigs)
		h := sha256.Sum256([]byte(t.SkillID + "\x00" + key))
		np = FailurePattern{
			ID:              "fp-" + hex.EncodeToString(h[:])[:12],
			SkillID:         t.SkillID,
			ErrorType:       typ,
			Family:          cmp.Or(t.Family, cmd.Family),
			Template:        Truncate(template, MaxExampleLen),
			GroupingVersion: GroupingVersion,
			FirstOccurred:   firstAt,
			Weight:          cfg.InitialWeight,
			Context:         map[string]string{},
		}
		for _, k := range cfg.ConditionKeys {
			if v, ok := first.Context[k]; ok && v != "" {
				np.Context[k] = v
			}
		}
		if len(np.Context) == 0 {
			np.Context = nil
		}
	} else {
		np = clonePattern(*p)
		if contains(np.TraceIDs, t.ID) {
			return nil, false
		}
		// keep only the context values every occurrence shared
		for k, v := range np.Context {
			if first.Context[k] != v {
				delete(np.Context, k)
			}
		}
		if len(np.Context) == 0 {
			np.Context = nil
		}
		if firstAt.Before(np.FirstOccurred) || np.FirstOccurred.IsZero() {
			np.FirstOccurred = firstAt
		}
	}
	// frequency counts occurrences (seed: 发生次数): every failed attempt
	// of the chain with this error, not the chain once
	np.Frequency += len(l.failed)
	if last.After(np.LastOccurred) {
		np.LastOccurred = last
	}
	for _, s := range sigs {
		if len(np.Signatures) < MaxSignatures {
			np.Signatures = appendUnique(np.Signatures, s)
		}
	}
	for _, a := range cmd.Args {
		if len(np.Args) < MaxSignatures {
			np.Args = appendUnique(np.Args, a)
		}
	}
	np.TraceIDs = append(np.TraceIDs, t.ID)
	if len(np.TraceIDs) > MaxPatternTraceIDs {
		np.TraceIDs = np.TraceIDs[len(np.TraceIDs)-MaxPatternTraceIDs:]
	}
	ex := Truncate(cmp.Or(ErrorExcerpt(first.Error, 600), first.Error), MaxExampleLen)
	if ex != "" && !contains(np.ExampleErrors, ex) {
		np.ExampleErrors = append(np.ExampleErrors, ex)
		if len(np.ExampleErrors) > MaxExampleErrors {
			np.ExampleErrors = np.ExampleErrors[len(np.ExampleErrors)-MaxExampleErrors:]
		}
	}
	if fix != "" {
		np.Fixes = tallyFix(np.Fixes, fix, l.fixBy.Timestamp)
	}
	np.SuggestedFix = topFix(np.Fixes)
	np.Condition = condition(np, cmd)
	return &np, created
}

func tallyFix(fixes []FixTally, fix string, at time.Time) []FixTally {
	for i := range fixes {
		if strings.EqualFold(fixes[i].Fix, fix) {
			fixes[i].Count++
			if at.After(fixes[i].Last) {
				fixes[i].Last = at
			}
			return fixes
		}
	}
	fixes = append(fixes, FixTally{Fix: fix, Count: 1, Last: at})
	if len(fixes) > MaxPatternFixes {
		// drop the least used, oldest fix
		sort.SliceStable(fixes, func(i, j int) bool {
			if fixes[i].Count != fixes[j].Count {
				return fixes[i].Count > fixes[j].Count
			}
			return fixes[i].Last.After(fixes[j].Last)
		})
		fixes = fixes[:MaxPatternFixes]
	}
	return fixes
}

// topFix is the most frequent fix, the most recent among equals.
func topFix(fixes []FixTally) string {
	best := -1
	for i, f := range fixes {
		if best < 0 || f.Count > fixes[best].Count || f.Count == fixes[best].Count && f.Last.After(fixes[best].Last) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return fixes[best].Fix
}

// condition describes when the pattern occurs, e.g.
// "running `go test` (repo) in /src/api fails with go:test_fail: testrepo: …".
func condition(p FailurePattern, cmd Command) string {
	var b strings.Builder
	fam := cmp.Or(p.Family, cmd.Family, strings.TrimPrefix(p.SkillID, "cmd:"))
	fmt.Fprintf(&b, "running `%s`", fam)
	if len(p.Args) > 0 {
		args := p.Args
		if len(args) > 3 {
			args = args[:3]
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(args, " "))
	}
	if cwd := p.Context[ContextCwd]; cwd != "" {
		fmt.Fprintf(&b, " in %s", cwd)
	}
	fmt.Fprintf(&b, " fails with %s", p.ErrorType)
	if p.Template != "" {
		fmt.Fprintf(&b, ": %s", Truncate(p.Template, 300))
	}
	return Truncate(b.String(), MaxConditionLen)
}

func skillLabel(t *ExecutionTrace) string {
	if t.Family != "" {
		return "`" + t.Family + "`"
	}
	return t.SkillID
}

// VerifyHeuristic is the heuristic a failure pattern with a fix proposes
// to the experience system (kind verify, or avoid when the fix says not to
// do something); false when the pattern has no fix.
func VerifyHeuristic(p FailurePattern) (HeuristicProposal, bool) { return verifyHeuristic(p) }

func verifyHeuristic(p FailurePattern) (HeuristicProposal, bool) {
	if p.SuggestedFix == "" {
		return HeuristicProposal{}, false
	}
	kind := HeuristicVerify
	if negativeHintRe.MatchString(p.SuggestedFix) {
		kind = HeuristicAvoid
	}
	fam := cmp.Or(p.Family, strings.TrimPrefix(p.SkillID, "cmd:"))
	trigger := fmt.Sprintf("Before running `%s`", fam)
	if cwd := p.Context[ContextCwd]; cwd != "" {
		trigger += " in " + cwd
	}
	trigger += fmt.Sprintf(", or when it fails with %s", p.ErrorType)
	why := fmt.Sprintf("`%s` failed with %s (%d time(s), last %s) and passed after: %s",
		fam, Truncate(cmp.Or(p.Template, p.ErrorType), 200), p.Frequency, p.LastOccurred.UTC().Format("2006-01-02"), p.SuggestedFix)
	ev := append([]string(nil), p.TraceIDs...)
	if len(ev) > 5 {
		ev = ev[len(ev)-5:]
	}
	if len(p.ExampleErrors) > 0 {
		ev = append(ev, firstLine(p.ExampleErrors[len(p.ExampleErrors)-1], 300))
	}
	conf := 0.5 + 0.1*float64(min(p.Frequency, 4))
	return HeuristicProposal{Kind: kind, Trigger: trigger, Rule: p.SuggestedFix, Why: why, Evidence: ev,
		SkillID: p.SkillID, PatternID: p.ID, Confidence: conf}, true
}

func gaveUpHeuristic(t *ExecutionTrace) HeuristicProposal {
	last := t.Attempts[len(t.Attempts)-1]
	typ := last.ErrorType
	if typ == "" {
		typ = Fingerprint(last.Error, last.Context[ContextCommand]).Type
	}
	return HeuristicProposal{
		Kind:       HeuristicAvoid,
		Trigger:    fmt.Sprintf("When %s keeps failing with %s", skillLabel(t), typ),
		Rule:       fmt.Sprintf("Do not retry %s blindly: after %d failed attempts with the same error, stop and ask the user", skillLabel(t), len(t.Attempts)),
		Why:        fmt.Sprintf("%s failed all %d attempts in trace %s; last error: %s", skillLabel(t), len(t.Attempts), t.ID, firstLine(last.Error, 200)),
		Evidence:   []string{t.ID, firstLine(last.Error, 300)},
		SkillID:    t.SkillID,
		Confidence: 0.5,
	}
}

func clonePattern(p FailurePattern) FailurePattern {
	c := p
	if p.Context != nil {
		c.Context = make(map[string]string, len(p.Context))
		for k, v := range p.Context {
			c.Context[k] = v
		}
	}
	c.Args = append([]string(nil), p.Args...)
	c.Signatures = append([]string(nil), p.Signatures...)
	c.ExampleErrors = append([]string(nil), p.ExampleErrors...)
	c.TraceIDs = append([]string(nil), p.TraceIDs...)
	c.Fixes = append([]FixTally(nil), p.Fixes...)
	return c
}

// primarySignature picks the loose hash (stable across normalisation
// versions) among an error's signatures, else the first.
func primarySignature(sigs []string) string {
	for _, s := range sigs {
		if strings.HasPrefix(s, "l:") {
			return s
		}
	}
	if len(sigs) == 0 {
		return ""
	}
	return sigs[0]
}
