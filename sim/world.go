package sim

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/kaizenhq/kaizen/learning"
)

// Combine is how the hidden rates of the strategies a task uses make the
// task's success probability.
type Combine string

// The ways rates combine.
const (
	// CombineProduct: every chosen strategy must work, independently
	// (one uniform draw per strategy); P = ∏ p.
	CombineProduct Combine = "product"
	// CombineMin: the weakest strategy decides (one draw per task); P = min p.
	CombineMin Combine = "min"
	// CombineMean: strategies compensate for each other (one draw per
	// task); P = mean p.
	CombineMean Combine = "mean"
)

// Combines lists the valid Combine values.
var Combines = []Combine{CombineProduct, CombineMin, CombineMean}

// Of combines rates.
func (c Combine) Of(rates []float64) float64 {
	if len(rates) == 0 {
		return 0
	}
	switch c {
	case CombineMin:
		return slices.Min(rates)
	case CombineMean:
		s := 0.0
		for _, r := range rates {
			s += r
		}
		return s / float64(len(rates))
	default:
		p := 1.0
		for _, r := range rates {
			p *= r
		}
		return p
	}
}

// World is a validated simulation world. Build one with ParseWorld,
// Builtin or Generate; its fields are resolved (defaults applied,
// strategy names mapped to indexes).
type World struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Tasks is the number of tasks of a run.
	Tasks int `json:"tasks"`
	// K is the number of strategies every task uses.
	K       int     `json:"strategies_per_task"`
	Combine Combine `json:"combine"`
	// Noise is the standard deviation of a per-task shift of the success
	// probability (task difficulty), zero-mean, drawn once per task.
	Noise float64 `json:"noise"`
	// MinutesPerTask bounds the simulated time from one task's start to
	// the next (uniform).
	MinutesPerTask [2]float64 `json:"minutes_per_task"`
	// Start is the simulated time of the first task.
	Start      time.Time    `json:"start"`
	Strategies []Strategy   `json:"strategies"`
	Families   []Family     `json:"families"`
	Drifts     []Drift      `json:"drifts"`
	Outcome    OutcomeModel `json:"outcome"`
}

// Strategy is a decomposition strategy of a world.
type Strategy struct {
	// Name is the world's name for it: the seed strategy's key for the
	// twelve strategies of seed 000, else the name as written.
	Name string `json:"name"`
	// Label and LabelZH are how an agent names it in English and Chinese
	// (the seed's labels; a custom strategy's name in both).
	Label   string `json:"label"`
	LabelZH string `json:"label_zh"`
}

// Family is a family of similar tasks with its hidden rates.
type Family struct {
	Name string `json:"name"`
	// Weight is the family's relative frequency.
	Weight       float64  `json:"weight"`
	Descriptions []string `json:"descriptions"`
	// Rates is the hidden success rate of each strategy (by index) before
	// any drift.
	Rates []float64 `json:"rates"`
}

// Drift changes hidden rates from task At (1-based) on.
type Drift struct {
	At   int    `json:"at"`
	Note string `json:"note,omitempty"`
	// Families are the family indexes it applies to.
	Families []int `json:"families"`
	// Changes are the new rates.
	Changes []RateChange `json:"changes"`
}

// RateChange sets one strategy's rate.
type RateChange struct {
	Strategy int     `json:"strategy"`
	Rate     float64 `json:"rate"`
}

// OutcomeModel draws what an agent reports besides success: a successful
// and a failing task have their own duration, error and retry models.
type OutcomeModel struct {
	Success OutcomeShape `json:"success"`
	Failure OutcomeShape `json:"failure"`
}

// OutcomeShape is the duration (log-normal: median and spread, the
// standard deviation of its logarithm) and the mean errors and retries
// (Poisson) of one kind of outcome.
type OutcomeShape struct {
	DurationMinutes float64 `json:"duration_minutes"`
	DurationSpread  float64 `json:"duration_spread"`
	Errors          float64 `json:"errors"`
	Retries         float64 `json:"retries"`
}

// DefaultOutcome is the outcome model of worlds that give none: a success
// takes about 20 minutes with few errors and retries, a failure about 35
// minutes with two errors and most often a retry. kaizen's implicit
// scoring then rates nearly every success helpful and about 80 % of the
// failures harmful, the rest neutral.
var DefaultOutcome = OutcomeModel{
	Success: OutcomeShape{DurationMinutes: 20, DurationSpread: 0.8, Errors: 0.8, Retries: 0.3},
	Failure: OutcomeShape{DurationMinutes: 35, DurationSpread: 0.8, Errors: 2, Retries: 0.8},
}

