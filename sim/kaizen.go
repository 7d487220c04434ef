package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/BurntSushi/toml"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
	_ "github.com/kaizenhq/kaizen/store/sqlite" // the policies run the engine on throwaway SQLite stores
)

// KaizenOptions configures the kaizen policies.
type KaizenOptions struct {
	// Store is the engine's store: "memory" (default; kaizen's throwaway
	// store, Config.DB "memory") or "sqlite" (a SQLite file in the run's
	// temporary directory, with durable commits).
	Store string
	// Configure changes the engine's configuration after the simulator's
	// defaults (kaizen.DefaultConfig, a temporary home, the simulated
	// clock): future ranking options run as separate policies this way.
	Configure func(*kaizen.Config)
	// Reader turns guidance into advice (default ReadGuidance).
	Reader GuidanceReader
	// TempDir is where each run's engine home is created (default
	// os.TempDir()).
	TempDir string
	// Tags makes the agent tag each task with its family's name (in plan
	// requests and outcomes), as an agent that classifies its tasks would;
	// without it, only the task's description tells tasks apart.
	Tags bool
}

// Stores lists the valid KaizenOptions.Store values.
var Stores = []string{"memory", "sqlite"}

// Advice is guidance read as the world's strategy indexes.
type Advice struct {
	// Recommended strategies, best first.
	Recommended []int
	// Explore holds strategies the guidance suggests trying to learn more.
	Explore []int
	// Avoid holds anti-patterns and excluded (deprecated) strategies.
	Avoid []int
}

// PatternRef is a pattern as guidance names it.
type PatternRef struct {
	ID      string
	Content string
	Tags    []string
}

// GuidanceReader turns the engine's structured guidance into advice;
// resolve maps a pattern to the world's strategy index. It is the adapter
// point for new guidance fields.
type GuidanceReader func(g *learning.Guidance, resolve func(PatternRef) (int, bool)) Advice

// ReadGuidance is the default reader. When the guidance carries a
// "recommended" list (and an "explore" suggestion) it uses them; today's
// guidance has neither, and then Recommended is the ranked patterns in
// order. Avoid is the anti-patterns (by their source pattern) and the
// excluded patterns, plus an "avoid" list if the guidance has one.
//
// The future fields are read from the guidance's JSON, so that a new
// field is used without a change here; each element may be a string (a
// pattern id, content or strategy label) or an object with any of "id",
// "pattern_id", "content", "label", "key" and "tags".
func ReadGuidance(g *learning.Guidance, resolve func(PatternRef) (int, bool)) Advice {
	return readAdvice(g, futureFields(g), resolve)
}

func readAdvice(g *learning.Guidance, extra map[string][]PatternRef, resolve func(PatternRef) (int, bool)) Advice {
	var a Advice
	add := func(to *[]int, r PatternRef) {
		if i, ok := resolve(r); ok && !slices.Contains(*to, i) {
			*to = append(*to, i)
		}
	}
	if refs, ok := extra["recommended"]; ok {
		for _, r := range refs {
			add(&a.Recommended, r)
		}
	} else {
		for _, p := range g.Patterns {
			add(&a.Recommended, PatternRef{ID: p.ID, Content: p.Content, Tags: p.Tags})
		}
	}
	for _, r := range extra["explore"] {
		add(&a.Explore, r)
	}
	for _, x := range g.AntiPatterns {
		add(&a.Avoid, PatternRef{ID: x.SourceID})
	}
	for _, p := range g.Excluded {
		add(&a.Avoid, PatternRef{ID: p.ID, Content: p.Content, Tags: p.Tags})
	}
	for _, r := range extra["avoid"] {
		add(&a.Avoid, r)
	}
	return a
}

// futureFields reads "recommended", "explore" and "avoid" from the
// guidance's JSON when present.
func futureFields(g *learning.Guidance) map[string][]PatternRef {
	if !hasFutureFields(reflect.TypeOf(*g)) {
		return nil // today: skip the JSON round trip
	}
	data, err := json.Marshal(g)
	if err != nil {
		return nil
	}
	return fieldsFromJSON(data)
}

