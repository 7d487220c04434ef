package sim

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/learning"
)

// minimal is the smallest valid world; tests append to it.
const minimal = `name = "t"
[[family]]
name = "a"
descriptions = ["add a column to the orders table and backfill it"]
`

func TestBuiltinWorldsAreValid(t *testing.T) {
	t.Parallel()
	names := BuiltinNames()
	for _, want := range []string{"stable-global", "task-dependent", "drifting", "many-per-task", "sparse-families", "mixed-drift"} {
		if !strings.Contains(","+strings.Join(names, ",")+",", ","+want+",") {
			t.Errorf("built-in world %q missing from %v", want, names)
		}
	}
	chinese := 0
	for _, name := range names {
		w, err := Builtin(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if w.Description == "" {
			t.Errorf("%s has no description", name)
		}
		if len(w.Strategies) != 12 {
			t.Errorf("%s has %d strategies, want the 12 of seed 000", name, len(w.Strategies))
		}
		hasZH := false
		for _, f := range w.Families {
			if len(f.Descriptions) < 4 {
				t.Errorf("%s/%s has %d task descriptions, want several", name, f.Name, len(f.Descriptions))
			}
			for _, d := range f.Descriptions {
				// A description that mentions a strategy would bias the
				// guidance (mentioned strategies, warnings).
				if ex := learning.ExtractPatterns(d); len(ex) > 0 {
					t.Errorf("%s/%s: task description %q mentions strategy %q", name, f.Name, d, ex[0].Key)
				}
				if isChinese(d) {
					hasZH = true
				}
			}
		}
		if hasZH {
			chinese++
		}
		// The oracle must have something to win: the best set differs
		// from a random one.
		for fi := range w.Families {
			r := w.RatesAt(fi, 1)
			best := w.Combine.Of(pick(r, topK(r, w.K)))
			if best < 0.6 {
				t.Errorf("%s/%s: the oracle's expected success is only %.2f", name, w.Families[fi].Name, best)
			}
		}
	}
	if chinese < 3 {
		t.Errorf("%d shipped worlds have Chinese task descriptions, want at least 3", chinese)
	}
}

func pick(r []float64, idx []int) []float64 {
	out := make([]float64, len(idx))
	for i, s := range idx {
		out[i] = r[s]
	}
	return out
}

func TestParseWorldDefaults(t *testing.T) {
	t.Parallel()
	w, err := ParseWorld("t.toml", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if w.Tasks != 500 || w.K != 2 || w.Combine != CombineMean || w.Noise != 0.05 ||
		w.MinutesPerTask != [2]float64{30, 120} || !w.Start.Equal(DefaultStart) || w.Outcome != DefaultOutcome {
		t.Errorf("defaults: %+v", w)
	}
	if len(w.Strategies) != 12 || w.Strategies[0].Name != "split-by-file-type" || w.Strategies[0].LabelZH != "按文件类型拆分" {
		t.Errorf("default strategies: %+v", w.Strategies[:1])
	}
	for _, r := range w.Families[0].Rates {
		if r != 0.5 {
			t.Fatalf("default rate %v, want 0.5", r)
		}
	}
}

// A rate comes from, in order: the family's rates, the world's rates, the
// family's default_rate, the world's default_rate; strategies may be named
// by key or by label in either language.
func TestRatePrecedence(t *testing.T) {
	t.Parallel()
	src := `name = "t"
strategies = ["split-by-feature", "按层拆分(UI/逻辑/数据)", "Tests alongside implementation", "my own way"]
default_rate = 0.1
[rates]
"Split by feature" = 0.7
[[family]]
name = "a"
default_rate = 0.3
descriptions = ["x"]
[family.rates]
tests-alongside = 0.9
[[family]]
name = "b"
descriptions = ["y"]
[family.rates]
"my own way" = 0.6
`
	w, err := ParseWorld("t", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{w.Strategies[1].Name, w.Strategies[2].Name, w.Strategies[3].Label}; !reflect.DeepEqual(got, []string{"split-by-layer", "tests-alongside", "my own way"}) {
		t.Errorf("strategy names %v", got)
	}
	if got, want := w.Families[0].Rates, []float64{0.7, 0.3, 0.9, 0.3}; !reflect.DeepEqual(got, want) {
		t.Errorf("family a rates %v, want %v", got, want)
	}
	if got, want := w.Families[1].Rates, []float64{0.7, 0.1, 0.1, 0.6}; !reflect.DeepEqual(got, want) {
		t.Errorf("family b rates %v, want %v", got, want)
	}
}

// Drifts apply from their task number on, to their families only.
func TestDriftBoundaries(t *testing.T) {
	t.Parallel()
	src := minimal + `
[[family]]
name = "b"
descriptions = ["y"]
[[drift]]
at = 10
families = ["a"]
[drift.rates]
split-by-feature = 0.9
[[drift]]
at = 20
[drift.rates]
split-by-feature = 0.2
`
	w, err := ParseWorld("t", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	f := 3 // split-by-feature
	for _, c := range []struct {
		fam, task int
		want      float64
	}{{0, 9, 0.5}, {0, 10, 0.9}, {1, 10, 0.5}, {0, 19, 0.9}, {0, 20, 0.2}, {1, 20, 0.2}} {
		if got := w.RatesAt(c.fam, c.task)[f]; got != c.want {
			t.Errorf("family %d task %d: rate %v, want %v", c.fam, c.task, got, c.want)
		}
	}
	if _, err := w.WithTasks(15); err == nil || !strings.Contains(err.Error(), "drift[1].at") {
		t.Errorf("WithTasks(15) with a drift at 20: %v", err)
	}
	if w2, err := w.WithTasks(30); err != nil || w2.Tasks != 30 || w.Tasks != 500 {
		t.Errorf("WithTasks(30): %v", err)
	}
}

func TestParseWorldErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, src, key, msg string
	}{
		{"unknown top-level key", "colour = 1\n" + minimal, "colour", "unknown key"},
		{"unknown family key", strings.Replace(minimal, `name = "a"`, "name = \"a\"\nsize = 3", 1), "family.size", "unknown key"},
		{"unknown outcome key", minimal + "[outcome.success]\nspeed = 1\n", "outcome.success.speed", "unknown key"},
		{"syntax", "name = \n", "", "line 1"},
		{"wrong type", `name = "t"` + "\ntasks = \"many\"\n", "", "tasks"},
		{"no family", `name = "t"` + "\n", "family", "1 to 64"},
		{"bad name", strings.Replace(minimal, `name = "t"`, `name = "two words"`, 1), "name", "one word"},
		{"zero tasks", minimal + "tasks = 0\n", "", ""},
		{"k too large", "strategies_per_task = 13\n" + minimal, "strategies_per_task", "between 1 and the number of strategies (12)"},
		{"combine", "combine = \"max\"\n" + minimal, "combine", "unknown rule"},
		{"noise", "noise = -0.1\n" + minimal, "noise", "between 0 and 0.5"},
		{"minutes length", "minutes_per_task = [30]\n" + minimal, "minutes_per_task", "[min, max]"},
		{"minutes order", "minutes_per_task = [90, 30]\n" + minimal, "minutes_per_task", "min <= max"},
		{"rate above 1", minimal + "[rates]\nsplit-by-feature = 1.5\n", "rates.split-by-feature", "in [0, 1]"},
		{"unknown strategy", minimal + "[rates]\nsplit-by-mood = 0.5\n", "rates.split-by-mood", "unknown strategy"},
		{"duplicate strategy", "strategies = [\"split-by-feature\", \"Split by feature\"]\n" + minimal, "strategies[1]", "repeats strategies[0]"},
		{"pattern id as strategy", "strategies = [\"pattern-01abc\"]\n" + minimal, "strategies[0]", "pattern id"},
		{"duplicate family", minimal + "[[family]]\nname = \"a\"\ndescriptions = [\"y\"]\n", "family[1].name", "repeats family[0]"},
		{"no descriptions", strings.Replace(minimal, `descriptions = ["add a column to the orders table and backfill it"]`, "descriptions = []", 1), "family[0].descriptions", "1 to 256"},
		{"multi-line description", strings.Replace(minimal, `["add a column to the orders table and backfill it"]`, `["a\nb"]`, 1), "family[0].descriptions[0]", "single line"},
		{"weight", strings.Replace(minimal, `name = "a"`, "name = \"a\"\nweight = 0", 1), "family[0].weight", "> 0"},
		{"drift unknown family", minimal + "[[drift]]\nat = 5\nfamilies = [\"z\"]\n[drift.rates]\nsplit-by-feature = 0.1\n", "drift[0].families", "unknown family"},
		{"drift without rates", minimal + "[[drift]]\nat = 5\n", "drift[0].rates", "at least one"},
		{"drift at 1", minimal + "[[drift]]\nat = 1\n[drift.rates]\nsplit-by-feature = 0.1\n", "drift[0].at", "between 2 and tasks"},
		{"drift beyond tasks", "tasks = 100\n" + minimal + "[[drift]]\nat = 200\n[drift.rates]\nsplit-by-feature = 0.1\n", "drift[0].at", "between 2 and tasks (100)"},
		{"drifts out of order", minimal + "[[drift]]\nat = 50\n[drift.rates]\nsplit-by-feature = 0.1\n[[drift]]\nat = 40\n[drift.rates]\nsplit-by-feature = 0.2\n", "drift[1].at", "after the previous drift"},
		{"outcome duration", minimal + "[outcome.failure]\nduration_minutes = 0\n", "outcome.failure.duration_minutes", "(0, 1440]"},
		{"outcome errors", minimal + "[outcome.success]\nerrors = -1\n", "outcome.success.errors", "[0, 100]"},
		{"not utf-8", "name = \"\xff\"\n", "", "UTF-8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseWorld("w.toml", []byte(c.src))
			var we *WorldError
			if !errors.As(err, &we) {
				t.Fatalf("got %v (%T), want a *WorldError", err, err)
			}
			if c.key != "" && we.Key != c.key {
				t.Errorf("key %q, want %q (%v)", we.Key, c.key, err)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q does not say %q", err, c.msg)
			}
			if !strings.HasPrefix(err.Error(), "world w.toml") {
				t.Errorf("error %q does not name the source", err)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	if w, ok, err := Resolve("drifting"); err != nil || !ok || w.Name != "drifting" {
		t.Errorf("Resolve(drifting) = %v, %v, %v", w, ok, err)
	}
	if _, ok, err := Resolve("some/file.toml"); ok || err != nil {
		t.Errorf("a path resolved: %v %v", ok, err)
	}
	if _, ok, err := Resolve("gen:x"); !ok || err == nil {
		t.Errorf("gen:x: %v %v", ok, err)
	}
	if _, err := Builtin("nope"); err == nil || !strings.Contains(err.Error(), "task-dependent") {
		t.Errorf("Builtin(nope) = %v, want the list of worlds", err)
	}
}

// Generated worlds are valid for any seed, reproducible, and varied.
func TestGenerate(t *testing.T) {
	t.Parallel()
	ks, drifts, fams := map[int]bool{}, map[int]bool{}, map[int]bool{}
	for seed := range uint64(300) {
		w, err := Generate(seed)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		again, _ := Generate(seed)
		if !reflect.DeepEqual(w, again) {
			t.Fatalf("seed %d: two generations differ", seed)
		}
		ks[w.K], drifts[len(w.Drifts)], fams[len(w.Families)] = true, true, true
	}
	if len(ks) != 3 || len(drifts) != 3 || len(fams) < 5 {
		t.Errorf("little variety: k %v, drift counts %v, family counts %v", ks, drifts, fams)
	}
}

func FuzzParseWorld(f *testing.F) {
	for _, name := range BuiltinNames() {
		src, _ := BuiltinSource(name)
		f.Add(src)
	}
	f.Add([]byte(minimal))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ParseWorld("fuzz", data)
		if err != nil {
			var we *WorldError
			if !errors.As(err, &we) {
				t.Fatalf("error %v is %T, not *WorldError", err, err)
			}
			return
		}
		if err := w.Validate(); err != nil {
			t.Fatalf("parsed world fails validation: %v", err)
		}
		for fi := range w.Families {
			for _, r := range w.RatesAt(fi, w.Tasks) {
				if r < 0 || r > 1 {
					t.Fatalf("rate %v out of [0, 1]", r)
				}
			}
		}
	})
}