// DefaultStart is the simulated time of the first task when a world
// gives none (a Monday morning).
var DefaultStart = time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)

// Limits of a world.
const (
	MaxTasks      = 100_000
	MaxStrategies = 64
	MaxFamilies   = 64
	maxDescs      = 256
	maxTextLen    = 1000
)

// WorldError is an invalid world: its source, the TOML key at fault and
// what is wrong.
type WorldError struct {
	Source  string
	Key     string
	Message string
	Err     error
}

// Error renders "world SOURCE: KEY: message".
func (e *WorldError) Error() string {
	var b strings.Builder
	b.WriteString("world")
	if e.Source != "" {
		b.WriteString(" " + e.Source)
	}
	if e.Key != "" {
		b.WriteString(": " + e.Key)
	}
	b.WriteString(": " + e.Message)
	return b.String()
}

// Unwrap returns the decoder error, if any.
func (e *WorldError) Unwrap() error { return e.Err }

// worldFile is the TOML shape; pointers tell absent from zero.
type worldFile struct {
	Name           string             `toml:"name"`
	Description    string             `toml:"description"`
	Tasks          *int               `toml:"tasks"`
	K              *int               `toml:"strategies_per_task"`
	Combine        *string            `toml:"combine"`
	Noise          *float64           `toml:"noise"`
	MinutesPerTask []float64          `toml:"minutes_per_task"`
	Start          *time.Time         `toml:"start"`
	Strategies     []string           `toml:"strategies"`
	DefaultRate    *float64           `toml:"default_rate"`
	Rates          map[string]float64 `toml:"rates"`
	Outcome        *struct {
		Success *shapeFile `toml:"success"`
		Failure *shapeFile `toml:"failure"`
	} `toml:"outcome"`
	Families []familyFile `toml:"family"`
	Drifts   []driftFile  `toml:"drift"`
}

type shapeFile struct {
	DurationMinutes *float64 `toml:"duration_minutes"`
	DurationSpread  *float64 `toml:"duration_spread"`
	Errors          *float64 `toml:"errors"`
	Retries         *float64 `toml:"retries"`
}

type familyFile struct {
	Name         string             `toml:"name"`
	Weight       *float64           `toml:"weight"`
	DefaultRate  *float64           `toml:"default_rate"`
	Descriptions []string           `toml:"descriptions"`
	Rates        map[string]float64 `toml:"rates"`
}

type driftFile struct {
	At       int                `toml:"at"`
	Note     string             `toml:"note"`
	Families []string           `toml:"families"`
	Rates    map[string]float64 `toml:"rates"`
}

