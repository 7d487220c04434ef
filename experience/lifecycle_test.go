package experience

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

var (
	lifecycleT0  = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	lifecycleNow = lifecycleT0.Add(48 * time.Hour)
)

func lifecycleTestConfig() Lifecycle { return DefaultConfig().Lifecycle }

func lifecycleTestHeuristic(status HeuristicStatus, support, evidence int64) Heuristic {
	return Heuristic{ID: "heur-1", Project: "p", Kind: KindAvoid, Trigger: "editing generated files",
		Rule: "regenerate instead", Status: status, SupportTasks: support, EvidenceCount: evidence,
		CreatedAt: lifecycleT0, UpdatedAt: lifecycleT0}
}

func TestEvaluatePromotionBoundaries(t *testing.T) {
	t.Parallel()
	l := lifecycleTestConfig()
	for _, tc := range []struct {
		status            HeuristicStatus
		support, evidence int64
		want              HeuristicStatus // "" = no transition
	}{
		{StatusCandidate, 1, 1, ""},
		{StatusCandidate, 1, 3, ""},
		{StatusCandidate, 2, 2, ""},
		{StatusCandidate, 2, 3, StatusActive},
		{StatusCandidate, 5, 9, StatusActive}, // one step per call
		{StatusActive, 2, 3, ""},
		{StatusActive, 3, 3, ""},
		{StatusActive, 2, 4, ""},
		{StatusActive, 3, 4, StatusRefined},
		{StatusRefined, 9, 9, ""},
		{StatusStale, 9, 9, ""},
		{StatusArchived, 9, 9, ""},
	} {
		h := lifecycleTestHeuristic(tc.status, tc.support, tc.evidence)
		got, tr := l.Evaluate(h, lifecycleNow)
		if tc.want == "" {
			if tr != nil || got.Status != tc.status || got.UpdatedAt != lifecycleT0 || got.LastValidatedAt != nil {
				t.Errorf("%s %d/%d: want no change, got %v %+v", tc.status, tc.support, tc.evidence, got.Status, tr)
			}
			continue
		}
		if tr == nil || tr.From != tc.status || tr.To != tc.want || got.Status != tc.want {
			t.Fatalf("%s %d/%d: got %v %+v, want → %s", tc.status, tc.support, tc.evidence, got.Status, tr, tc.want)
		}
		if got.StatusReason != tr.Reason || got.UpdatedAt != lifecycleNow ||
			got.LastValidatedAt == nil || !got.LastValidatedAt.Equal(lifecycleNow) {
			t.Errorf("%s → %s: reason %q/%q, updated %v, validated %v", tc.status, tc.want, got.StatusReason, tr.Reason, got.UpdatedAt, got.LastValidatedAt)
		}
	}
	_, tr := l.Evaluate(lifecycleTestHeuristic(StatusCandidate, 2, 3), lifecycleNow)
	if want := "promoted: supported by 2 tasks (≥ 2) with 3 evidence records (≥ 3)"; tr.Reason != want {
		t.Errorf("reason %q, want %q", tr.Reason, want)
	}
	_, tr = l.Evaluate(lifecycleTestHeuristic(StatusActive, 3, 4), lifecycleNow)
	if want := "refined: confirmed again after activation, supported by 3 tasks (> 2) with 4 evidence records (> 3)"; tr.Reason != want {
		t.Errorf("reason %q, want %q", tr.Reason, want)
	}
}

func TestEvaluateZeroThresholdsActAsOne(t *testing.T) {
	t.Parallel()
	var l Lifecycle // unvalidated zero config
	if _, tr := l.Evaluate(lifecycleTestHeuristic(StatusCandidate, 0, 0), lifecycleNow); tr != nil {
		t.Errorf("a heuristic with no support was promoted: %+v", tr)
	}
	if _, tr := l.Evaluate(lifecycleTestHeuristic(StatusCandidate, 1, 1), lifecycleNow); tr == nil || tr.To != StatusActive {
		t.Errorf("1/1 with zero thresholds: %+v, want active", tr)
	}
}

