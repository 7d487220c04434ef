package sim

import (
	"math"
	"slices"
	"sort"
)

// Report is the comparison of policies on one world. Every rate is a
// share of tasks in [0, 1]; every Stat is the mean over seeds with the
// lowest and highest seed. Numbers are rounded to 4 decimals.
type Report struct {
	World       string   `json:"world"`
	Description string   `json:"description,omitempty"`
	Tasks       int      `json:"tasks"`
	Seeds       []uint64 `json:"seeds"`
	K           int      `json:"strategies_per_task"`
	Combine     Combine  `json:"combine"`
	Strategies  int      `json:"strategies"`
	Families    []string `json:"families"`
	// Drifts are the task numbers where hidden rates change.
	Drifts []int `json:"drifts"`
	// Window is the length of Windows and of the rolling success.
	Window    int     `json:"window"`
	Tolerance float64 `json:"recovery_tolerance"`
	// Phases split the run at the drifts; Windows in blocks of Window
	// tasks. Task numbers from 1, both ends included.
	Phases  []Span `json:"phases"`
	Windows []Span `json:"windows"`
	// Oracle is the success of the oracle's choice on the same draws,
	// computed whether or not the oracle policy runs (% of oracle and
	// regret are measured against it).
	Oracle         Stat           `json:"oracle_success"`
	OracleExpected Stat           `json:"oracle_expected"`
	Policies       []PolicyReport `json:"policies"`
	Timing         *Timing        `json:"timing,omitempty"`
}

// Span is a range of task numbers, both ends included.
type Span struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// Stat is a number over seeds: the mean, and the lowest and highest seed.
type Stat struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// PolicyReport is one policy's measures.
type PolicyReport struct {
	Name string `json:"name"`
	// Reference is set for the informed reference learners, which are
	// given more information than any agent (IsReference).
	Reference bool `json:"reference,omitempty"`
	// Success is the share of tasks that succeeded.
	Success Stat `json:"success"`
	// Expected is the mean success probability of the choices, from the
	// hidden rates.
	Expected Stat `json:"expected"`
	// OfOracle is Success divided by the oracle's success on the same
	// draws.
	OfOracle Stat `json:"of_oracle"`
	// Regret is the cumulative expected regret: the sum over tasks of the
	// oracle's expected success minus the policy's.
	Regret Stat `json:"regret"`
	// RegretCurve is the mean cumulative regret at the end of each window.
	RegretCurve []float64 `json:"regret_curve"`
	// Phases and Windows are the success in each Report span.
	Phases  []Stat `json:"phases"`
	Windows []Stat `json:"windows"`
	// Recovery has one entry per drift.
	Recovery []Recovery `json:"recovery"`
	// Families is the success by task family.
	Families []FamilyStat `json:"families"`
	// Rolling is the expected success over the last Window tasks (fewer
	// at the start), per task, mean over seeds: the chart's line.
	Rolling []float64 `json:"rolling_expected"`
	// Stats are the policy's own diagnostics (the kaizen policy: the
	// share of strategy slots taken from recommended, explore and random
	// fill, and the strategies to avoid per task).
	Stats map[string]Stat `json:"stats,omitempty"`
}

// Recovery is how many tasks a policy needed after a drift until its
// expected success over the next Window tasks came within Tolerance of
// the oracle's: 0 when it never fell behind. A seed where no such window
// fits before the next drift or the end has not recovered.
type Recovery struct {
	Drift int `json:"drift"`
	// PerSeed is the tasks to recover on each seed, null when not
	// recovered.
	PerSeed []*int `json:"per_seed"`
	// Recovered counts the seeds that recovered.
	Recovered int `json:"recovered"`
	// Tasks is over the seeds that recovered (nil when none did).
	Tasks *Stat `json:"tasks"`
	// Regain is the same count against the policy's own level instead of
	// the oracle's: the tasks after the drift until its expected success
	// over the next Window tasks, as a share of the oracle's, is back
	// within Tolerance of that share over the Window tasks before the
	// drift. It measures how fast a policy forgets, whatever its level.
	RegainPerSeed []*int `json:"regain_per_seed"`
	Regained      int    `json:"regained"`
	RegainTasks   *Stat  `json:"regain_tasks"`
	// RegainPooled is regain on the seeds pooled: the policy's and the
	// oracle's expected success summed over seeds per task, so that one
	// seed's lucky or unlucky window before the drift does not set the
	// target alone, and a seed that does not regain is not left out of
	// the number (nil: not regained).
	RegainPooled *int `json:"regain_pooled"`
	// RegainSkill is pooled regain on the policy's skill, its expected
	// success above random choice's as a share of the oracle's above
	// random's (skillRegain): 0 for random choice and the oracle in
	// every world, so that a drift that only makes the world harder or
	// easier for everyone is not counted as forgetting (nil: not
	// regained).
	RegainSkill *int `json:"regain_skill"`
}