// hasFutureFields reports whether the guidance type has a JSON field
// "recommended", "explore" or "avoid" (at the top level).
func hasFutureFields(t reflect.Type) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "recommended" || name == "explore" || name == "avoid" {
			return true
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct && hasFutureFields(f.Type) {
			return true // an embedded struct's fields are at the top level in JSON
		}
	}
	return false
}

// fieldsFromJSON reads the future guidance fields from guidance JSON.
func fieldsFromJSON(data []byte) map[string][]PatternRef {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return nil
	}
	out := map[string][]PatternRef{}
	for _, key := range []string{"recommended", "explore", "avoid"} {
		raw, ok := top[key]
		if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			items = []json.RawMessage{raw} // a single suggestion
		}
		refs := []PatternRef{}
		for _, it := range items {
			if r, ok := refOf(it); ok {
				refs = append(refs, r)
			}
		}
		out[key] = refs
	}
	return out
}

func refOf(raw json.RawMessage) (PatternRef, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if strings.HasPrefix(s, "pattern-") || strings.HasPrefix(s, "anti-pattern-") {
			return PatternRef{ID: s}, true
		}
		return PatternRef{Content: s}, true
	}
	var o struct {
		ID        string   `json:"id"`
		PatternID string   `json:"pattern_id"`
		Content   string   `json:"content"`
		Label     string   `json:"label"`
		Key       string   `json:"key"`
		Tags      []string `json:"tags"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return PatternRef{}, false
	}
	r := PatternRef{ID: cmpOr(o.PatternID, o.ID), Content: cmpOr(o.Content, o.Key, o.Label), Tags: o.Tags}
	return r, r.ID != "" || r.Content != "" || len(r.Tags) > 0
}

func cmpOr(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// LearningOverrides parses "KEY=VALUE[+KEY=VALUE…]" into a configuration
// mutator that sets keys of the [learning] table, decoded like kaizen.toml
// (unknown keys are an error). A VALUE that is not a TOML value is taken
// as a string: ranking=thompson is ranking = "thompson".
func LearningOverrides(s string) (func(*kaizen.Config), error) {
	var doc strings.Builder
	doc.WriteString("[learning]\n")
	for _, kv := range strings.Split(s, "+") {
		key, value, ok := strings.Cut(kv, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" || value == "" {
			return nil, fmt.Errorf("%q: want KEY=VALUE (keys of [learning], e.g. anti_pattern.min_observations=5)", kv)
		}
		for _, part := range strings.Split(key, ".") {
			if part == "" || strings.IndexFunc(part, func(r rune) bool {
				return !(r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r))
			}) >= 0 {
				return nil, fmt.Errorf("%q is not a configuration key", key)
			}
		}
		var probe map[string]any
		if _, err := toml.Decode("v = "+value, &probe); err != nil {
			value = fmt.Sprintf("%q", value)
		}
		fmt.Fprintf(&doc, "%s = %s\n", key, value)
	}
	text := doc.String()
	check := kaizen.DefaultConfig()
	if err := decodeLearning(text, &check); err != nil {
		return nil, err
	}
	if err := check.Validate(); err != nil {
		return nil, err
	}
	return func(c *kaizen.Config) { _ = decodeLearning(text, c) }, nil
}

func decodeLearning(text string, c *kaizen.Config) error {
	md, err := toml.Decode(text, c)
	if err != nil {
		return err
	}
	if und := md.Undecoded(); len(und) > 0 {
		return fmt.Errorf("unknown key %q", und[0].String())
	}
	return nil
}

func chain(fs ...func(*kaizen.Config)) func(*kaizen.Config) {
	return func(c *kaizen.Config) {
		for _, f := range fs {
			if f != nil {
				f(c)
			}
		}
	}
}

// KaizenPolicy plans through the real engine. For each run it opens an
// engine (kaizen.Open) on a fresh store in a temporary home, with the
// simulated clock as Config.Now, project "sim".
//
// Every task: PlanGuidance with the task's description and bead id (and a
// limit that shows every strategy); the reader turns the guidance into
// advice; the choice is, in order, the first explore suggestion (one
// slot), then the recommended strategies best first, skipping what to
// avoid, then strategies drawn uniformly among those neither chosen nor
// to avoid (only when all are, among the rest). The outcome is recorded
// with RecordOutcome: bead id, duration, errors, retries, success, the
// chosen strategies as patterns (their labels, Chinese for a Chinese task)
// and a description of the plan naming them.
func KaizenPolicy(name string, opts KaizenOptions) PolicySpec {
	return PolicySpec{Name: name, New: func(ctx context.Context, env Env) (Policy, error) {
		return newKaizen(ctx, env, opts)
	}}
}

type kaizenPolicy struct {
	e       *kaizen.Engine
	dir     string
	w       *World
	rng     interface{ IntN(int) int }
	reader  GuidanceReader
	byID    map[string]int
	byKey   map[string]int // content keys of names and labels; strategy tag keys
	limit   int
	counts  [3]int // slots from explore, recommended, random fill
	antis   int    // strategies to avoid, summed over tasks
	plans   int
	timings map[string]time.Duration
	// tagTasks makes the agent tag tasks with their family (KaizenOptions.Tags).
	tagTasks bool
}

func newKaizen(ctx context.Context, env Env, opts KaizenOptions) (*kaizenPolicy, error) {
	store := cmpOr(opts.Store, "memory")
	if !slices.Contains(Stores, store) {
		return nil, &PolicyError{Spec: "kaizen", Message: fmt.Sprintf("unknown store %q (memory or sqlite)", store)}
	}
	dir, err := os.MkdirTemp(opts.TempDir, "kaizen-sim-")
	if err != nil {
		return nil, err
	}
	cfg := kaizen.DefaultConfig()
	cfg.Home = dir
	cfg.DB = "memory"
	if store == "sqlite" {
		cfg.DB = filepath.Join(dir, "kaizen.db")
	}
	cfg.Project = "sim"
	cfg.Now = env.Clock.Now
	if opts.Configure != nil {
		opts.Configure(&cfg)
	}
	t0 := time.Now()
	e, err := kaizen.Open(ctx, cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// Every kaizen variant fills from the same stream, the plain kaizen
	// policy's (the seed and the name "kaizen"), not from its own name's:
	// two variants that choose alike then fill alike, so a comparison of
	// settings is not moved by the fill's draws (common random numbers).
	p := &kaizenPolicy{e: e, dir: dir, w: env.World, rng: policyRand(env.Seed, "kaizen"), reader: opts.Reader, tagTasks: opts.Tags,
		byID: map[string]int{}, byKey: map[string]int{}, limit: max(10, len(env.World.Strategies)),
		timings: map[string]time.Duration{"open_close": time.Since(t0)}}
	if p.reader == nil {
		p.reader = ReadGuidance
	}
	for i, s := range env.World.Strategies {
		for _, k := range []string{s.Name, s.Label, s.LabelZH} {
			p.byKey[learning.ContentKey(k)] = i
		}
		if st, ok := learning.StrategyByLabel(s.Name); ok {
			p.byKey["tag:"+st.Tag()] = i
		}
	}
	return p, nil
}

func (p *kaizenPolicy) resolve(r PatternRef) (int, bool) {
	if i, ok := p.byID[r.ID]; ok && r.ID != "" {
		return i, true
	}
	for _, t := range r.Tags {
		if i, ok := p.byKey["tag:"+t]; ok {
			p.learn(r.ID, i)
			return i, true
		}
	}
	if i, ok := p.byKey[learning.ContentKey(r.Content)]; ok && r.Content != "" {
		p.learn(r.ID, i)
		return i, true
	}
	return 0, false
}

func (p *kaizenPolicy) learn(id string, i int) {
	if id != "" {
		p.byID[id] = i
	}
}

func (p *kaizenPolicy) Choose(ctx context.Context, t Task) ([]int, error) {
	t0 := time.Now()
	g, err := p.e.PlanGuidance(ctx, kaizen.PlanInput{Task: t.Description, TaskID: t.ID, Limit: p.limit, Tags: p.tags(t)})
	p.timings["plan_guidance"] += time.Since(t0)
	if err != nil {
		return nil, fmt.Errorf("plan guidance for task %d: %w", t.Number, err)
	}
	t0 = time.Now()
	adv := p.reader(g, p.resolve)
	p.timings["read_guidance"] += time.Since(t0)
	return p.choose(adv, t.K), nil
}

// choose applies the exploitation rule (see KaizenPolicy).
func (p *kaizenPolicy) choose(adv Advice, k int) []int {
	avoid := map[int]bool{}
	for _, s := range adv.Avoid {
		avoid[s] = true
	}
	p.antis += len(avoid)
	p.plans++
	var out []int
	take := func(from []int, limit, slot int) {
		for _, s := range from {
			if len(out) >= limit {
				return
			}
			if !avoid[s] && !slices.Contains(out, s) {
				out = append(out, s)
				p.counts[slot]++
			}
		}
	}
	take(adv.Explore, min(1, k), 0)
	take(adv.Recommended, k, 1)
	n := len(p.w.Strategies)
	var free, rest []int
	for s := range n {
		switch {
		case slices.Contains(out, s):
		case avoid[s]:
			rest = append(rest, s)
		default:
			free = append(free, s)
		}
	}
	for _, pool := range [][]int{free, rest} {
		for len(out) < k && len(pool) > 0 {
			j := p.rng.IntN(len(pool))
			out = append(out, pool[j])
			p.counts[2]++
			pool = slices.Delete(pool, j, j+1)
		}
	}
	return out
}

func (p *kaizenPolicy) Observe(ctx context.Context, t Task, choice []int, r Result) error {
	zh := isChinese(t.Description)
	labels := make([]string, len(choice))
	for i, s := range choice {
		labels[i] = p.w.Strategies[s].Label
		if zh {
			labels[i] = p.w.Strategies[s].LabelZH
		}
	}
	in := kaizen.OutcomeInput{TaskID: t.ID, DurationMs: &r.DurationMs, ErrorCount: &r.Errors,
		RetryCount: &r.Retries, Success: &r.Success, Patterns: labels, Description: planText(t.Description, labels, zh),
		Task: t.Description, Tags: p.tags(t)}
	t0 := time.Now()
	res, err := p.e.RecordOutcome(ctx, in)
	p.timings["record_outcome"] += time.Since(t0)
	if err != nil {
		return fmt.Errorf("record outcome of task %d: %w", t.Number, err)
	}
	for _, u := range res.Patterns {
		p.resolve(PatternRef{ID: u.ID, Content: u.Content})
	}
	return nil
}

// tags are the task's tags: its family's name when the agent tags tasks.
func (p *kaizenPolicy) tags(t Task) []string {
	if !p.tagTasks {
		return nil
	}
	return []string{t.FamilyName}
}

// planText is how the agent describes its decomposition: the task and the
// strategies by label.
func planText(task string, labels []string, zh bool) string {
	if zh {
		return strings.TrimRight(task, "。.") + "。计划:" + strings.Join(labels, ";") + "。"
	}
	return strings.TrimRight(task, ".") + ". Plan: " + strings.Join(labels, "; ") + "."
}

func isChinese(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0
}

// Stats reports the kaizen policy's share of slots filled from guidance.
func (p *kaizenPolicy) Stats() map[string]float64 {
	total := float64(p.counts[0] + p.counts[1] + p.counts[2])
	if total == 0 {
		return nil
	}
	return map[string]float64{
		"slots_recommended": float64(p.counts[1]) / total,
		"slots_explore":     float64(p.counts[0]) / total,
		"slots_random":      float64(p.counts[2]) / total,
		"avoided_per_task":  float64(p.antis) / float64(max(p.plans, 1)),
	}
}

// Timings reports the time spent in the engine.
func (p *kaizenPolicy) Timings() map[string]time.Duration { return p.timings }

// Engine exposes the run's engine (tests inspect what was recorded).
func (p *kaizenPolicy) Engine() *kaizen.Engine { return p.e }

// Close closes the engine and removes its home.
func (p *kaizenPolicy) Close() error {
	t0 := time.Now()
	err := p.e.Close()
	p.timings["open_close"] += time.Since(t0)
	if rerr := os.RemoveAll(p.dir); err == nil {
		err = rerr
	}
	return err
}
