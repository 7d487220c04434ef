package trace

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

// mkTrace builds a closed trace: attempts fail except the last when ok.
func mkTrace(id, skill string, created time.Time, attempts int, ok bool, artifact string, strategies ...string) ExecutionTrace {
	tr := ExecutionTrace{ID: id, SkillID: skill, CreatedAt: created, FinalSuccess: ok, Strategies: strategies}
	for i := 0; i < attempts; i++ {
		a := Attempt{Index: i + 1, Timestamp: created.Add(time.Duration(i) * time.Minute), Context: map[string]string{ContextCommand: "go test ./repo"}}
		if artifact != "" {
			a.ActivatedArtifacts = []string{artifact}
		}
		if ok && i == attempts-1 {
			a.Success = true
		} else {
			a.Error = "repo_test.go:20: dial tcp 127.0.0.1:5432: connect: connection refused"
			a.ErrorType = "go:test_fail"
			a.Signatures = []string{"l:pg-down"}
		}
		if i > 0 {
			a.FixApplied, a.FixSource = "ran `pg_ctl start`", FixSelfCorrection
		}
		tr.Attempts = append(tr.Attempts, a)
	}
	return tr
}

func reviewFixture() ([]ExecutionTrace, []FailurePattern, Period, Period) {
	end := time.Date(2026, 1, 21, 0, 0, 0, 0, time.UTC)
	cur, prev := Periods(end, 24*time.Hour)
	var ts []ExecutionTrace
	// previous day: go test 4/4, tdd 4/4
	for i := 0; i < 4; i++ {
		ts = append(ts, mkTrace("p"+itoa(i), "cmd:go test", prev.Start.Add(time.Duration(i)*time.Hour), 1, true, "scripts/test.sh", "test-first"))
	}
	// current day: go test 1 ok, 2 recovered, 1 gave up; big-bang 0/3
	ts = append(ts,
		mkTrace("c1", "cmd:go test", cur.Start.Add(1*time.Hour), 1, true, "scripts/test.sh", "test-first"),
		mkTrace("c2", "cmd:go test", cur.Start.Add(2*time.Hour), 2, true, "scripts/test.sh", "test-first"),
		mkTrace("c3", "cmd:go test", cur.Start.Add(3*time.Hour), 3, true, "scripts/test.sh", "test-first"),
		mkTrace("c4", "cmd:go test", cur.Start.Add(4*time.Hour), 3, false, "scripts/test.sh", "big-bang"),
		mkTrace("c5", "cmd:npm test", cur.Start.Add(5*time.Hour), 2, false, "", "big-bang"),
		mkTrace("c6", "cmd:npm test", cur.Start.Add(6*time.Hour), 1, false, "", "big-bang"),
	)
	// enough traces for the methodologies to tell
	for i := 0; i < 5; i++ {
		ts = append(ts, mkTrace("m"+itoa(i), "cmd:make build", cur.Start.Add(time.Duration(8+i)*time.Hour), 1, true, "", "test-first"))
	}
	for i := 0; i < 3; i++ {
		ts = append(ts, mkTrace("l"+itoa(i), "cmd:make lint", cur.Start.Add(time.Duration(14+i)*time.Hour), 1, false, "", "big-bang"))
	}
	// outside both periods, and an open trace: ignored
	old := mkTrace("old", "cmd:go test", prev.Start.Add(-time.Hour), 1, false, "")
	open := mkTrace("open", "cmd:go test", cur.Start.Add(7*time.Hour), 1, false, "")
	open.Open = true
	ts = append(ts, old, open)
	p := pattern("pg", 7, []string{"repo"}, "Run `pg_ctl start` first")
	p.Signatures = []string{"l:pg-down"}
	return ts, []FailurePattern{p}, cur, prev
}

