package team

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestDecodePayloads(t *testing.T) {
	t.Parallel()
	good := map[MessageType]string{
		MsgReviewResult:    `{"verdict":"BLOCK","findings":{"critical":[{"file":"a.go","line":3,"description":"nil deref","suggestion":"check"}]},"iteration":2,"delta":"+3 fixed, -1 new issue"}`,
		MsgVote:            `{"proposalId":"P1","vote":"REJECT","rationale":"risky","conditions":["compat layer"],"confidence":0.85,"block":true}`,
		MsgEscalate:        `{"issue":"x","from_level":0,"to_level":1,"attempts_at_current":2,"diagnosis_chain":[{"level":0,"agent":"executor","attempts":2,"diagnosis":"types","tried":["a","b"]}]}`,
		MsgSwarmDiagnosis:  `{"perspective":"arch","root_cause":"cycle","confidence":0.7,"fix_suggestion":"split module a/b.go"}`,
		MsgConsultRequest:  `{"topic":"security","question":"hash?","urgency":"blocking"}`,
		MsgConsultResponse: `{"recommendation":"bcrypt","rationale":"salt","confidence":0.95,"references":["OWASP"],"caveats":["100ms"],"alternative":"argon2id"}`,
		MsgSyncCheckpoint:  `{"sync_id":"SYNC-1","status":"MISALIGNED","trackA_state":"api v2","trackB_state":"api v1","conflicts":["signature"]}`,
		MsgRetroFinding:    `{"went_well":["plan"],"difficult":["flaky test"],"suggestions":["pin deps"],"patterns":["test first"]}`,
		MsgIncrementReady:  `{"increment":"INCREMENT-1","status":"FAIL","gate":{"syntax_clean":true,"no_regression":false,"increment_tests_pass":true}}`,
		MsgTestResult:      `{"passed":19,"failed":1,"total":20}`,
		"custom_note":      `[1,2,3]`,
	}
	for typ, data := range good {
		if _, err := (*Registry)(nil).Decode(typ, json.RawMessage(data)); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
	v, _ := NewRegistry().Decode(MsgVote, json.RawMessage(good[MsgVote]))
	if v.(*Vote).ProposalID != "P1" {
		t.Errorf("alias proposalId not decoded: %+v", v)
	}
	tr, _ := NewRegistry().Decode(MsgTestResult, json.RawMessage(good[MsgTestResult]))
	if r := tr.(*TestResult).Rate(); r != 0.95 || r < DefaultConfig().Pipeline.TestPassRate {
		t.Errorf("19/20 rate %v does not meet 0.95", r)
	}
	bad := map[string]struct {
		typ  MessageType
		data string
	}{
		"unknown field":        {MsgVote, `{"proposal_id":"P","vote":"APPROVE","rationale":"r","extra":1}`},
		"missing rationale":    {MsgVote, `{"proposal_id":"P","vote":"APPROVE"}`},
		"bad vote":             {MsgVote, `{"proposal_id":"P","vote":"YES","rationale":"r"}`},
		"confidence > 1":       {MsgVote, `{"proposal_id":"P","vote":"APPROVE","rationale":"r","confidence":1.01}`},
		"block on approve":     {MsgVote, `{"proposal_id":"P","vote":"APPROVE","rationale":"r","block":true}`},
		"both spellings":       {MsgVote, `{"proposal_id":"P","proposalId":"Q","vote":"APPROVE","rationale":"r"}`},
		"bad verdict":          {MsgReviewResult, `{"verdict":"OK"}`},
		"finding without text": {MsgReviewResult, `{"verdict":"BLOCK","findings":{"high":[{"file":"a"}]}}`},
		"level jump back":      {MsgEscalate, `{"issue":"x","from_level":2,"to_level":1}`},
		"gate contradiction":   {MsgIncrementReady, `{"increment":"I","status":"PASS","gate":{"syntax_clean":false,"no_regression":true,"increment_tests_pass":true}}`},
		"no test counts":       {MsgTestResult, `{}`},
		"trailing data":        {MsgPlanApproved, `{} {}`},
		"not an object":        {MsgPlanRevision, `"text"`},
		"user type bad json":   {"custom_note", `{`},
		"urgency":              {MsgConsultRequest, `{"topic":"t","question":"q","urgency":"asap"}`},
	}
	for name, tc := range bad {
		_, err := (*Registry)(nil).Decode(tc.typ, json.RawMessage(tc.data))
		var pe *PayloadError
		if !errors.As(err, &pe) || !errors.Is(err, ErrPayload) {
			t.Errorf("%s: want *PayloadError, got %v", name, err)
		}
	}
}

func TestRegistryUserTypes(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	if err := reg.Register(MsgVote, func(json.RawMessage) error { return nil }); !errors.Is(err, ErrInvalid) {
		t.Fatalf("replacing a built-in: %v", err)
	}
	if err := reg.Register("deploy_done", func(b json.RawMessage) error {
		var v struct{ Env string }
		if err := json.Unmarshal(b, &v); err != nil || v.Env == "" {
			return errors.New("env required")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Decode("deploy_done", json.RawMessage(`{}`)); !errors.Is(err, ErrPayload) {
		t.Fatalf("registered validator not applied: %v", err)
	}
	m := Message{Team: "alpha", From: "a", To: "role:tester", Type: "deploy_done", Data: json.RawMessage(`{"Env":"prod"}`)}
	if err := ValidateMessage(reg, m); err != nil {
		t.Fatal(err)
	}
	m.To = "bad address!"
	if err := ValidateMessage(reg, m); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad address: %v", err)
	}
}

func FuzzDecodePayload(f *testing.F) {
	for _, s := range []string{`{"verdict":"APPROVE"}`, `{"proposalId":"P","vote":"ABSTAIN","rationale":"r"}`, `{"issue":"x","from_level":0,"to_level":1}`,
		`{"sync_id":"S","status":"ALIGNED","trackA_state":"x"}`, `{"passed":1,"total":2}`, `{`, `null`, `[]`, `{"confidence":1e309}`} {
		for i := range builtinOrder {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, ti uint8, data []byte) {
		typ := builtinOrder[int(ti)%len(builtinOrder)]
		v, err := (*Registry)(nil).Decode(typ, data)
		if err != nil {
			var pe *PayloadError
			if !errors.As(err, &pe) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		// A decoded payload re-encodes and decodes to the same value.
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		v2, err := (*Registry)(nil).Decode(typ, b)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", b, err)
		}
		b2, _ := json.Marshal(v2)
		if string(b) != string(b2) {
			t.Fatalf("not stable: %s vs %s", b, b2)
		}
	})
}
