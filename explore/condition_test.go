package explore

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type fakeEnv map[string]float64

func (e fakeEnv) value(n string) float64 { return e[n] }

func TestConditionParsePrintEval(t *testing.T) {
	t.Parallel()
	env := fakeEnv{"a": 3, "b": 0, "max_iterations": 24, "search_budget": 18}
	cases := []struct {
		in, canonical string
		holds         bool
	}{
		{"true", "true", true},
		{"false", "false", false},
		{"a >= 3", "a >= 3", true},
		{"a > 3", "a > 3", false},
		{"a<=3", "a <= 3", true},
		{"a < 3", "a < 3", false},
		{"a == 3", "a == 3", true},
		{"a != 3", "a != 3", false},
		{"3 <= a", "3 <= a", true},
		{"a >= -1", "a >= -1", true},
		{"b > 0 or a >= 3", "b > 0 or a >= 3", true},
		{"b > 0 || a >= 3 && b == 0", "b > 0 or (a >= 3 and b == 0)", true},
		{"(b > 0 or a >= 3) and b == 1", "(b > 0 or a >= 3) and b == 1", false},
		{"not b > 0", "not b > 0", true},
		{"!(a >= 3 and b == 0)", "not (a >= 3 and b == 0)", false},
		{"a >= 0.125*max_iterations", "a >= 0.125*max_iterations", true}, // floor(3) = 3
		{"a >= 0.4*max_iterations", "a >= 0.4*max_iterations", false},    // floor(9.6) = 9
		{"17 >= search_budget - 1", "17 >= search_budget - 1", true},
		{"a > 0.1*search_budget + 2", "a > 0.1*search_budget + 2", false}, // floor(1.8)+2 = 3
		{"(a >= 1 and b == 0) and a < 9", "(a >= 1 and b == 0) and a < 9", true},
	}
	for _, c := range cases {
		got, err := ParseCondition(c.in)
		if err != nil {
			t.Errorf("ParseCondition(%q): %v", c.in, err)
			continue
		}
		if s := got.String(); s != c.canonical {
			t.Errorf("ParseCondition(%q).String() = %q, want %q", c.in, s, c.canonical)
		}
		if h := got.holds(env); h != c.holds {
			t.Errorf("%q holds = %v, want %v", c.in, h, c.holds)
		}
		again, err := ParseCondition(got.String())
		if err != nil || !cmp.Equal(again, got) {
			t.Errorf("%q does not round-trip: %v %s", c.in, err, cmp.Diff(got, again))
		}
	}
}

func TestConditionErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"", "   ", "a", "a >=", ">= 3", "a >= 3 and", "(a >= 3", "a >= 3)", "a => 3", "a >= 3 3",
		"a ≥ 3", "0*a >= 1", "a >= 1..2", "and >= 1", "a >= b +", "a >= - x", string(make([]byte, 3000)),
		"((((((((((((((((((((((((((((a >= 1))))))))))))))))))))))))))))",
	} {
		_, err := ParseCondition(in)
		var ce *ConditionError
		if !errors.As(err, &ce) || !errors.Is(err, ErrBadCondition) {
			t.Errorf("ParseCondition(%.40q) = %v, want *ConditionError", in, err)
		}
	}
}

func TestConditionJSON(t *testing.T) {
	t.Parallel()
	tr := Transition{From: "A", To: "B", OnMetrics: MustParseCondition("a >= 3 or b > 0.5*max_iterations"), OnText: True}
	data, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"from":"A","to":"B","on_metrics":"a \u003e= 3 or b \u003e 0.5*max_iterations","on_text":"true"}`; string(data) != want {
		t.Fatalf("JSON %s, want %s", data, want)
	}
	var back Transition
	if err := json.Unmarshal(data, &back); err != nil || !cmp.Equal(back, tr) {
		t.Fatalf("round trip: %v %s", err, cmp.Diff(tr, back))
	}
	built := Any(Cmp("submit_count", ">", 0), All(Cmp("a", ">=", 1), Cmp("b", "<", 2)))
	if got := built.String(); got != "submit_count > 0 or (a >= 1 and b < 2)" {
		t.Fatalf("built condition prints %q", got)
	}
}

// FuzzParseCondition: parsing never panics; what parses prints to a
// canonical form that parses to the same condition.
func FuzzParseCondition(f *testing.F) {
	for _, s := range []string{"a >= 1", "not (a > 0.4*max_iterations - 1 or b == 2) and c != 3", "x && y", "((a<1))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCondition(s)
		if err != nil {
			return
		}
		again, err := ParseCondition(c.String())
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", c.String(), s, err)
		}
		if again.String() != c.String() {
			t.Fatalf("canonical form unstable: %q → %q", c.String(), again.String())
		}
		c.holds(fakeEnv{})
	})
}
