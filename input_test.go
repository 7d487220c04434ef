package kaizen_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
)

func parse(t *testing.T, s string) (kaizen.OutcomeInput, error) {
	t.Helper()
	return kaizen.ParseOutcomeInput(strings.NewReader(s))
}

// Bad input is rejected with a typed error naming the field, and nothing is
// stored: not the outcome, not a pattern, not a criterion.
func TestBadOutcomeInputChangesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		long := strings.Repeat("x", 300)
		cases := []struct {
			name, json, field string
		}{
			{"malformed", `{"bead_id": "bd-1",`, ""},
			{"not an object", `[1,2]`, ""},
			{"trailing data", `{"bead_id":"bd-1","duration_ms":1,"success":true} {}`, ""},
			{"unknown field", `{"bead_id":"bd-1","duration_ms":1,"success":true,"sucess":true}`, "sucess"},
			{"empty bead id", `{"bead_id":"","duration_ms":1,"success":true}`, "bead_id"},
			{"blank bead id", `{"bead_id":"  ","duration_ms":1,"success":true}`, "bead_id"},
			{"long bead id", `{"bead_id":"` + long + `","duration_ms":1,"success":true}`, "bead_id"},
			{"control char", `{"bead_id":"bd\u0001","duration_ms":1,"success":true}`, "bead_id"},
			{"negative duration", `{"bead_id":"bd-1","duration_ms":-1,"success":true}`, "duration_ms"},
			{"fractional duration", `{"bead_id":"bd-1","duration_ms":1.5,"success":true}`, "duration_ms"},
			{"huge duration", `{"bead_id":"bd-1","duration_ms":1e300,"success":true}`, "duration_ms"},
			{"year-long duration", `{"bead_id":"bd-1","duration_ms":99999999999,"success":true}`, "duration_ms"},
			{"string duration", `{"bead_id":"bd-1","duration_ms":"NaN","success":true}`, "duration_ms"},
			{"missing duration", `{"bead_id":"bd-1","success":true}`, "duration_ms"},
			{"missing success", `{"bead_id":"bd-1","duration_ms":1}`, "success"},
			{"string success", `{"bead_id":"bd-1","duration_ms":1,"success":"true"}`, "success"},
			{"negative errors", `{"bead_id":"bd-1","duration_ms":1,"success":true,"error_count":-1}`, "error_count"},
			{"huge retries", `{"bead_id":"bd-1","duration_ms":1,"success":true,"retry_count":99999999}`, "retry_count"},
			{"invalid timestamp", `{"bead_id":"bd-1","duration_ms":1,"success":true,"timestamp":"not-a-date"}`, "timestamp"},
			{"future timestamp", `{"bead_id":"bd-1","duration_ms":1,"success":true,"timestamp":"2099-01-01T00:00:00Z"}`, "timestamp"},
			{"ancient timestamp", `{"bead_id":"bd-1","duration_ms":1,"success":true,"timestamp":"1900-01-01T00:00:00Z"}`, "timestamp"},
			{"unknown failure mode", `{"bead_id":"bd-1","duration_ms":1,"success":false,"failure_mode":"gremlins"}`, "failure_mode"},
			{"failure mode on success", `{"bead_id":"bd-1","duration_ms":1,"success":true,"failure_mode":"timeout"}`, "failure_mode"},
			{"empty pattern", `{"bead_id":"bd-1","duration_ms":1,"success":true,"patterns":[""]}`, "patterns"},
			{"multi-line pattern", `{"bead_id":"bd-1","duration_ms":1,"success":true,"patterns":["a\nb"]}`, "patterns"},
			{"unknown pattern id", `{"bead_id":"bd-1","duration_ms":1,"success":true,"patterns":["pattern-nope"]}`, "patterns"},
			{"bad criterion", `{"bead_id":"bd-1","duration_ms":1,"success":true,"criteria":[" x"]}`, "criteria"},
			{"conflicting task ids", `{"bead_id":"a","task_id":"b","duration_ms":1,"success":true}`, "task_id"},
			{"bad project", `{"project":" p","bead_id":"bd-1","duration_ms":1,"success":true}`, "project"},
		}
		for _, c := range cases {
			in, err := parse(t, c.json)
			if err == nil {
				_, err = b.e.RecordOutcome(ctx, in)
			}
			var ke *kaizen.Error
			if !errors.As(err, &ke) {
				t.Errorf("%s: got %v, want a *kaizen.Error", c.name, err)
				continue
			}
			wantKind := kaizen.KindInvalid
			if c.name == "unknown pattern id" {
				wantKind = kaizen.KindNotFound
			}
			if ke.Kind != wantKind || (c.field != "" && ke.Field != c.field) || ke.Message == "" {
				t.Errorf("%s: kind %s field %q message %q, want kind %s field %q", c.name, ke.Kind, ke.Field, ke.Message, wantKind, c.field)
			}
		}
		o, _ := b.e.ListOutcomes(ctx, kaizen.OutcomeQuery{})
		p, _ := b.e.ListPatterns(ctx, kaizen.PatternQuery{})
		cpage, _ := b.e.ListCriteria(ctx, "")
		c := cpage.Items
		if o.Total != 0 || p.Total != 0 || len(c) != 0 {
			t.Errorf("bad input changed state: %d outcomes, %d patterns, %d criteria", o.Total, p.Total, len(c))
		}
	})
}