// ParseWorld reads a world from TOML. source names it in errors (a file
// name or a built-in name). Unknown keys, wrong types and invalid values
// are *WorldError.
func ParseWorld(source string, data []byte) (*World, error) {
	fail := func(key, format string, a ...any) error {
		return &WorldError{Source: source, Key: key, Message: fmt.Sprintf(format, a...)}
	}
	if !utf8.Valid(data) {
		return nil, fail("", "is not valid UTF-8")
	}
	var f worldFile
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &WorldError{Source: source, Message: fmt.Sprintf("line %d: %s", pe.Position.Line, pe.Message), Err: err}
		}
		return nil, &WorldError{Source: source, Message: err.Error(), Err: err}
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fail(und[0].String(), "unknown key")
	}
	w := &World{Name: f.Name, Description: strings.Join(strings.Fields(f.Description), " "), Tasks: 500, K: 2,
		Combine: CombineMean, Noise: 0.05, MinutesPerTask: [2]float64{30, 120},
		Start: DefaultStart, Outcome: DefaultOutcome}
	if f.Tasks != nil {
		w.Tasks = *f.Tasks
	}
	if f.K != nil {
		w.K = *f.K
	}
	if f.Combine != nil {
		w.Combine = Combine(*f.Combine)
	}
	if f.Noise != nil {
		w.Noise = *f.Noise
	}
	if f.MinutesPerTask != nil {
		if len(f.MinutesPerTask) != 2 {
			return nil, fail("minutes_per_task", "must be [min, max], got %d numbers", len(f.MinutesPerTask))
		}
		w.MinutesPerTask = [2]float64{f.MinutesPerTask[0], f.MinutesPerTask[1]}
	}
	if f.Start != nil {
		w.Start = f.Start.UTC()
	}

	// Strategies.
	names := f.Strategies
	if names == nil {
		for _, s := range learning.Strategies {
			names = append(names, s.Key)
		}
	}
	if len(names) == 0 || len(names) > MaxStrategies {
		return nil, fail("strategies", "must list 1 to %d strategies, got %d", MaxStrategies, len(names))
	}
	index := map[string]int{}
	for i, n := range names {
		s, err := strategyOf(n)
		if err != nil {
			return nil, fail(fmt.Sprintf("strategies[%d]", i), "%v", err)
		}
		key := learning.ContentKey(s.Name)
		if j, dup := index[key]; dup {
			return nil, fail(fmt.Sprintf("strategies[%d]", i), "%q repeats strategies[%d]", n, j)
		}
		// Every way a world file may name the strategy.
		for _, k := range []string{key, learning.ContentKey(s.Label), learning.ContentKey(s.LabelZH)} {
			index[k] = i
		}
		w.Strategies = append(w.Strategies, s)
	}
	lookup := func(key, name string) (int, error) {
		if i, ok := index[learning.ContentKey(name)]; ok {
			return i, nil
		}
		return 0, fail(key, "unknown strategy %q (the world's strategies: %s)", name, strings.Join(w.strategyNames(), ", "))
	}
	rate := func(key string, v float64) error {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return fail(key, "must be a rate in [0, 1], got %v", v)
		}
		return nil
	}

	base := 0.5
	if f.DefaultRate != nil {
		if err := rate("default_rate", *f.DefaultRate); err != nil {
			return nil, err
		}
		base = *f.DefaultRate
	}
	// Precedence of a (family, strategy) rate: the family's rates, the
	// world's rates, the family's default_rate, the world's default_rate.
	global := map[int]float64{}
	for _, name := range sortedKeys(f.Rates) {
		i, err := lookup("rates."+name, name)
		if err != nil {
			return nil, err
		}
		if err := rate("rates."+name, f.Rates[name]); err != nil {
			return nil, err
		}
		global[i] = f.Rates[name]
	}

	// Families.
	if len(f.Families) == 0 || len(f.Families) > MaxFamilies {
		return nil, fail("family", "must define 1 to %d [[family]] tables, got %d", MaxFamilies, len(f.Families))
	}
	famIndex := map[string]int{}
	for fi, ff := range f.Families {
		key := fmt.Sprintf("family[%d]", fi)
		if err := checkText(ff.Name, false); err != nil {
			return nil, fail(key+".name", "%v", err)
		}
		if j, dup := famIndex[ff.Name]; dup {
			return nil, fail(key+".name", "%q repeats family[%d]", ff.Name, j)
		}
		famIndex[ff.Name] = fi
		fam := Family{Name: ff.Name, Weight: 1, Rates: make([]float64, len(w.Strategies))}
		if ff.Weight != nil {
			if v := *ff.Weight; math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				return nil, fail(key+".weight", "must be a finite number > 0, got %v", v)
			}
			fam.Weight = *ff.Weight
		}
		def := base
		if ff.DefaultRate != nil {
			if err := rate(key+".default_rate", *ff.DefaultRate); err != nil {
				return nil, err
			}
			def = *ff.DefaultRate
		}
		for i := range fam.Rates {
			fam.Rates[i] = def
			if r, ok := global[i]; ok {
				fam.Rates[i] = r
			}
		}
		for _, name := range sortedKeys(ff.Rates) {
			k := key + ".rates." + name
			i, err := lookup(k, name)
			if err != nil {
				return nil, err
			}
			if err := rate(k, ff.Rates[name]); err != nil {
				return nil, err
			}
			fam.Rates[i] = ff.Rates[name]
		}
		if len(ff.Descriptions) == 0 || len(ff.Descriptions) > maxDescs {
			return nil, fail(key+".descriptions", "must list 1 to %d task descriptions, got %d", maxDescs, len(ff.Descriptions))
		}
		for di, d := range ff.Descriptions {
			if err := checkText(d, false); err != nil {
				return nil, fail(fmt.Sprintf("%s.descriptions[%d]", key, di), "%v", err)
			}
			fam.Descriptions = append(fam.Descriptions, strings.TrimSpace(d))
		}
		w.Families = append(w.Families, fam)
	}

	// Drifts.
	for di, df := range f.Drifts {
		key := fmt.Sprintf("drift[%d]", di)
		d := Drift{At: df.At, Note: strings.TrimSpace(df.Note)}
		if len(df.Families) == 0 {
			for i := range w.Families {
				d.Families = append(d.Families, i)
			}
		}
		for _, name := range df.Families {
			i, ok := famIndex[name]
			if !ok {
				return nil, fail(key+".families", "unknown family %q (the world's families: %s)", name, strings.Join(w.familyNames(), ", "))
			}
			if slices.Contains(d.Families, i) {
				return nil, fail(key+".families", "family %q is listed twice", name)
			}
			d.Families = append(d.Families, i)
		}
		if len(df.Rates) == 0 {
			return nil, fail(key+".rates", "must change at least one rate")
		}
		for _, name := range sortedKeys(df.Rates) {
			k := key + ".rates." + name
			i, err := lookup(k, name)
			if err != nil {
				return nil, err
			}
			if err := rate(k, df.Rates[name]); err != nil {
				return nil, err
			}
			d.Changes = append(d.Changes, RateChange{Strategy: i, Rate: df.Rates[name]})
		}
		w.Drifts = append(w.Drifts, d)
	}

	if f.Outcome != nil {
		for _, x := range []struct {
			key string
			in  *shapeFile
			out *OutcomeShape
		}{{"outcome.success", f.Outcome.Success, &w.Outcome.Success}, {"outcome.failure", f.Outcome.Failure, &w.Outcome.Failure}} {
			if x.in == nil {
				continue
			}
			for _, v := range []struct {
				key string
				in  *float64
				out *float64
			}{{"duration_minutes", x.in.DurationMinutes, &x.out.DurationMinutes}, {"duration_spread", x.in.DurationSpread, &x.out.DurationSpread},
				{"errors", x.in.Errors, &x.out.Errors}, {"retries", x.in.Retries, &x.out.Retries}} {
				if v.in != nil {
					*v.out = *v.in
				}
			}
		}
	}
	if err := w.Validate(); err != nil {
		if we, ok := err.(*WorldError); ok {
			we.Source = source
		}
		return nil, err
	}
	return w, nil
}

