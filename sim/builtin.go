package sim

import (
	"embed"
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kaizenhq/kaizen/learning"
)

//go:embed worlds/*.toml
var worldFiles embed.FS

// BuiltinNames lists the shipped worlds, sorted.
func BuiltinNames() []string {
	entries, _ := worldFiles.ReadDir("worlds")
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".toml"); ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Builtin returns a shipped world by name.
func Builtin(name string) (*World, error) {
	if !slices.Contains(BuiltinNames(), name) {
		return nil, &WorldError{Source: name, Message: fmt.Sprintf("no built-in world of that name (built-in: %s; or a .toml file, or gen:SEED)",
			strings.Join(BuiltinNames(), ", "))}
	}
	data, err := worldFiles.ReadFile(path.Join("worlds", name+".toml"))
	if err != nil {
		return nil, err
	}
	w, err := ParseWorld(name+".toml", data)
	if err != nil {
		return nil, err
	}
	if w.Name != name {
		return nil, &WorldError{Source: name + ".toml", Key: "name", Message: fmt.Sprintf("is %q, want the file's name", w.Name)}
	}
	return w, nil
}

// BuiltinSource returns the TOML of a shipped world.
func BuiltinSource(name string) ([]byte, error) {
	if !slices.Contains(BuiltinNames(), name) {
		return nil, &WorldError{Source: name, Message: "no built-in world of that name"}
	}
	return worldFiles.ReadFile(path.Join("worlds", name+".toml"))
}

// Resolve finds a world by reference: "gen:SEED" generates one, a
// built-in name loads it; anything else is not resolved (ok false: the
// caller reads it as a file).
func Resolve(ref string) (w *World, ok bool, err error) {
	if s, found := strings.CutPrefix(ref, "gen:"); found {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, true, &WorldError{Source: ref, Message: "gen:SEED wants a non-negative integer seed"}
		}
		w, err := Generate(seed)
		return w, true, err
	}
	if slices.Contains(BuiltinNames(), ref) {
		w, err := Builtin(ref)
		return w, true, err
	}
	return nil, false, nil
}

// Generate builds a random world from a seed, for measuring on worlds no
// one tuned for (holdout): 3 to 8 task families drawn from the shipped
// worlds' families (their descriptions), the twelve strategies, hidden
// rates mixing a global and a per-family effect in a random proportion,
// 1 to 3 strategies per task, a random combination rule and noise, and 0
// to 2 drifts that turn some of the best strategies bad (and one bad
// strategy good) in some families. The same seed gives the same world.
func Generate(seed uint64) (*World, error) {
	rng := rand.New(rand.NewPCG(seed, 0x67656e776f726c64)) // "genworld"
	pool := familyPool()
	w := &World{Name: fmt.Sprintf("gen-%d", seed), Tasks: 500, Start: DefaultStart, Outcome: DefaultOutcome}
	for _, s := range learning.Strategies {
		w.Strategies = append(w.Strategies, Strategy{Name: s.Key, Label: s.Label, LabelZH: s.LabelZH})
	}
	ns := len(w.Strategies)
	nf := 3 + rng.IntN(6)
	perm := rng.Perm(len(pool))
	alpha := rng.Float64() // share of the per-family effect
	global := make([]float64, ns)
	for s := range global {
		global[s] = rng.NormFloat64()
	}
	for i := range min(nf, len(pool)) {
		f := pool[perm[i]]
		fam := Family{Name: f.Name, Weight: 0.5 + rng.Float64(), Descriptions: slices.Clone(f.Descriptions), Rates: make([]float64, ns)}
		for s := range ns {
			z := math.Sqrt(1-alpha)*global[s] + math.Sqrt(alpha)*rng.NormFloat64()
			fam.Rates[s] = round(min(max(0.5+0.22*z, 0.05), 0.95), 2)
		}
		w.Families = append(w.Families, fam)
	}
	w.K = 1 + rng.IntN(3)
	w.Combine = Combines[rng.IntN(len(Combines))]
	if w.K == 1 {
		w.Combine = CombineMean
	}
	w.Noise = round(rng.Float64()*0.1, 2)
	if rng.IntN(3) == 0 {
		w.MinutesPerTask = [2]float64{240, 720}
	} else {
		w.MinutesPerTask = [2]float64{30, 120}
	}
	at := 0
	for range rng.IntN(3) {
		at = max(at+100, 100+rng.IntN(150))
		if at > w.Tasks-50 {
			break
		}
		d := Drift{At: at, Note: "generated"}
		for fi := range w.Families {
			if rng.IntN(2) == 0 || fi == 0 {
				d.Families = append(d.Families, fi)
			}
		}
		// The best strategies of the first affected family turn bad, a
		// bad one turns good.
		rates := w.RatesAt(d.Families[0], at)
		order := topK(rates, ns)
		for _, s := range order[:1+rng.IntN(2)] {
			d.Changes = append(d.Changes, RateChange{Strategy: s, Rate: round(0.1+0.2*rng.Float64(), 2)})
		}
		d.Changes = append(d.Changes, RateChange{Strategy: order[ns-1], Rate: round(0.8+0.15*rng.Float64(), 2)})
		slices.SortFunc(d.Changes, func(a, b RateChange) int { return a.Strategy - b.Strategy })
		w.Drifts = append(w.Drifts, d)
	}
	var parts []string
	parts = append(parts, fmt.Sprintf("generated from seed %d: %d families, %.0f%% of the rate variation per family", seed, len(w.Families), alpha*100))
	if len(w.Drifts) > 0 {
		parts = append(parts, fmt.Sprintf("drift at task %s", joinInts(w.DriftTasks())))
	}
	w.Description = strings.Join(parts, "; ") + "."
	if len(w.Families) == 0 {
		return nil, &WorldError{Source: w.Name, Message: "no shipped task families to draw from"}
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	return w, nil
}

// familyPool is the shipped worlds' task families (first occurrence of
// each name), computed once from the embedded files (constant data).
var familyPool = sync.OnceValue(shippedFamilies)

func shippedFamilies() []Family {
	var out []Family
	seen := map[string]bool{}
	for _, name := range BuiltinNames() {
		w, err := Builtin(name)
		if err != nil {
			continue // the tests keep every shipped world valid
		}
		for _, f := range w.Families {
			if !seen[f.Name] {
				seen[f.Name] = true
				out = append(out, f)
			}
		}
	}
	return out
}