func TestOversizedInput(t *testing.T) {
	t.Parallel()
	_, err := kaizen.ParseOutcomeInput(strings.NewReader(`{"bead_id":"` + strings.Repeat("x", kaizen.MaxInputBytes) + `"}`))
	if kaizen.KindOf(err) != kaizen.KindInvalid || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("got %v", err)
	}
}

func TestBadErrorAndObserveInput(t *testing.T) {
	b := setup(t, "memory")
	bad := []kaizen.ErrorInput{
		{TaskID: "", Message: "m"},
		{TaskID: "bd-1", Message: ""},
		{TaskID: "bd-1", Message: "m", Type: "fatal"},
		{TaskID: "bd-1", Message: "m", Timestamp: "yesterday"},
		{TaskID: "bd-1", Message: "m", ToolName: "two\nlines"},
	}
	for i, in := range bad {
		if _, err := b.e.RecordError(ctx, in); kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("error input %d: %v", i, err)
		}
	}
	for i, in := range []kaizen.ObserveInput{{Pattern: "x"}, {Pattern: "", Success: ptr(true)}, {Pattern: "x", Success: ptr(true), Tags: []string{""}}} {
		if _, err := b.e.ObservePattern(ctx, in); kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("observe input %d: %v", i, err)
		}
	}
	l, _ := b.e.ListErrors(ctx, kaizen.ErrorQuery{})
	p, _ := b.e.ListPatterns(ctx, kaizen.PatternQuery{})
	if l.Total != 0 || p.Total != 0 {
		t.Errorf("state changed: %d errors %d patterns", l.Total, p.Total)
	}
}

// FuzzParseOutcomeInput: any input either parses and then records or is
// rejected with a typed validation error; never a panic, never a partial
// write (the outcome count moves by exactly one on success, by none when
// the same values are recorded again for the task).
func FuzzParseOutcomeInput(f *testing.F) {
	for _, s := range []string{
		`{"bead_id":"bd-1","duration_ms":180000,"error_count":0,"retry_count":0,"success":true,"files_touched":["a.ts"],"strategy":"file-based"}`,
		`{"bead_id":"bd-2","duration_ms":1,"success":false,"failure_details":"timeout","patterns":["Split by feature"],"criteria":["no_bugs"]}`,
		`{"task_id":"t","duration_ms":0,"success":true,"timestamp":"2025-01-01T00:00:00Z","description":"按文件类型拆分"}`,
		`{"bead_id":"x","duration_ms":-5,"success":true}`, `{`, `null`, `{"bead_id":1}`, "",
	} {
		f.Add(s)
	}
	cfg := kaizen.DefaultConfig()
	cfg.DB, cfg.Project = "memory", "fuzz"
	cfg.Now = testkit.NewClock(start).Now
	e, err := kaizen.Open(ctx, cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { e.Close() })
	f.Fuzz(func(t *testing.T, s string) {
		in, err := kaizen.ParseOutcomeInput(strings.NewReader(s))
		if err != nil {
			if k := kaizen.KindOf(err); k != kaizen.KindInvalid {
				t.Fatalf("parse error of kind %s: %v", k, err)
			}
			return
		}
		in.Project = "fuzz"
		before, err := e.ListOutcomes(ctx, kaizen.OutcomeQuery{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.RecordOutcome(ctx, in)
		after, _ := e.ListOutcomes(ctx, kaizen.OutcomeQuery{})
		// A task holds one outcome: recording the same values for a task
		// again is a no-op (Unchanged) and leaves the count where it was.
		want := before.Total + 1
		if err == nil && res.Unchanged {
			want = before.Total
		}
		switch {
		case err == nil && after.Total != want:
			t.Fatalf("recorded (unchanged %v) but count %d → %d", res.Unchanged, before.Total, after.Total)
		case err != nil && after.Total != before.Total:
			t.Fatalf("rejected (%v) but count %d → %d", err, before.Total, after.Total)
		case err != nil && kaizen.KindOf(err) == kaizen.KindInternal:
			t.Fatalf("internal error on user input: %v", err)
		}
	})
}