// Validate checks a world's values (ParseWorld calls it; call it after
// changing a World by hand).
func (w *World) Validate() error {
	fail := func(key, format string, a ...any) error {
		return &WorldError{Source: w.Name, Key: key, Message: fmt.Sprintf(format, a...)}
	}
	if err := checkText(w.Name, false); err != nil {
		return fail("name", "%v", err)
	}
	if strings.ContainsAny(w.Name, " \t:/\\") {
		return fail("name", "%q must be one word (letters, digits, - and _)", w.Name)
	}
	if len(w.Description) > 4*maxTextLen {
		return fail("description", "is longer than %d bytes", 4*maxTextLen)
	}
	if w.Tasks < 1 || w.Tasks > MaxTasks {
		return fail("tasks", "must be between 1 and %d, got %d", MaxTasks, w.Tasks)
	}
	if len(w.Strategies) == 0 || len(w.Strategies) > MaxStrategies {
		return fail("strategies", "must list 1 to %d strategies, got %d", MaxStrategies, len(w.Strategies))
	}
	if w.K < 1 || w.K > len(w.Strategies) {
		return fail("strategies_per_task", "must be between 1 and the number of strategies (%d), got %d", len(w.Strategies), w.K)
	}
	if !slices.Contains(Combines, w.Combine) {
		return fail("combine", "unknown rule %q (one of product, min, mean)", w.Combine)
	}
	if math.IsNaN(w.Noise) || w.Noise < 0 || w.Noise > 0.5 {
		return fail("noise", "must be between 0 and 0.5, got %v", w.Noise)
	}
	lo, hi := w.MinutesPerTask[0], w.MinutesPerTask[1]
	if math.IsNaN(lo) || math.IsNaN(hi) || lo < 1 || hi < lo || hi > 7*24*60 {
		return fail("minutes_per_task", "must be [min, max] with 1 <= min <= max <= 10080 (a week), got [%v, %v]", lo, hi)
	}
	if w.Start.IsZero() || w.Start.Year() < 2000 || w.Start.Year() > 2200 {
		return fail("start", "must be a date between 2000 and 2200, got %v", w.Start)
	}
	if len(w.Families) == 0 || len(w.Families) > MaxFamilies {
		return fail("family", "must define 1 to %d families, got %d", MaxFamilies, len(w.Families))
	}
	for i, f := range w.Families {
		if len(f.Rates) != len(w.Strategies) {
			return fail(fmt.Sprintf("family[%d].rates", i), "has %d rates for %d strategies", len(f.Rates), len(w.Strategies))
		}
		if len(f.Descriptions) == 0 {
			return fail(fmt.Sprintf("family[%d].descriptions", i), "must list at least one task description")
		}
	}
	prev := 1
	for i, d := range w.Drifts {
		key := fmt.Sprintf("drift[%d].at", i)
		switch {
		case d.At < 2 || d.At > w.Tasks:
			return fail(key, "must be a task number between 2 and tasks (%d), got %d", w.Tasks, d.At)
		case d.At <= prev:
			return fail(key, "must be after the previous drift (task %d), got %d: list drifts in task order", prev, d.At)
		}
		prev = d.At
		for _, c := range d.Changes {
			if c.Strategy < 0 || c.Strategy >= len(w.Strategies) {
				return fail(fmt.Sprintf("drift[%d].rates", i), "strategy index %d out of range", c.Strategy)
			}
		}
		for _, f := range d.Families {
			if f < 0 || f >= len(w.Families) {
				return fail(fmt.Sprintf("drift[%d].families", i), "family index %d out of range", f)
			}
		}
	}
	for _, x := range []struct {
		key string
		s   OutcomeShape
	}{{"outcome.success", w.Outcome.Success}, {"outcome.failure", w.Outcome.Failure}} {
		switch s := x.s; {
		case !finite(s.DurationMinutes) || s.DurationMinutes <= 0 || s.DurationMinutes > 24*60:
			return fail(x.key+".duration_minutes", "must be in (0, 1440], got %v", s.DurationMinutes)
		case !finite(s.DurationSpread) || s.DurationSpread < 0 || s.DurationSpread > 3:
			return fail(x.key+".duration_spread", "must be in [0, 3], got %v", s.DurationSpread)
		case !finite(s.Errors) || s.Errors < 0 || s.Errors > 100:
			return fail(x.key+".errors", "must be a mean in [0, 100], got %v", s.Errors)
		case !finite(s.Retries) || s.Retries < 0 || s.Retries > 100:
			return fail(x.key+".retries", "must be a mean in [0, 100], got %v", s.Retries)
		}
	}
	return nil
}

