package kaizen_test

import (
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// scriptedWeek records a week of outcomes in a project: two successes a
// day splitting by feature (it becomes proven), a failure every other day
// splitting by file type (it is inverted on the third), and, before the
// week, a pattern already proven. It leaves the clock at the week's end.
func scriptedWeek(t *testing.T, b *bundle, project string) {
	t.Helper()
	old := start.Add(-60 * 24 * time.Hour)
	for i := range 8 {
		b.clock.Set(old.Add(time.Duration(i) * time.Hour))
		in := outcome(sprintf("old-%d", i), true, "Review before merge")
		in.Project = project
		if _, err := b.e.RecordOutcome(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	for day := range 7 {
		for n := range 2 {
			b.clock.Set(start.Add(time.Duration(day)*24*time.Hour + time.Duration(n+1)*time.Hour))
			in := outcome(sprintf("feature-%d-%d", day, n), true, "Split by feature")
			in.Project = project
			if _, err := b.e.RecordOutcome(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
		if day%2 == 1 {
			b.clock.Set(start.Add(time.Duration(day)*24*time.Hour + 5*time.Hour))
			in := outcome(sprintf("filetype-%d", day), false, "Split by file type")
			in.Project = project
			if _, err := b.e.RecordOutcome(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
	}
	b.clock.Set(start.Add(7 * 24 * time.Hour))
}

// TestLearnedAfterAWeek: the digest of the week names the pattern that
// became proven and the anti-pattern that appeared, with the outcomes
// behind them, and not the pattern proven before the week.
func TestLearnedAfterAWeek(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		scriptedWeek(t, b, "proj")
		submit(t, b, "feature-6-1", lessonJSON(t, generatedLesson))
		l, err := b.e.Learned(ctx, kaizen.LearnedQuery{Days: 7})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.NewProven) != 1 || l.NewProven[0].Content != "Split by feature" {
			t.Fatalf("new proven: %+v", l.NewProven)
		}
		p := l.NewProven[0]
		if p.From != learning.Candidate || p.To != learning.Proven || p.EvidenceTotal != 14 || len(p.Evidence) != 10 ||
			p.Evidence[0].TaskID != "feature-6-1" || !p.Evidence[0].Success {
			t.Errorf("new proven pattern: %+v", p)
		}
		if len(l.NewAntiPatterns) != 1 || l.NewAntiPatterns[0].FailureTotal != 3 || l.NewAntiPatterns[0].Failures[0].TaskID != "filetype-5" {
			t.Fatalf("new anti-patterns: %+v", l.NewAntiPatterns)
		}
		if len(l.HeuristicsCreated) != 1 || l.HeuristicsCreated[0].SourceTaskID != "feature-6-1" {
			t.Errorf("heuristics created: %+v", l.HeuristicsCreated)
		}
		cur := l.Trend.Current
		if cur.Total != 17 || cur.Succeeded != 14 || !(cur.Low < cur.Rate && cur.Rate < cur.High) || len(l.Trend.Buckets) != 7 {
			t.Errorf("trend: %+v", l.Trend)
		}
		if l.Outcomes != 17 || l.Empty() {
			t.Errorf("outcomes %d, empty %v", l.Outcomes, l.Empty())
		}
		// A day later than the window of what happened, nothing is new.
		b.clock.Set(start.Add(30 * 24 * time.Hour))
		later, err := b.e.Learned(ctx, kaizen.LearnedQuery{Days: 7})
		if err != nil || !later.Empty() {
			t.Errorf("a later week: %+v %v", later, err)
		}
		if _, err := b.e.Learned(ctx, kaizen.LearnedQuery{Days: 7, Since: "2025-01-01T00:00:00Z"}); kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("since and days together: %v", err)
		}
		if _, err := b.e.Learned(ctx, kaizen.LearnedQuery{Since: "not a time"}); kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("a bad since: %v", err)
		}
	})
}

// TestProjectSummaries lists every project with its last activity.
func TestProjectSummaries(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		in := outcome("a-1", true)
		in.Project = "alpha"
		if _, err := b.e.RecordOutcome(ctx, in); err != nil {
			t.Fatal(err)
		}
		b.clock.Set(start.Add(time.Hour))
		if _, err := b.e.Capture(ctx, kaizen.CaptureInput{Project: "beta", TaskID: "b-1",
			Turns: []kaizen.TurnInput{{Role: "user", Content: "remember the deploy checklist"}}}); err != nil {
			t.Fatal(err)
		}
		got, err := b.e.ProjectSummaries(ctx, kaizen.ProjectQuery{Counts: true})
		if err != nil || len(got) != 2 {
			t.Fatalf("summaries: %+v %v", got, err)
		}
		if got[0].Project != "alpha" || got[0].Outcomes != 1 || got[0].Patterns != 0 || !got[0].LastActivity.Equal(start) {
			t.Errorf("alpha: %+v", got[0])
		}
		if got[1].Project != "beta" || got[1].Turns != 1 || !got[1].LastActivity.Equal(start.Add(time.Hour)) {
			t.Errorf("beta: %+v", got[1])
		}
		light, err := b.e.ProjectSummaries(ctx, kaizen.ProjectQuery{})
		if err != nil || light[1].Turns != 0 || !light[1].LastActivity.Equal(got[1].LastActivity) {
			t.Errorf("without counts: %+v %v", light, err)
		}
	})
}