// FamilyStat is the success on one task family.
type FamilyStat struct {
	Family  string `json:"family"`
	Success Stat   `json:"success"`
}

func buildReport(w *World, opts Options, tapes []*tape, traces [][]*trace) *Report {
	n, win := w.Tasks, opts.Window
	r := &Report{World: w.Name, Description: w.Description, Tasks: n, Seeds: slices.Clone(opts.Seeds),
		K: w.K, Combine: w.Combine, Strategies: len(w.Strategies), Families: w.familyNames(),
		Drifts: w.DriftTasks(), Window: win, Tolerance: round(opts.Tolerance, 4), Policies: []PolicyReport{}}
	from := 1
	for _, d := range r.Drifts {
		r.Phases = append(r.Phases, Span{from, d - 1})
		from = d
	}
	r.Phases = append(r.Phases, Span{from, n})
	for a := 1; a <= n; a += win {
		r.Windows = append(r.Windows, Span{a, min(a+win-1, n)})
	}
	oracleSuccess := make([]float64, len(tapes))
	oracleExp := make([]float64, len(tapes))
	for si, tp := range tapes {
		for t := range n {
			oracleSuccess[si] += b2f(tp.oracle[t].Success)
			oracleExp[si] += tp.best[t]
		}
		oracleSuccess[si] /= float64(n)
		oracleExp[si] /= float64(n)
	}
	r.Oracle, r.OracleExpected = stat(oracleSuccess), stat(oracleExp)

	// rnd is random choice's expected success per seed and task (skillRegain).
	rnd := make([][]float64, len(tapes))
	for si, tp := range tapes {
		rnd[si] = make([]float64, n)
		for t := range n {
			rnd[si][t] = randomExpected(w.Combine, tp.rates[t], w.K)
		}
	}
	for pi, spec := range opts.Policies {
		trs := traces[pi]
		seeds := len(trs)
		pr := PolicyReport{Name: spec.Name, Reference: IsReference(spec.Name), Rolling: make([]float64, n), RegretCurve: make([]float64, len(r.Windows))}
		per := func(f func(si int, tr *trace) float64) Stat {
			xs := make([]float64, seeds)
			for si, tr := range trs {
				xs[si] = f(si, tr)
			}
			return stat(xs)
		}
		successIn := func(tr *trace, s Span, keep func(t int) bool) float64 {
			k, m := 0.0, 0.0
			for t := s.From - 1; t < s.To; t++ {
				if keep == nil || keep(t) {
					k += b2f(tr.success[t])
					m++
				}
			}
			if m == 0 {
				return math.NaN()
			}
			return k / m
		}
		all := Span{1, n}
		pr.Success = per(func(_ int, tr *trace) float64 { return successIn(tr, all, nil) })
		pr.Expected = per(func(_ int, tr *trace) float64 { return mean(tr.expected) })
		pr.OfOracle = per(func(si int, tr *trace) float64 {
			if oracleSuccess[si] == 0 {
				return math.NaN()
			}
			return successIn(tr, all, nil) / oracleSuccess[si]
		})
		pr.Regret = per(func(si int, tr *trace) float64 {
			s := 0.0
			for t := range n {
				s += tapes[si].best[t] - tr.expected[t]
			}
			return s
		})
		for _, sp := range r.Phases {
			pr.Phases = append(pr.Phases, per(func(_ int, tr *trace) float64 { return successIn(tr, sp, nil) }))
		}
		for _, sp := range r.Windows {
			pr.Windows = append(pr.Windows, per(func(_ int, tr *trace) float64 { return successIn(tr, sp, nil) }))
		}
		for wi, sp := range r.Windows {
			s := 0.0
			for si, tr := range trs {
				for t := range sp.To {
					s += tapes[si].best[t] - tr.expected[t]
				}
			}
			pr.RegretCurve[wi] = round(s/float64(seeds), 4)
		}
		for fi, name := range r.Families {
			fs := per(func(si int, tr *trace) float64 {
				return successIn(tr, all, func(t int) bool { return tapes[si].tasks[t].Family == fi })
			})
			pr.Families = append(pr.Families, FamilyStat{Family: name, Success: fs})
		}
		for di, d := range r.Drifts {
			end := n
			if di+1 < len(r.Drifts) {
				end = r.Drifts[di+1] - 1
			}
			rc := Recovery{Drift: d}
			// count runs a measure over the seeds: the tasks of each seed
			// (nil when not reached), how many reached it, their stat.
			count := func(measure func(expected, best []float64, d, end, win int, tol float64) (int, bool)) ([]*int, int, *Stat) {
				per, n := make([]*int, seeds), 0
				var got []float64
				for si, tr := range trs {
					if k, ok := measure(tr.expected, tapes[si].best, d, end, win, opts.Tolerance); ok {
						per[si] = &k
						n++
						got = append(got, float64(k))
					}
				}
				if len(got) == 0 {
					return per, n, nil
				}
				s := stat(got)
				return per, n, &s
			}
			rc.PerSeed, rc.Recovered, rc.Tasks = count(recovery)
			rc.RegainPerSeed, rc.Regained, rc.RegainTasks = count(regain)
			es, bs := make([][]float64, seeds), make([][]float64, seeds)
			for si, tr := range trs {
				es[si], bs[si] = tr.expected, tapes[si].best
			}
			if k, ok := pooledRegain(es, bs, d, end, win, opts.Tolerance); ok {
				rc.RegainPooled = &k
			}
			if k, ok := skillRegain(es, bs, rnd, d, end, win, opts.Tolerance); ok {
				rc.RegainSkill = &k
			}
			pr.Recovery = append(pr.Recovery, rc)
		}
		for _, tr := range trs {
			roll := rolling(tr.expected, win)
			for t := range n {
				pr.Rolling[t] += roll[t] / float64(seeds)
			}
		}
		for t := range n {
			pr.Rolling[t] = round(pr.Rolling[t], 4)
		}
		keys := map[string]bool{}
		for _, tr := range trs {
			for k := range tr.stats {
				keys[k] = true
			}
		}
		for _, k := range sortedKeys(keys) {
			if pr.Stats == nil {
				pr.Stats = map[string]Stat{}
			}
			pr.Stats[k] = per(func(_ int, tr *trace) float64 { return tr.stats[k] })
		}
		r.Policies = append(r.Policies, pr)
	}
	return r
}