func TestAdoptedBySkill(t *testing.T) {
	t.Parallel()
	l := lifecycleTestConfig()
	got, tr := l.AdoptedBySkill(lifecycleTestHeuristic(StatusCandidate, 1, 1), "deploy-staging", lifecycleNow)
	if tr == nil || *tr != (Transition{StatusCandidate, StatusActive, "promoted: adopted by skill deploy-staging"}) {
		t.Fatalf("transition %+v", tr)
	}
	if got.Status != StatusActive || got.LastValidatedAt == nil || !got.LastValidatedAt.Equal(lifecycleNow) || got.UpdatedAt != lifecycleNow {
		t.Errorf("heuristic %+v", got)
	}
	_, tr = l.AdoptedBySkill(lifecycleTestHeuristic(StatusCandidate, 1, 1), " \n", lifecycleNow)
	if tr == nil || tr.Reason != "promoted: adopted by the skill upgrade flow" {
		t.Errorf("no skill name: %+v", tr)
	}
	_, tr = l.AdoptedBySkill(lifecycleTestHeuristic(StatusCandidate, 1, 1), "a\nb", lifecycleNow)
	if tr == nil || tr.Reason != "promoted: adopted by skill a b" {
		t.Errorf("multi-line skill name: %+v", tr)
	}
	for _, s := range []HeuristicStatus{StatusActive, StatusRefined, StatusStale, StatusArchived} {
		h := lifecycleTestHeuristic(s, 1, 1)
		if got, tr := l.AdoptedBySkill(h, "x", lifecycleNow); tr != nil || got != h {
			t.Errorf("%s: adoption changed it: %+v", s, tr)
		}
	}
}

// verdictLog applies verdicts to one heuristic, keeping its history as
// the store would.
type verdictLog struct {
	l    Lifecycle
	hist []HeuristicFeedback
}

func (v *verdictLog) apply(h Heuristic, verdict Verdict, recall string, now time.Time) (Heuristic, *Transition) {
	fb := HeuristicFeedback{Verdict: verdict, RecallID: recall, CreatedAt: now}
	h, tr := v.l.ApplyVerdict(h, fb, v.hist, now)
	v.hist = append(v.hist, fb)
	return h, tr
}

