package sim

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func policies(t testing.TB, list string) []PolicySpec {
	t.Helper()
	specs, err := ParsePolicies(list, KaizenOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return specs
}

func run(t testing.TB, w *World, opts Options) *Report {
	t.Helper()
	rep, err := Run(context.Background(), w, opts)
	if err != nil {
		t.Fatal(err)
	}
	rep.Timing = nil // measured, not reproducible
	return rep
}

// A fixed seed gives the same report, kaizen included, whatever the
// parallelism.
func TestRunIsDeterministic(t *testing.T) {
	t.Parallel()
	w, err := mustBuiltin(t, "mixed-drift").WithTasks(250)
	if err != nil {
		t.Fatal(err)
	}
	a := run(t, w, Options{Policies: policies(t, DefaultPolicies), Seeds: []uint64{4, 5}, Parallel: 4})
	b := run(t, w, Options{Policies: policies(t, DefaultPolicies), Seeds: []uint64{4, 5}, Parallel: 1})
	if !reflect.DeepEqual(a, b) {
		var ja, jb bytes.Buffer
		WriteJSON(&ja, a)
		WriteJSON(&jb, b)
		t.Fatalf("two runs differ:\n%s\n---\n%s", ja.String(), jb.String())
	}
}

// scripted replays a fixed choice per task, whatever happens.
func scripted(name string, choices [][]int) PolicySpec {
	return PolicySpec{Name: name, New: func(context.Context, Env) (Policy, error) { return &replay{choices}, nil }}
}

type replay struct{ choices [][]int }

func (r *replay) Choose(_ context.Context, t Task) ([]int, error)    { return r.choices[t.Number-1], nil }
func (r *replay) Observe(context.Context, Task, []int, Result) error { return nil }

// Common random numbers across policies: two policies that choose the
// same strategies see the same outcomes, and a policy's results do not
// depend on which other policies run.
func TestCommonRandomNumbers(t *testing.T) {
	t.Parallel()
	w := mustBuiltin(t, "sparse-families")
	tp := newTape(w, 9)
	orc, err := runOne(context.Background(), tp, policies(t, "oracle")[0])
	if err != nil {
		t.Fatal(err)
	}
	a, err1 := runOne(context.Background(), tp, scripted("a", orc.choices))
	b, err2 := runOne(context.Background(), tp, scripted("b", orc.choices))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !reflect.DeepEqual(a.success, b.success) || !reflect.DeepEqual(a.success, orc.success) || !reflect.DeepEqual(a.expected, orc.expected) {
		t.Fatal("the same choices gave different outcomes")
	}
	for ti := range w.Tasks {
		if orc.success[ti] != tp.oracle[ti].Success {
			t.Fatalf("task %d: the oracle policy's outcome differs from the report's oracle baseline", ti+1)
		}
	}

	alone := run(t, w, Options{Policies: policies(t, "random"), Seeds: []uint64{9}})
	with := run(t, w, Options{Policies: policies(t, "bandit,random,oracle"), Seeds: []uint64{9}})
	if !reflect.DeepEqual(alone.Policies[0], with.Policies[1]) {
		t.Fatal("random's results depend on the other policies")
	}
}

// The oracle's expected success is at least every policy's, task by task,
// on every shipped world and on generated ones (kaizen included on the
// shipped worlds).
func TestOracleBeatsEveryPolicy(t *testing.T) {
	t.Parallel()
	type job struct {
		w    *World
		list string
	}
	var jobs []job
	for _, name := range BuiltinNames() {
		w, err := mustBuiltin(t, name).WithTasks(300) // past every shipped drift
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job{w, DefaultPolicies})
	}
	for seed := range uint64(6) {
		w, err := Generate(100 + seed)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job{w, "random,bandit,bandit-family"})
	}
	for _, j := range jobs {
		t.Run(j.w.Name, func(t *testing.T) {
			t.Parallel()
			tp := newTape(j.w, 2)
			for _, spec := range policies(t, j.list) {
				tr, err := runOne(context.Background(), tp, spec)
				if err != nil {
					t.Fatal(err)
				}
				for ti := range j.w.Tasks {
					if tr.expected[ti] > tp.best[ti]+1e-12 {
						t.Fatalf("%s task %d: expected %.4f above the oracle's %.4f", spec.Name, ti+1, tr.expected[ti], tp.best[ti])
					}
				}
			}
		})
	}
}

func TestRecovery(t *testing.T) {
	t.Parallel()
	best := make([]float64, 200)
	for i := range best {
		best[i] = 0.9
	}
	flat := func(v float64) []float64 {
		xs := make([]float64, 200)
		for i := range xs {
			xs[i] = v
		}
		return xs
	}
	// A drift at task 101; the policy is 0.4 below the oracle until task
	// 130, then equal. The window of 50 tasks from 101+r holds 30-r bad
	// tasks, within 5 points of the oracle when 0.4·(30-r)/50 <= 0.05,
	// that is from r = 24 on.
	exp := flat(0.5)
	for i := 130; i < 200; i++ {
		exp[i] = 0.9
	}
	if r, ok := recovery(exp, best, 101, 200, 50, 0.05); !ok || r != 24 {
		t.Errorf("recovery = %d, %v; want 24", r, ok)
	}
	// Within the tolerance from the start: 0. Exactly at the tolerance counts.
	if r, ok := recovery(flat(0.85), best, 101, 200, 50, 0.05); !ok || r != 0 {
		t.Errorf("recovery at the tolerance = %d, %v; want 0", r, ok)
	}
	// Never within the tolerance, or no full window before the end.
	if _, ok := recovery(flat(0.8), best, 101, 200, 50, 0.05); ok {
		t.Error("recovered while 0.1 below the oracle")
	}
	if _, ok := recovery(flat(0.9), best, 160, 200, 50, 0.05); ok {
		t.Error("recovered without a full window")
	}
	if got := rolling([]float64{1, 0, 1, 1}, 2); !reflect.DeepEqual(got, []float64{1, 0.5, 0.5, 1}) {
		t.Errorf("rolling %v", got)
	}
}