// WithTasks returns a copy of the world with another number of tasks,
// validated (a drift after the last task is an error).
func (w *World) WithTasks(n int) (*World, error) {
	c := *w
	c.Tasks = n
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// RatesAt returns the hidden rates of a family at task number t
// (1-based), drifts applied. The slice is new.
func (w *World) RatesAt(family, t int) []float64 {
	r := slices.Clone(w.Families[family].Rates)
	for _, d := range w.Drifts {
		if d.At > t {
			break
		}
		if slices.Contains(d.Families, family) {
			for _, c := range d.Changes {
				r[c.Strategy] = c.Rate
			}
		}
	}
	return r
}

// DriftTasks returns the task numbers of the drifts.
func (w *World) DriftTasks() []int {
	out := make([]int, len(w.Drifts))
	for i, d := range w.Drifts {
		out[i] = d.At
	}
	return out
}

func (w *World) strategyNames() []string {
	out := make([]string, len(w.Strategies))
	for i, s := range w.Strategies {
		out[i] = s.Name
	}
	return out
}

func (w *World) familyNames() []string {
	out := make([]string, len(w.Families))
	for i, f := range w.Families {
		out[i] = f.Name
	}
	return out
}

// strategyOf resolves a strategy name: one of the seed's twelve (by key
// or label, English or Chinese) or a custom name.
func strategyOf(name string) (Strategy, error) {
	if err := checkText(name, false); err != nil {
		return Strategy{}, err
	}
	name = strings.TrimSpace(name)
	if st, ok := learning.StrategyByLabel(name); ok {
		return Strategy{Name: st.Key, Label: st.Label, LabelZH: st.LabelZH}, nil
	}
	if strings.HasPrefix(name, "pattern-") || strings.HasPrefix(name, "anti-pattern-") {
		return Strategy{}, fmt.Errorf("%q looks like a pattern id: name the strategy by what it does", name)
	}
	if len(name) > 200 {
		return Strategy{}, fmt.Errorf("strategy name is longer than 200 bytes")
	}
	return Strategy{Name: name, Label: name, LabelZH: name}, nil
}

// checkText accepts a non-empty single-line text of reasonable length.
func checkText(s string, multiline bool) error {
	switch {
	case strings.TrimSpace(s) == "":
		return errors.New("must not be empty")
	case len(s) > maxTextLen:
		return fmt.Errorf("is longer than %d bytes", maxTextLen)
	case !multiline && strings.ContainsAny(s, "\n\r"):
		return errors.New("must be a single line")
	case strings.ContainsRune(s, 0):
		return errors.New("must not contain NUL")
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