func TestApplyVerdict(t *testing.T) {
	t.Parallel()
	l := lifecycleTestConfig()
	v := &verdictLog{l: l}
	h := lifecycleTestHeuristic(StatusActive, 2, 3)
	var tr *Transition
	h, tr = v.apply(h, VerdictMisleading, "recall-1", lifecycleNow)
	h, tr2 := v.apply(h, VerdictMisleading, "recall-2", lifecycleNow)
	if tr != nil || tr2 != nil || h.MisleadingStreak != 2 || h.MisleadingCount != 2 || h.Status != StatusActive {
		t.Fatalf("after two misleading: %+v", h)
	}
	// A helpful verdict breaks the streak.
	h, tr = v.apply(h, VerdictHelpful, "recall-3", lifecycleNow)
	if tr != nil || h.MisleadingStreak != 0 || h.HelpfulCount != 1 || h.MisleadingCount != 2 ||
		h.LastValidatedAt == nil || !h.LastValidatedAt.Equal(lifecycleNow) {
		t.Fatalf("after helpful: %+v", h)
	}
	for i := 1; i <= 2; i++ {
		if h, tr = v.apply(h, VerdictMisleading, fmt.Sprintf("recall-%d", 3+i), lifecycleNow); tr != nil {
			t.Fatalf("stale after %d misleading recalls", i)
		}
	}
	later := lifecycleNow.Add(time.Hour)
	h, tr = v.apply(h, VerdictMisleading, "recall-6", later)
	want := Transition{StatusActive, StatusStale, "demoted: misleading on 3 consecutive recalls (limit 3)"}
	if tr == nil || *tr != want {
		t.Fatalf("third misleading: %+v, want %+v", tr, want)
	}
	if h.Status != StatusStale || h.StatusReason != want.Reason || h.MisleadingCount != 5 || h.MisleadingStreak != 3 || h.UpdatedAt != later {
		t.Errorf("stale heuristic %+v", h)
	}
	// Verdicts on stale and archived heuristics count but never move them.
	for _, s := range []HeuristicStatus{StatusStale, StatusArchived} {
		w := &verdictLog{l: l}
		g := lifecycleTestHeuristic(s, 9, 9)
		for i := range 4 {
			g, tr = w.apply(g, VerdictMisleading, fmt.Sprint("r", i), lifecycleNow)
		}
		if tr != nil || g.Status != s || g.MisleadingStreak != 4 || g.MisleadingCount != 4 {
			t.Errorf("%s misleading: %+v %+v", s, g, tr)
		}
		g, tr = w.apply(g, VerdictHelpful, "", lifecycleNow)
		if tr != nil || g.Status != s || g.MisleadingStreak != 0 || g.HelpfulCount != 1 {
			t.Errorf("%s helpful: %+v %+v", s, g, tr)
		}
	}
	// Candidates and refined heuristics go stale too.
	for _, s := range []HeuristicStatus{StatusCandidate, StatusRefined} {
		w := &verdictLog{l: l}
		g := lifecycleTestHeuristic(s, 1, 1)
		g, _ = w.apply(g, VerdictMisleading, "a", lifecycleNow)
		g, _ = w.apply(g, VerdictMisleading, "b", lifecycleNow)
		if _, tr := w.apply(g, VerdictMisleading, "c", lifecycleNow); tr == nil || tr.From != s || tr.To != StatusStale {
			t.Errorf("%s: %+v, want stale", s, tr)
		}
	}
	// An unknown verdict changes nothing.
	g := lifecycleTestHeuristic(StatusActive, 1, 1)
	if got, tr := l.ApplyVerdict(g, HeuristicFeedback{Verdict: "meh", RecallID: "r"}, nil, lifecycleNow); tr != nil || got != g {
		t.Errorf("unknown verdict changed %+v", got)
	}
}

// TestDemotionCountsRecalls: seed 001 demotes a lesson judged misleading
// on several consecutive recalls — not on several verdicts.
func TestDemotionCountsRecalls(t *testing.T) {
	t.Parallel()
	l := lifecycleTestConfig()
	// Many misleading verdicts on one recall count once.
	v := &verdictLog{l: l}
	h := lifecycleTestHeuristic(StatusActive, 2, 3)
	var tr *Transition
	for range 5 {
		if h, tr = v.apply(h, VerdictMisleading, "recall-1", lifecycleNow); tr != nil {
			t.Fatalf("demoted by verdicts on one recall: %+v", tr)
		}
	}
	if h.MisleadingStreak != 1 || h.MisleadingCount != 5 || h.Status != StatusActive {
		t.Fatalf("five verdicts on one recall: %+v", h)
	}
	// A lesson never recalled (verdicts without a recall) is never demoted.
	w := &verdictLog{l: l}
	g := lifecycleTestHeuristic(StatusActive, 2, 3)
	for range 10 {
		if g, tr = w.apply(g, VerdictMisleading, "", lifecycleNow); tr != nil {
			t.Fatalf("demoted without a recall: %+v", tr)
		}
	}
	if g.MisleadingStreak != 0 || g.MisleadingCount != 10 {
		t.Fatalf("verdicts without a recall: %+v", g)
	}
	// Three distinct recalls demote, interleaved repeats or not.
	h, _ = v.apply(h, VerdictMisleading, "recall-2", lifecycleNow)
	h, _ = v.apply(h, VerdictMisleading, "recall-1", lifecycleNow)
	if h.MisleadingStreak != 2 || h.Status != StatusActive {
		t.Fatalf("two recalls: %+v", h)
	}
	if _, tr = v.apply(h, VerdictMisleading, "recall-3", lifecycleNow); tr == nil || tr.To != StatusStale {
		t.Fatalf("third recall: %+v", tr)
	}
	hist := []HeuristicFeedback{{Verdict: VerdictMisleading, RecallID: "a"}, {Verdict: VerdictHelpful, RecallID: "b"},
		{Verdict: VerdictMisleading, RecallID: "a"}, {Verdict: VerdictMisleading}, {Verdict: VerdictMisleading, RecallID: "c"}}
	if got := MisleadingRecallStreak(hist); got != 2 {
		t.Errorf("streak %d, want 2 (a and c after the helpful verdict)", got)
	}
}