func TestReviewPeriod(t *testing.T) {
	t.Parallel()
	ts, ps, cur, prev := reviewFixture()
	r, err := ReviewPeriod(ts, ps, cur, prev, DefaultScheduleConfig())
	if err != nil {
		t.Fatal(err)
	}
	if r.Totals != (Totals{Traces: 14, Succeeded: 8, Recovered: 2, GaveUp: 6, Attempts: 20}) {
		t.Errorf("totals = %+v", r.Totals)
	}
	goTrend := r.Skills[0]
	if goTrend.ID != "cmd:go test" || goTrend.Current.Rate != 0.75 || goTrend.Previous.Rate != 1 || goTrend.Delta != -0.25 || goTrend.Direction != TrendDown {
		t.Errorf("go test trend = %+v", goTrend)
	}
	if goTrend.Weight != float64(3+1)/float64(4+2) || goTrend.Recovered != 2 || goTrend.MeanAttempts != 2.25 {
		t.Errorf("go test weight/recovered/attempts = %v/%d/%v", goTrend.Weight, goTrend.Recovered, goTrend.MeanAttempts)
	}
	if npm := r.Skills[3]; npm.ID != "cmd:npm test" || npm.Direction != TrendInsufficient || npm.Current.Total != 2 {
		t.Errorf("npm trend = %+v", npm)
	}
	if len(r.Artifacts) != 1 || r.Artifacts[0].ID != "scripts/test.sh" || r.Artifacts[0].Current.Total != 9 || r.Artifacts[0].Current.Successes != 3 {
		t.Errorf("artifacts = %+v", r.Artifacts)
	}
	var big, tf Trend
	for _, m := range r.Methodologies {
		switch m.ID {
		case "big-bang":
			big = m
		case "test-first":
			tf = m
		}
	}
	if big.Current.Total != 6 || big.Current.Successes != 0 || tf.Current.Rate != 1 || tf.Current.Total != 8 || tf.Previous.Rate != 1 {
		t.Errorf("methodologies = %+v", r.Methodologies)
	}
	if len(r.Patterns) != 1 || r.Patterns[0].PatternID != "pg" || r.Patterns[0].Count != 3 || r.Patterns[0].Total != 7 {
		t.Errorf("patterns = %+v, want pg counted once per trace (c2, c3, c4)", r.Patterns)
	}
	if len(r.Unlearned) != 2 || r.Unlearned[0].SkillID != "cmd:make lint" || r.Unlearned[0].Count != 3 || r.Unlearned[1].SkillID != "cmd:npm test" || r.Unlearned[1].Count != 2 {
		t.Errorf("unlearned = %+v", r.Unlearned)
	}
	if strings.Join(r.NeedsPerson, ",") != "cmd:go test,cmd:make lint,cmd:npm test" {
		t.Errorf("needs person = %v", r.NeedsPerson)
	}
	kinds := map[string]bool{}
	for _, s := range r.Suggestions {
		kinds[s.Kind] = true
	}
	for _, k := range []string{SuggestSkillDeclining, SuggestNeedsPerson, SuggestFrequentPattern, SuggestUnlearnedFailure, SuggestMethodologyEffective, SuggestMethodologyWeak, SuggestArtifactDeclining} {
		if !kinds[k] {
			t.Errorf("no %s suggestion in %+v", k, r.Suggestions)
		}
	}
}

// Reviewing the same period twice, with the traces in any order, gives the
// same result.
func TestReviewPeriodIdempotent(t *testing.T) {
	t.Parallel()
	ts, ps, cur, prev := reviewFixture()
	first, err := ReviewPeriod(ts, ps, cur, prev, DefaultScheduleConfig())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(first)
	wantMD := RenderMarkdown(first, "Daily review")
	for seed := uint64(0); seed < 20; seed++ {
		shuffled := append([]ExecutionTrace(nil), ts...)
		rand.New(rand.NewPCG(seed, 1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		again, err := ReviewPeriod(shuffled, ps, cur, prev, DefaultScheduleConfig())
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(again)
		if string(got) != string(want) {
			t.Fatalf("order %d changed the review:\n%s\n%s", seed, got, want)
		}
		if RenderMarkdown(again, "Daily review") != wantMD {
			t.Fatal("the report changed")
		}
	}
}

func TestReviewPeriodRejectsBadPeriods(t *testing.T) {
	t.Parallel()
	p := Period{Start: t0, End: t0}
	if _, err := ReviewPeriod(nil, nil, p, p, DefaultScheduleConfig()); !errors.Is(err, ErrInvalidPeriod) {
		t.Errorf("error = %v, want ErrInvalidPeriod", err)
	}
}

func TestRenderMarkdownEscapes(t *testing.T) {
	t.Parallel()
	ts, ps, cur, prev := reviewFixture()
	evil := "<script>alert(1)</script> | [x](javascript:alert(1)) **bold**\n# heading"
	ps[0].Condition = evil
	ps[0].SuggestedFix = "`rm -rf /` | " + evil
	for i := range ts {
		ts[i].SkillID = "cmd:" + strings.ReplaceAll(evil, "\n", " ")
	}
	ps[0].SkillID = ts[0].SkillID
	r, err := ReviewPeriod(ts, ps, cur, prev, DefaultScheduleConfig())
	if err != nil {
		t.Fatal(err)
	}
	md := RenderMarkdown(r, evil)
	for _, bad := range []string{"<script>", "](javascript", "**bold**", "\n# heading"} {
		if strings.Contains(md, bad) {
			t.Errorf("the report contains %q unescaped", bad)
		}
	}
	if regexp.MustCompile("(^|[^\\\\])`rm").MatchString(md) {
		t.Error("the report contains an unescaped backtick")
	}
	if !strings.Contains(md, "&lt;script&gt;") {
		t.Error("the escaped text is missing")
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ") && strings.Count(line, " | ")-strings.Count(line, `\|`) > 8 {
			t.Errorf("a table row has extra cells: %s", line)
		}
	}
	if !strings.Contains(md, "## Most frequent failure patterns") || !strings.Contains(md, "| pg |") {
		t.Errorf("report:\n%s", md)
	}
}
