package sim

import (
	"context"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// The plan text an agent writes names exactly the strategies it uses:
// the engine's extractor finds every chosen strategy and no other, in
// English and in Chinese, for every set of up to three strategies.
func TestPlanTextNamesExactlyTheStrategies(t *testing.T) {
	t.Parallel()
	sts := learning.Strategies
	var sets [][]int
	for a := range sts {
		sets = append(sets, []int{a})
		for b := a + 1; b < len(sts); b++ {
			sets = append(sets, []int{a, b})
			for c := b + 1; c < len(sts); c++ {
				sets = append(sets, []int{a, b, c})
			}
		}
	}
	for _, zh := range []bool{false, true} {
		task := "add a column to the orders table and backfill it"
		if zh {
			task = "给订单表添加一个字段并回填历史数据"
		}
		for _, set := range sets {
			labels := make([]string, len(set))
			for i, s := range set {
				labels[i] = sts[s].Label
				if zh {
					labels[i] = sts[s].LabelZH
				}
			}
			// Any order of the labels.
			rev := slices.Clone(labels)
			slices.Reverse(rev)
			for _, ls := range [][]string{labels, rev} {
				text := planText(task, ls, zh)
				var got []string
				for _, x := range learning.ExtractPatterns(text) {
					got = append(got, x.Key)
				}
				var want []string
				for _, s := range set {
					want = append(want, sts[s].Key)
				}
				sort.Strings(got)
				sort.Strings(want)
				if !slices.Equal(got, want) {
					t.Fatalf("%q: extracted %v, want %v", text, got, want)
				}
			}
		}
	}
}

func testPolicy(t *testing.T, w *World) *kaizenPolicy {
	p := &kaizenPolicy{w: w, rng: rand.New(rand.NewPCG(1, 1)), byID: map[string]int{}, byKey: map[string]int{}}
	for i, s := range w.Strategies {
		for _, k := range []string{s.Name, s.Label, s.LabelZH} {
			p.byKey[learning.ContentKey(k)] = i
		}
		if st, ok := learning.StrategyByLabel(s.Name); ok {
			p.byKey["tag:"+st.Tag()] = i
		}
	}
	return p
}

// The guidance reader maps ranked patterns, anti-patterns (by their
// source pattern) and excluded patterns to strategies; a "recommended"
// list and an "explore" suggestion, when guidance has them, take over.
func TestReadGuidance(t *testing.T) {
	t.Parallel()
	w := mustBuiltin(t, "task-dependent")
	p := testPolicy(t, w)
	p.learn("pattern-src", 0) // split-by-file-type was inverted
	g := &learning.Guidance{
		Patterns: []learning.RankedPattern{
			{ID: "pattern-a", Content: "Respect dependency chain", Tags: []string{"strategy:respect-dependencies"}},
			{ID: "pattern-b", Content: "按层拆分(UI/逻辑/数据)"},
			{ID: "pattern-c", Content: "something kaizen learned elsewhere"},
		},
		AntiPatterns: []learning.AntiPatternView{{ID: "anti-pattern-src", Content: "AVOID: Split by file type. Failed 3/3 times", SourceID: "pattern-src"}},
		Excluded:     []learning.RankedPattern{{ID: "pattern-d", Content: "Maximize parallelization"}},
	}
	adv := ReadGuidance(g, p.resolve)
	if want := []int{11, 2}; !slices.Equal(adv.Recommended, want) {
		t.Errorf("recommended %v, want %v", adv.Recommended, want)
	}
	if want := []int{0, 9}; !slices.Equal(adv.Avoid, want) {
		t.Errorf("avoid %v, want %v", adv.Avoid, want)
	}
	if len(adv.Explore) != 0 {
		t.Errorf("explore %v from today's guidance", adv.Explore)
	}
	if p.byID["pattern-a"] != 11 || p.byID["pattern-b"] != 2 {
		t.Errorf("pattern ids not learned: %v", p.byID)
	}

	extra := fieldsFromJSON([]byte(`{"patterns": [], "recommended": [{"id": "pattern-x", "content": "Sequential execution order"}, "tests-separate", {"tags": ["strategy:split-by-feature"]}],
		"explore": {"key": "one-file-per-subtask", "reason": "little evidence"}}`))
	adv = readAdvice(g, extra, p.resolve)
	if want := []int{10, 8, 3}; !slices.Equal(adv.Recommended, want) {
		t.Errorf("recommended from the future field %v, want %v", adv.Recommended, want)
	}
	if want := []int{4}; !slices.Equal(adv.Explore, want) {
		t.Errorf("explore %v, want %v", adv.Explore, want)
	}
}

// The exploitation rule: the first explore suggestion takes one slot, then
// the recommended strategies best first skipping those to avoid, then
// random among the rest that are not to avoid; only when nothing else is
// left, strategies to avoid.
func TestChooseRule(t *testing.T) {
	t.Parallel()
	w := mustBuiltin(t, "many-per-task") // k = 3
	p := testPolicy(t, w)
	got := p.choose(Advice{Recommended: []int{5, 6, 7, 8}, Avoid: []int{6}}, 3)
	if !slices.Equal(got, []int{5, 7, 8}) {
		t.Errorf("choice %v, want [5 7 8]", got)
	}
	got = p.choose(Advice{Recommended: []int{5, 6, 7}, Explore: []int{6, 9}, Avoid: []int{6}}, 3)
	if !slices.Equal(got, []int{9, 5, 7}) {
		t.Errorf("choice with explore %v, want [9 5 7]", got)
	}
	avoid := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	for range 50 {
		got = p.choose(Advice{Recommended: []int{3}, Avoid: avoid}, 3)
		if !slices.Contains(got, 10) || !slices.Contains(got, 11) || len(got) != 3 || validChoice(got, 3, 12) != nil {
			t.Fatalf("choice %v: want the two strategies not to avoid, then one to avoid", got)
		}
	}
	if p.counts[2] == 0 || p.counts[1] != 5 || p.counts[0] != 1 {
		t.Errorf("slot counts %v", p.counts)
	}
}

// keepOpen hides Close so the test can inspect the engine after the run.
type keepOpen struct{ p *kaizenPolicy }

func (k keepOpen) Choose(ctx context.Context, t Task) ([]int, error) { return k.p.Choose(ctx, t) }
func (k keepOpen) Observe(ctx context.Context, t Task, c []int, r Result) error {
	return k.p.Observe(ctx, t, c, r)
}

// End to end through the engine: every task's outcome is recorded with
// the strategies used, the simulated clock, and the drawn signals; the
// guidance then ranks those strategies.
func TestKaizenPolicyRecordsOutcomes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := mustBuiltin(t, "task-dependent").WithTasks(12)
	if err != nil {
		t.Fatal(err)
	}
	var pol *kaizenPolicy
	spec := PolicySpec{Name: "kaizen", New: func(ctx context.Context, env Env) (Policy, error) {
		p, err := newKaizen(ctx, env, KaizenOptions{TempDir: t.TempDir()})
		pol = p
		return keepOpen{p}, err
	}}
	tp := newTape(w, 1)
	tr, err := runOne(ctx, tp, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer pol.Close()
	e := pol.Engine()
	list, err := e.ListOutcomes(ctx, kaizen.OutcomeQuery{Project: "sim", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != int64(w.Tasks) {
		t.Fatalf("%d outcomes recorded, want %d", list.Total, w.Tasks)
	}
	byTask := map[string]learning.Outcome{}
	for _, o := range list.Items {
		byTask[o.TaskID] = o
	}
	for ti, task := range tp.tasks {
		o, ok := byTask[task.ID]
		if !ok {
			t.Fatalf("no outcome for %s", task.ID)
		}
		res := tp.outcome(ti, tr.choices[ti])
		if o.Success != res.Success || o.DurationMs != res.DurationMs || o.ErrorCount != res.Errors || o.RetryCount != res.Retries {
			t.Errorf("%s: recorded %+v, drawn %+v", task.ID, o.Signals(), res)
		}
		if !o.Timestamp.Equal(res.ReportedAt) {
			t.Errorf("%s: recorded at %v, want the simulated %v", task.ID, o.Timestamp, res.ReportedAt)
		}
		var got []string
		for _, id := range o.Patterns {
			d, err := e.GetPattern(ctx, "sim", id)
			if err != nil {
				t.Fatal(err)
			}
			st, ok := learning.StrategyByLabel(d.Pattern.Content)
			if !ok {
				t.Fatalf("%s: pattern %q is not a strategy", task.ID, d.Pattern.Content)
			}
			got = append(got, st.Key)
		}
		var want []string
		for _, s := range tr.choices[ti] {
			want = append(want, w.Strategies[s].Name)
		}
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: patterns %v, want the strategies used %v", task.ID, got, want)
		}
	}
	// The engine's guidance now knows the strategies that were used.
	g, err := e.PlanGuidance(ctx, kaizen.PlanInput{Task: "anything", Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	adv := ReadGuidance(g, pol.resolve)
	if len(adv.Recommended)+len(adv.Avoid) == 0 {
		t.Errorf("guidance after %d outcomes maps to no strategy: %+v", w.Tasks, g)
	}
	last := tp.tasks[w.Tasks-1]
	if now := e.Now(); now.Before(last.Start) || now.After(last.Deadline) {
		t.Errorf("engine clock %v is not the simulated clock (last task %v to %v)", now, last.Start, last.Deadline)
	}
}

// The future guidance fields are detected on the guidance type, so the
// JSON round trip happens only once the engine has them.
func TestHasFutureFields(t *testing.T) {
	t.Parallel()
	type future struct {
		Patterns    []learning.RankedPattern `json:"patterns"`
		Recommended []string                 `json:"recommended,omitempty"`
	}
	type today struct {
		Patterns []learning.RankedPattern `json:"patterns"`
		Explorer string                   `json:"explorer"`
	}
	if !hasFutureFields(reflect.TypeOf(future{})) || hasFutureFields(reflect.TypeOf(today{})) {
		t.Error("hasFutureFields misreads the JSON tags")
	}
}