func TestDemotions(t *testing.T) {
	t.Parallel()
	for _, from := range []HeuristicStatus{StatusCandidate, StatusActive, StatusRefined, StatusStale} {
		h := lifecycleTestHeuristic(from, 2, 3)
		got, tr, err := Supersede(h, " heur-2 ", lifecycleNow)
		if err != nil || tr != (Transition{from, StatusStale, "superseded by heur-2"}) ||
			got.Status != StatusStale || got.SupersededBy != "heur-2" || got.StatusReason != tr.Reason || got.UpdatedAt != lifecycleNow {
			t.Errorf("supersede %s: %+v %+v %v", from, got, tr, err)
		}
		got, tr, err = MarkOutdated(h, " go 1.21\nremoved it ", lifecycleNow)
		if err != nil || tr != (Transition{from, StatusStale, "outdated: go 1.21 removed it"}) || got.Status != StatusStale {
			t.Errorf("outdated %s: %+v %+v %v", from, got, tr, err)
		}
		got, tr, err = Archive(h, "manual cleanup", lifecycleNow)
		if err != nil || tr != (Transition{from, StatusArchived, "archived: manual cleanup"}) || got.Status != StatusArchived {
			t.Errorf("archive %s: %+v %+v %v", from, got, tr, err)
		}
	}
}

func TestTransitionErrors(t *testing.T) {
	t.Parallel()
	live := lifecycleTestHeuristic(StatusActive, 2, 3)
	archived := lifecycleTestHeuristic(StatusArchived, 2, 3)
	odd := lifecycleTestHeuristic("weird", 2, 3)
	for _, tc := range []struct {
		name string
		do   func() (Heuristic, Transition, error)
		in   Heuristic
		to   HeuristicStatus
		says string
	}{
		{"supersede by nobody", func() (Heuristic, Transition, error) { return Supersede(live, " ", lifecycleNow) }, live, StatusStale, "empty"},
		{"supersede by itself", func() (Heuristic, Transition, error) { return Supersede(live, "heur-1", lifecycleNow) }, live, StatusStale, "itself"},
		{"supersede archived", func() (Heuristic, Transition, error) { return Supersede(archived, "heur-2", lifecycleNow) }, archived, StatusStale, "archived"},
		{"outdated without reason", func() (Heuristic, Transition, error) { return MarkOutdated(live, "\t", lifecycleNow) }, live, StatusStale, "reason is required"},
		{"outdated archived", func() (Heuristic, Transition, error) { return MarkOutdated(archived, "x", lifecycleNow) }, archived, StatusStale, "archived"},
		{"archive without reason", func() (Heuristic, Transition, error) { return Archive(live, "", lifecycleNow) }, live, StatusArchived, "reason is required"},
		{"archive archived", func() (Heuristic, Transition, error) { return Archive(archived, "again", lifecycleNow) }, archived, StatusArchived, "archived"},
		{"archive unknown status", func() (Heuristic, Transition, error) { return Archive(odd, "x", lifecycleNow) }, odd, StatusArchived, "unknown status"},
		{"restore active", func() (Heuristic, Transition, error) { return Restore(live, lifecycleNow, lifecycleTestConfig()) }, live, StatusActive, "only stale or archived"},
	} {
		got, tr, err := tc.do()
		var te *TransitionError
		if !errors.As(err, &te) {
			t.Errorf("%s: error %v, want *TransitionError", tc.name, err)
			continue
		}
		if te.ID != "heur-1" || te.From != tc.in.Status || te.To != tc.to || !strings.Contains(te.Reason, tc.says) {
			t.Errorf("%s: %+v", tc.name, te)
		}
		if !strings.Contains(err.Error(), "heur-1") || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: message %q", tc.name, err)
		}
		if got != tc.in || tr != (Transition{}) {
			t.Errorf("%s: a refused transition changed the heuristic or returned %+v", tc.name, tr)
		}
	}
	if msg := (&TransitionError{From: StatusActive, To: StatusStale, Reason: "x"}).Error(); msg !=
		"experience: heuristic (no id): cannot change status from active to stale: x" {
		t.Errorf("message %q", msg)
	}
}

