package sim

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

var informedNames = []string{"informed", "informed-discounted", "informed-pooled", "informed-ucb", "informed-full", "informed-full-discounted"}

// oneBest is one family, one strategy per task, split-by-feature at 0.9
// and every other strategy at 0.1.
const oneBest = `name = "one-best"
tasks = 1000
strategies_per_task = 1
noise = 0
default_rate = 0.1
[[family]]
name = "a"
descriptions = ["add a column to the orders table and backfill it"]
[family.rates]
split-by-feature = 0.9
`

func parseOneBest(t *testing.T) *World {
	t.Helper()
	w, err := ParseWorld("one-best", []byte(oneBest))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// The informed learners are deterministic for a fixed seed: two runs give
// the same report, another seed another one.
func TestInformedDeterministic(t *testing.T) {
	t.Parallel()
	w, err := Builtin("task-dependent")
	if err != nil {
		t.Fatal(err)
	}
	w.Tasks = 200
	specs, err := ParsePolicies("informed,informed-discounted,informed-pooled,informed-ucb,informed-full,informed-full-discounted", KaizenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	run := func(seeds ...uint64) string {
		rep, err := Run(context.Background(), w, Options{Policies: specs, Seeds: seeds})
		if err != nil {
			t.Fatal(err)
		}
		rep.Timing = nil
		for i, p := range rep.Policies {
			if !p.Reference {
				t.Errorf("%s: not marked as a reference learner", p.Name)
			}
			rep.Policies[i].Name = "" // compare the numbers only across seeds
		}
		b, err := json.Marshal(rep.Policies)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	a, b := run(1, 2), run(1, 2)
	if a != b {
		t.Error("two runs on the same seeds differ")
	}
	if c := run(3, 4); c == a {
		t.Error("other seeds give the same report")
	}
}

// On a world with one clearly best strategy of K = 1 every informed
// learner converges to it: the Thompson samplers choose it in at least 95
// of the last 100 of 1000 tasks, UCB1 (whose exploration bonus decays
// only as sqrt(log n)) in at least 80.
func TestInformedConverges(t *testing.T) {
	t.Parallel()
	w := parseOneBest(t)
	best := slices.IndexFunc(w.Strategies, func(s Strategy) bool { return s.Name == "split-by-feature" })
	for _, name := range informedNames {
		spec, err := policyByName(name, KaizenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, seed := range []uint64{1, 2, 3} {
			tr, err := runOne(context.Background(), newTape(w, seed), spec)
			if err != nil {
				t.Fatal(err)
			}
			hits := 0
			for _, c := range tr.choices[len(tr.choices)-100:] {
				if c[0] == best {
					hits++
				}
			}
			want := 95
			if name == "informed-ucb" {
				want = 80
			}
			if hits < want {
				t.Errorf("%s seed %d: chose the best strategy in %d of the last 100 tasks, want >= %d", name, seed, hits, want)
			}
		}
	}
}

// The hidden rates are read only in Observe, for the task observed: never
// in Choose. And the learners learn from the strategies' own draws, not
// from the task's outcome: the same draws with the outcome flipped leave
// the same posteriors.
func TestInformedReadsRatesOnlyForFeedback(t *testing.T) {
	t.Parallel()
	w, err := Builtin("task-dependent")
	if err != nil {
		t.Fatal(err)
	}
	tp := newTape(w, 7)
	for _, name := range informedNames {
		var (
			observing bool
			task      Task
			calls     int
		)
		// The learner and its twin run in lock-step on streams of the same
		// seed; the twin observes every outcome flipped.
		var ps [2]*informed
		for j := range ps {
			env := Env{World: w, Seed: 7, Rand: policyRand(7, name), Clock: &Clock{},
				Rates: func(family, n int) []float64 {
					calls++
					if !observing {
						t.Fatalf("%s read the hidden rates outside Observe (family %d, task %d)", name, family, n)
					}
					if family != task.Family || n != task.Number {
						t.Fatalf("%s read the rates of family %d task %d while observing family %d task %d", name, family, n, task.Family, task.Number)
					}
					return w.RatesAt(family, n)
				}}
			spec, err := policyByName(name, KaizenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			pol, err := spec.New(context.Background(), env)
			if err != nil {
				t.Fatal(err)
			}
			ps[j] = pol.(*informed)
		}
		p, twin := ps[0], ps[1]
		for i := range 150 {
			task = tp.tasks[i]
			observing = false
			choice, err := p.Choose(context.Background(), task)
			if err != nil {
				t.Fatal(err)
			}
			twinChoice, err := twin.Choose(context.Background(), task)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(choice, twinChoice) {
				t.Fatalf("%s task %d: the twin chose %v, the learner %v", name, task.Number, twinChoice, choice)
			}
			res := tp.outcome(i, choice)
			flipped := res
			flipped.Success = !res.Success
			observing = true
			if err := p.Observe(context.Background(), task, choice, res); err != nil {
				t.Fatal(err)
			}
			if err := twin.Observe(context.Background(), task, choice, flipped); err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(p.a, twin.a, slices.Equal) || !slices.EqualFunc(p.b, twin.b, slices.Equal) {
				t.Fatalf("%s task %d: the task's outcome changed the posteriors", name, task.Number)
			}
		}
		if calls != 2*150 {
			t.Errorf("%s read the rates %d times over 150 tasks (twice each: learner and twin), want 300", name, calls)
		}
	}
}

// The reports label the informed policies as references: the text table
// (an asterisk and a footnote), the chart (legend and description) and
// the JSON; other policies are not labelled.
func TestInformedLabelledAsReference(t *testing.T) {
	t.Parallel()
	w := parseOneBest(t)
	w.Tasks = 60
	specs, err := ParsePolicies("random,informed,informed-full", KaizenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), w, Options{Policies: specs, Seeds: []uint64{1}})
	if err != nil {
		t.Fatal(err)
	}
	var table, svg, js strings.Builder
	if err := WriteTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteSVG(&svg, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"informed*", "informed-full*", "* reference learner, not a product policy"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if strings.Contains(table.String(), "random*") {
		t.Error("table marks random as a reference")
	}
	for _, want := range []string{"informed* ", "* reference learner: more", "informed 0.", "(a reference learner given more information than any agent, not a product policy)"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if got := strings.Count(js.String(), `"reference": true`); got != 2 {
		t.Errorf("JSON has %d reference policies, want 2", got)
	}
}