// recovery is the smallest r >= 0 such that the mean expected success of
// tasks d+r … d+r+win-1 (1-based, all at most end) is at least the
// oracle's mean over the same tasks minus tol.
func recovery(expected, best []float64, d, end, win int, tol float64) (int, bool) {
	// prefix sums of the difference oracle − policy
	diff := make([]float64, len(expected)+1)
	for t := range expected {
		diff[t+1] = diff[t] + best[t] - expected[t]
	}
	for r := 0; d+r+win-1 <= end; r++ {
		a, b := d+r-1, d+r+win-1 // 0-based [a, b)
		if (diff[b]-diff[a])/float64(win) <= tol+1e-12 {
			return r, true
		}
	}
	return 0, false
}

// regain is the smallest r >= 0 such that the policy's expected success
// over tasks d+r … d+r+win-1, as a share of the oracle's, is at least its
// share over the win tasks before the drift minus tol. A drift too early
// for a window before it, or no such window before end: not regained.
func regain(expected, best []float64, d, end, win int, tol float64) (int, bool) {
	if d-1-win < 0 {
		return 0, false
	}
	pe, pb := 0.0, 0.0
	for t := d - 1 - win; t < d-1; t++ { // 0-based: the win tasks before task d
		pe, pb = pe+expected[t], pb+best[t]
	}
	if pb <= 1e-12 {
		return 0, false
	}
	before := pe / pb
	e, b := make([]float64, len(expected)+1), make([]float64, len(best)+1)
	for t := range expected {
		e[t+1], b[t+1] = e[t]+expected[t], b[t]+best[t]
	}
	for r := 0; d+r+win-1 <= end; r++ {
		lo, hi := d+r-1, d+r+win-1
		if ob := b[hi] - b[lo]; ob > 1e-12 && (e[hi]-e[lo])/ob >= before-tol-1e-12 {
			return r, true
		}
	}
	return 0, false
}

// pooledRegain is regain on the seeds pooled: expected[s][t] and
// best[s][t] summed over the seeds s per task t.
func pooledRegain(expected, best [][]float64, d, end, win int, tol float64) (int, bool) {
	if len(expected) == 0 {
		return 0, false
	}
	return regain(pooled(expected, nil), pooled(best, nil), d, end, win, tol)
}

// pooled sums xs[s][t] − minus[s][t] (minus nil: 0) over the seeds s,
// per task t.
func pooled(xs, minus [][]float64) []float64 {
	out := make([]float64, len(xs[0]))
	for s := range xs {
		for t := range out {
			out[t] += xs[s][t]
			if minus != nil {
				out[t] -= minus[s][t]
			}
		}
	}
	return out
}

// rolling is the trailing mean over up to win values.
func rolling(xs []float64, win int) []float64 {
	out := make([]float64, len(xs))
	s := 0.0
	for i, x := range xs {
		s += x
		if i >= win {
			s -= xs[i-win]
		}
		out[i] = s / float64(min(i+1, win))
	}
	return out
}

// stat summarises values over seeds; NaN values (undefined on a seed)
// are left out, and a Stat of no value is NaN-free zeros.
func stat(xs []float64) Stat {
	var ok []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			ok = append(ok, x)
		}
	}
	if len(ok) == 0 {
		return Stat{}
	}
	sort.Float64s(ok)
	return Stat{Mean: round(mean(ok), 4), Min: round(ok[0], 4), Max: round(ok[len(ok)-1], 4)}
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	v := math.Round(x*p) / p
	if v == 0 {
		return 0 // no negative zero in the output
	}
	return v
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