func TestRestore(t *testing.T) {
	t.Parallel()
	l := lifecycleTestConfig()
	for _, tc := range []struct {
		from              HeuristicStatus
		support, evidence int64
		to                HeuristicStatus
		reason            string
	}{
		{StatusStale, 2, 3, StatusActive, "restored: 2 supporting tasks, 3 evidence records (meets the promotion rule)"},
		{StatusArchived, 5, 9, StatusActive, "restored: 5 supporting tasks, 9 evidence records (meets the promotion rule)"},
		{StatusStale, 2, 2, StatusCandidate, "restored: 2 supporting tasks, 2 evidence records"},
		{StatusArchived, 1, 3, StatusCandidate, "restored: 1 supporting tasks, 3 evidence records"},
	} {
		h := lifecycleTestHeuristic(tc.from, tc.support, tc.evidence)
		h.MisleadingStreak, h.MisleadingCount, h.SupersededBy = 3, 4, "heur-2"
		got, tr, err := Restore(h, lifecycleNow, l)
		if err != nil || tr != (Transition{tc.from, tc.to, tc.reason}) {
			t.Errorf("%s %d/%d: %+v %v", tc.from, tc.support, tc.evidence, tr, err)
			continue
		}
		if got.Status != tc.to || got.MisleadingStreak != 0 || got.MisleadingCount != 4 || got.SupersededBy != "" ||
			got.StatusReason != tc.reason || got.UpdatedAt != lifecycleNow || got.LastValidatedAt != nil {
			t.Errorf("%s: restored %+v", tc.from, got)
		}
	}
}

func TestRecallable(t *testing.T) {
	t.Parallel()
	want := map[HeuristicStatus]bool{StatusCandidate: true, StatusActive: true, StatusRefined: true}
	for _, s := range append(HeuristicStatuses, "", "bogus") {
		if got := Recallable(s); got != want[s] {
			t.Errorf("Recallable(%q) = %v", s, got)
		}
	}
}

// TestLifecycleWalk follows one heuristic through every state.
func TestLifecycleWalk(t *testing.T) {
	t.Parallel()
	l := lifecycleTestConfig()
	h := lifecycleTestHeuristic(StatusCandidate, 1, 1)
	var seen []HeuristicStatus
	step := func(g Heuristic, tr *Transition) Heuristic {
		t.Helper()
		if tr == nil {
			t.Fatalf("no transition from %s", g.Status)
		}
		seen = append(seen, tr.To)
		return g
	}
	h.SupportTasks, h.EvidenceCount = 2, 3
	h = step(l.Evaluate(h, lifecycleNow))
	h.SupportTasks, h.EvidenceCount = 3, 4
	h = step(l.Evaluate(h, lifecycleNow))
	v := &verdictLog{l: l}
	for i := range 3 {
		var tr *Transition
		h, tr = v.apply(h, VerdictMisleading, fmt.Sprint("recall-", i), lifecycleNow)
		if tr != nil {
			seen = append(seen, tr.To)
		}
	}
	h, _, err := Archive(h, "retired", lifecycleNow)
	if err != nil {
		t.Fatal(err)
	}
	seen = append(seen, h.Status)
	h, _, err = Restore(h, lifecycleNow, l)
	if err != nil {
		t.Fatal(err)
	}
	seen = append(seen, h.Status)
	want := []HeuristicStatus{StatusActive, StatusRefined, StatusStale, StatusArchived, StatusActive}
	if strings.Join(lifecycleStatusStrings(seen), ",") != strings.Join(lifecycleStatusStrings(want), ",") {
		t.Errorf("walk %v, want %v", seen, want)
	}
}

func lifecycleStatusStrings(s []HeuristicStatus) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = string(x)
	}
	return out
}