// goldenWorld is small and has a drift, so every table appears.
const goldenWorld = `name = "golden"
description = "A small world for the golden test."
tasks = 120
strategies_per_task = 2
combine = "mean"
strategies = ["split-by-feature", "split-by-layer", "sequential-order", "respect-dependencies", "maximize-parallel"]
default_rate = 0.3
[[family]]
name = "migrations"
descriptions = ["add a column to the orders table and backfill it", "给订单表添加一个字段并回填历史数据"]
[family.rates]
sequential-order = 0.9
respect-dependencies = 0.8
[[family]]
name = "ui"
descriptions = ["add a dark mode toggle to the settings page"]
[family.rates]
split-by-feature = 0.9
maximize-parallel = 0.85
[[drift]]
at = 60
families = ["ui"]
[drift.rates]
split-by-feature = 0.1
split-by-layer = 0.95
`

// The table and JSON formats, pinned (go test ./sim -run Golden -update
// rewrites them after an intended change).
func TestGoldenReport(t *testing.T) {
	t.Parallel()
	w, err := ParseWorld("golden", []byte(goldenWorld))
	if err != nil {
		t.Fatal(err)
	}
	rep := run(t, w, Options{Policies: policies(t, "random,oracle,bandit,bandit-family"), Seeds: []uint64{1, 2}, Window: 30})
	var table, js bytes.Buffer
	if err := WriteTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		file string
		got  []byte
	}{{"report.txt", table.Bytes()}, {"report.json", js.Bytes()}} {
		path := filepath.Join("testdata", "golden", g.file)
		if *update {
			if err := os.WriteFile(path, g.got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g.got, want) {
			t.Errorf("%s differs from the golden file (rerun with -update if intended):\n%s", g.file, g.got)
		}
	}
}

// The chart is well-formed SVG with a title, a description stating the
// data, one line per policy, and escaped names.
func TestSVG(t *testing.T) {
	t.Parallel()
	w, err := ParseWorld("golden", []byte(goldenWorld))
	if err != nil {
		t.Fatal(err)
	}
	specs := policies(t, "random,oracle")
	specs = append(specs, scripted(`<b>&"x"`, nil))
	specs[2].New = policies(t, "bandit")[0].New
	rep := run(t, w, Options{Policies: specs, Seeds: []uint64{1}})
	var buf bytes.Buffer
	if err := WriteSVG(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName   xml.Name `xml:"svg"`
		Title     string   `xml:"title"`
		Desc      string   `xml:"desc"`
		Polylines []struct {
			Points string `xml:"points,attr"`
			Title  string `xml:"title"`
		} `xml:"polyline"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not well-formed: %v\n%s", err, buf.String())
	}
	if !strings.Contains(doc.Title, "golden") || !strings.Contains(doc.Desc, "drift") && !strings.Contains(doc.Desc, "task 60") {
		t.Errorf("title %q, desc %q", doc.Title, doc.Desc)
	}
	for _, p := range rep.Policies {
		if !strings.Contains(doc.Desc, p.Name) {
			t.Errorf("desc does not mention %q", p.Name)
		}
	}
	if len(doc.Polylines) != 3 || doc.Polylines[2].Title != `<b>&"x"` {
		t.Fatalf("polylines: %+v", doc.Polylines)
	}
	if n := len(strings.Fields(doc.Polylines[0].Points)); n != w.Tasks {
		t.Errorf("%d points, want one per task (%d)", n, w.Tasks)
	}
}

type failing struct{}

func (failing) Choose(_ context.Context, t Task) ([]int, error) {
	if t.Number == 5 {
		return []int{0, 0}, nil
	}
	return []int{0, 1}, nil
}
func (failing) Observe(context.Context, Task, []int, Result) error { return nil }

// A policy's invalid choice and a cancelled context stop the run with an
// error naming the policy and seed.
func TestRunErrors(t *testing.T) {
	t.Parallel()
	w, _ := ParseWorld("golden", []byte(goldenWorld))
	bad := PolicySpec{Name: "bad", New: func(context.Context, Env) (Policy, error) { return failing{}, nil }}
	_, err := Run(context.Background(), w, Options{Policies: append(policies(t, "random"), bad), Seeds: []uint64{3}})
	if err == nil || !strings.Contains(err.Error(), "policy bad, seed 3: task 5: chose strategy 0 twice") {
		t.Errorf("invalid choice: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, w, Options{Policies: policies(t, "random")}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := Run(context.Background(), w, Options{}); err == nil {
		t.Error("no policies accepted")
	}
}

// BenchmarkRun is the default command's work: one shipped world, 500
// tasks, 3 seeds, every default policy (go test ./sim -bench Run).
func BenchmarkRun(b *testing.B) {
	for _, store := range Stores {
		b.Run(store, func(b *testing.B) {
			w := mustBuiltin(b, "task-dependent")
			specs, err := ParsePolicies(DefaultPolicies, KaizenOptions{Store: store, TempDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				rep, err := Run(context.Background(), w, Options{Policies: specs})
				if err != nil {
					b.Fatal(err)
				}
				for k, v := range rep.Timing.Engine {
					b.ReportMetric(v, k+"_s")
				}
			}
		})
	}
}
