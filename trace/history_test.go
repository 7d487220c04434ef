package trace

import (
	"math"
	"testing"
)

func TestContextHashIsOrderFreeAndSelective(t *testing.T) {
	t.Parallel()
	a := ContextHash(map[string]string{"cwd": "/a", "lang": "zh"})
	b := ContextHash(map[string]string{"lang": "zh", "cwd": "/a"})
	if a != b {
		t.Error("key order changed the hash")
	}
	if ContextHash(map[string]string{"cwd": "/a", "lang": "en"}) == a {
		t.Error("a different value gave the same hash")
	}
	if ContextHash(map[string]string{"cwd": "/a", "x": "1"}, "cwd") != ContextHash(map[string]string{"cwd": "/a", "x": "2"}, "cwd") {
		t.Error("keys not selected still changed the hash")
	}
}

func TestWilsonInterval(t *testing.T) {
	t.Parallel()
	r := NewRate(5, 10)
	if math.Abs(r.Low-0.2366) > 1e-4 || math.Abs(r.High-0.7634) > 1e-4 || r.Rate != 0.5 {
		t.Errorf("5/10 = %+v, want [0.2366, 0.7634]", r)
	}
	if r := NewRate(0, 0); r.Low != 0 || r.High != 1 || r.Rate != 0 {
		t.Errorf("0/0 = %+v", r)
	}
	if r := NewRate(3, 3); r.High != 1 || r.Low < 0.43 || r.Low > 0.44 {
		t.Errorf("3/3 = %+v", r)
	}
}

func TestSuccessRateByContext(t *testing.T) {
	t.Parallel()
	zh := ContextHash(map[string]string{"input_lang": "zh"})
	en := ContextHash(map[string]string{"input_lang": "en"})
	var recs []ExecutionRecord
	for i := 0; i < 4; i++ {
		recs = append(recs, ExecutionRecord{Timestamp: at(i), Success: false, Error: "UnicodeDecodeError " + itoa(i), ContextHash: zh})
		recs = append(recs, ExecutionRecord{Timestamp: at(i), Success: true, ContextHash: en})
	}
	recs = append(recs, ExecutionRecord{Timestamp: at(9), Success: true, ContextHash: zh})
	rates := SuccessRateByContext(recs)
	if len(rates) != 2 {
		t.Fatalf("rates = %+v", rates)
	}
	byHash := map[string]ContextRate{}
	for _, r := range rates {
		byHash[r.ContextHash] = r
	}
	if r := byHash[zh]; r.Total != 5 || r.Successes != 1 || r.LastError != "UnicodeDecodeError 3" {
		t.Errorf("zh = %+v", r)
	}
	failing := FailingContexts(recs, 5, 0.2)
	if len(failing) != 1 || failing[0].ContextHash != zh {
		t.Errorf("failing = %+v, want the zh context (1/5 = 0.2 at the bound)", failing)
	}
	if f := FailingContexts(recs, 6, 0.2); len(f) != 0 {
		t.Errorf("below min runs: %+v", f)
	}
	for _, r := range recs {
		if err := r.Validate(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRecordsFromTrace(t *testing.T) {
	t.Parallel()
	tr := mkTrace("t", "cmd:go test", t0, 3, true, "scripts/test.sh")
	recs := RecordsFromTrace(&tr, ContextCommand)
	if len(recs) != 3 || recs[0].Success || !recs[2].Success || recs[0].ArtifactID != "scripts/test.sh" || recs[0].TraceID != "t" {
		t.Errorf("records = %+v", recs)
	}
}
