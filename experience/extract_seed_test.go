package experience

import "testing"

// TestParseModelReplyDropsInvalidItemsAlone: seed 001 filters a model's
// signals by valid type and maps an unknown source to user; one bad item
// must not cost the whole extraction.
func TestParseModelReplyDropsInvalidItemsAlone(t *testing.T) {
	t.Parallel()
	doc := `{"goal": "g",
	 "feedback_signals": [
	  {"type": "reject", "source": "user", "evidence": "not what I asked", "confidence": 0.9},
	  {"type": "anger", "source": "user", "evidence": "grr", "confidence": 0.9},
	  {"type": "correction", "source": "boss", "evidence": "use config.yaml", "confidence": 0.8},
	  {"type": "success", "evidence": "works now", "confidence": 0.7},
	  {"type": "constraint", "source": "user", "confidence": 0.9},
	  {"type": "preference", "source": "user", "evidence": "pnpm", "confidence": "high"},
	  "not an object"],
	 "transferable_heuristics": [
	  {"kind": "maybe", "trigger": "t", "rule": "r"},
	  {"trigger": "editing pb.go", "rule": "change the proto and regenerate"},
	  {"kind": "verify", "trigger": "deploying", "rule": ""}],
	 "failed_attempts": [{"attempt_label": "no approach"}, {"approach_summary": "edited pb.go by hand"}]}`
	exp, err := ParseExperienceJSON([]byte(doc), "p", "t", ExtractorLLM, extractNow)
	if err != nil {
		t.Fatalf("a model reply with some invalid items failed whole: %v", err)
	}
	if len(exp.Signals) != 3 {
		t.Fatalf("signals %+v, want reject, correction (source user) and success (source user)", exp.Signals)
	}
	if exp.Signals[1].Type != SignalCorrection || exp.Signals[1].Source != SourceUser ||
		exp.Signals[2].Type != SignalSuccess || exp.Signals[2].Source != SourceUser {
		t.Errorf("unknown or missing source not mapped to user: %+v", exp.Signals)
	}
	if len(exp.Heuristics) != 1 || exp.Heuristics[0].Kind != KindAvoid || exp.Heuristics[0].Trigger != "editing pb.go" {
		t.Errorf("heuristics %+v, want the one without kind as avoid", exp.Heuristics)
	}
	if len(exp.FailedAttempts) != 1 || exp.FailedAttempts[0].Approach != "edited pb.go by hand" {
		t.Errorf("failed attempts %+v", exp.FailedAttempts)
	}
	// An agent submission stays strict: the same document is refused with
	// the path of the first problem.
	if _, err := ParseExperienceJSON([]byte(doc), "p", "t", ExtractorAgent, extractNow); err == nil {
		t.Error("agent submission with invalid items accepted")
	}
	// The signals document alone behaves the same.
	sigs, err := ParseSignalsJSON([]byte(`{"feedback_signals": [{"type": "bogus", "source": "user", "evidence": "e", "confidence": 0.9},
	 {"type": "reject", "source": "robot", "evidence": "e", "turnId": 7, "confidence": 0.9}]}`), "p", "t", ExtractorLLM, extractNow)
	if err != nil || len(sigs) != 1 || sigs[0].Source != SourceUser || sigs[0].TurnID != "" {
		t.Errorf("signals %+v %v", sigs, err)
	}
}

// TestParseModelReplyCamelCase: a reply in the seed's own camelCase keys
// keeps its failed attempts, heuristics and signals.
func TestParseModelReplyCamelCase(t *testing.T) {
	t.Parallel()
	doc := `{"goal": "fix the build", "successCriteria": ["green CI"], "workingApproach": "regenerate",
	 "failedAttempts": [{"attemptLabel": "hand edit", "approachSummary": "edited pb.go", "failureReason": "overwritten", "replacedBy": "regenerate"}],
	 "transferableHeuristics": [{"kind": "avoid", "trigger": "editing generated code", "rule": "edit the proto", "why": "overwritten", "evidence": "diff lost"}],
	 "feedbackSignals": [{"type": "correction", "source": "user", "evidence": "edit the proto", "turnId": "turn-3", "confidence": 0.9}]}`
	exp, err := ParseExperienceJSON([]byte(doc), "p", "t", ExtractorLLM, extractNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(exp.FailedAttempts) != 1 || exp.FailedAttempts[0].Label != "hand edit" || exp.FailedAttempts[0].FailureReason != "overwritten" ||
		exp.FailedAttempts[0].ReplacedBy != "regenerate" {
		t.Errorf("failed attempts %+v", exp.FailedAttempts)
	}
	if len(exp.Heuristics) != 1 || exp.Heuristics[0].Rule != "edit the proto" {
		t.Errorf("heuristics %+v", exp.Heuristics)
	}
	if len(exp.Signals) != 1 || exp.Signals[0].TurnID != "turn-3" {
		t.Errorf("signals %+v", exp.Signals)
	}
	if len(exp.SuccessCriteria) != 1 || exp.WorkingApproach != "regenerate" {
		t.Errorf("criteria %v, working approach %q", exp.SuccessCriteria, exp.WorkingApproach)
	}
	// snake_case wins when both are present.
	exp, err = ParseExperienceJSON([]byte(`{"goal": "g", "working_approach": "snake", "workingApproach": "camel"}`), "p", "t", ExtractorLLM, extractNow)
	if err != nil || exp.WorkingApproach != "snake" {
		t.Errorf("working approach %q %v", exp.WorkingApproach, err)
	}
	// An agent submission must use the documented snake_case keys.
	if _, err := ParseExperienceJSON([]byte(doc), "p", "t", ExtractorAgent, extractNow); err == nil {
		t.Error("agent submission with camelCase keys accepted")
	}
}
