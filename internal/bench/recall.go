package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
)

// ExperienceSpec describes an experience store to generate: heuristics
// and captured memories with their full-text documents and vectors.
type ExperienceSpec struct {
	Project    string
	Heuristics int
	Memories   int
	Now        time.Time
	Seed       uint64
}

// Vocabulary of the generated texts: coding-agent situations in English
// and Chinese, so that full text and vectors see realistic overlap.
var (
	benchSubjects = []string{"generated files", "database migrations", "the HTTP client", "flaky tests", "the CI pipeline",
		"dependency upgrades", "config loading", "error handling", "the login flow", "the cache layer", "API pagination",
		"date parsing", "file permissions", "the build script", "logging", "retries", "timeouts", "feature flags",
		"生成的文件", "数据库迁移", "接口分页", "缓存", "日志", "超时重试", "配置加载", "单元测试"}
	benchActions = []string{"edit", "refactor", "upgrade", "debug", "rename", "delete", "test", "document", "deploy", "review",
		"修改", "重构", "升级", "调试", "删除"}
	benchRules = []string{"run the full test suite before finishing", "ask which environment is affected",
		"change the template and regenerate instead", "pin the version and read the changelog first",
		"check the error message for the exact path", "keep the public API unchanged", "add a regression test first",
		"先运行完整测试", "先确认影响的环境", "修改模板后重新生成", "先阅读变更日志"}
)

func benchSentence(rng *rand.Rand, i int) (subject, action, rule string) {
	return benchSubjects[rng.IntN(len(benchSubjects))], benchActions[rng.IntN(len(benchActions))],
		fmt.Sprintf("%s (case %d)", benchRules[rng.IntN(len(benchRules))], i%997)
}

// PopulateExperience writes heuristics and memories directly through the
// store, with the engine's embedder, as capturing and extraction would
// leave them (without the merge step).
func PopulateExperience(ctx context.Context, e *kaizen.Engine, spec ExperienceSpec, progress func(done, total int)) error {
	rng := rand.New(rand.NewPCG(spec.Seed, 11))
	emb := e.Embedder()
	const chunk = 2000
	total := spec.Heuristics + spec.Memories
	done := 0
	kinds := []experience.HeuristicKind{experience.KindAvoid, experience.KindPrefer, experience.KindVerify, experience.KindClarify}
	statuses := []experience.HeuristicStatus{experience.StatusCandidate, experience.StatusActive, experience.StatusRefined,
		experience.StatusStale}
	for start := 0; start < total; start += chunk {
		end := min(total, start+chunk)
		texts := make([]string, 0, end-start)
		type item struct {
			h experience.Heuristic
			t experience.Turn
		}
		items := make([]item, 0, end-start)
		for i := start; i < end; i++ {
			subject, action, rule := benchSentence(rng, i)
			if i < spec.Heuristics {
				h := experience.Heuristic{ID: fmt.Sprintf("heur-bench-%07d", i), Project: spec.Project,
					Kind: kinds[rng.IntN(len(kinds))], Trigger: "when asked to " + action + " " + subject, Rule: rule,
					Why: "a past task failed on " + subject, Status: statuses[rng.IntN(len(statuses))],
					SupportTasks: int64(1 + rng.IntN(6)), EvidenceCount: int64(1 + rng.IntN(8)),
					CreatedAt: spec.Now, UpdatedAt: spec.Now}
				items = append(items, item{h: h})
				texts = append(texts, experience.HeuristicText(h.Kind, h.Trigger, h.Rule))
				continue
			}
			t := experience.Turn{ID: fmt.Sprintf("turn-bench-%07d", i), Project: spec.Project,
				TaskID: fmt.Sprintf("bd-bench-%d", i/8), Role: experience.RoleUser,
				Content: fmt.Sprintf("Please %s %s; last time we had to %s. Ticket %d.", action, subject, rule, i),
				Source:  "bench", Time: spec.Now.Add(-time.Duration(i) * time.Second)}
			items = append(items, item{t: t})
			texts = append(texts, t.Content)
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			return err
		}
		err = e.Store().Update(ctx, func(tx store.Tx) error {
			for j, it := range items {
				kind, id := experience.ItemHeuristic, it.h.ID
				if it.h.ID != "" {
					if _, err := tx.InsertHeuristic(ctx, it.h); err != nil {
						return err
					}
				} else {
					kind, id = experience.ItemMemory, it.t.ID
					if _, err := tx.InsertTurn(ctx, it.t); err != nil {
						return err
					}
				}
				if err := tx.PutSearchDoc(ctx, spec.Project, kind, id, experience.SearchText(texts[j])); err != nil {
					return err
				}
				if err := tx.PutEmbedding(ctx, store.Embedding{Project: spec.Project, Kind: kind, RefID: id,
					Embedder: emb.ID(), Dim: len(vecs[j]), Vector: vecs[j], UpdatedAt: spec.Now}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("populate experience: %w", err)
		}
		done += end - start
		if progress != nil {
			progress(done, total)
		}
	}
	return nil
}

// RecallResult is the outcome of a recall run.
type RecallResult struct {
	// Cold is the first recall (vector indexes loaded from the store).
	Cold time.Duration `json:"cold"`
	// Warm summarises the following recalls (each stored as a recall event).
	Warm Latencies `json:"warm"`
	// Injected is the mean number of items injected per recall.
	Injected float64 `json:"mean_injected"`
}

// Recall measures recall latency over n sequential recalls with varied
// queries; the first (cold) call is reported apart.
func Recall(ctx context.Context, e *kaizen.Engine, project string, n int) (RecallResult, error) {
	rng := rand.New(rand.NewPCG(5, 6))
	var res RecallResult
	ds := make([]time.Duration, 0, n)
	injected := 0
	for i := 0; i <= n; i++ {
		subject, action, _ := benchSentence(rng, i)
		q := fmt.Sprintf("I need to %s %s without breaking the build", action, subject)
		t0 := time.Now()
		r, err := e.Recall(ctx, kaizen.RecallInput{Project: project, Query: q})
		if err != nil {
			return res, err
		}
		d := time.Since(t0)
		if i == 0 {
			res.Cold = d
			continue
		}
		ds = append(ds, d)
		injected += len(r.Heuristics) + len(r.Skills)
		for _, it := range r.Items {
			if it.Injected && it.Kind == experience.ItemMemory {
				injected++
			}
		}
	}
	res.Warm = Summarise(ds)
	res.Injected = float64(injected) / float64(max(1, n))
	return res, nil
}

// MergeResult is the outcome of an insertion-with-dedup run.
type MergeResult struct {
	Experiences int            `json:"experiences"`
	Candidates  int            `json:"candidates"`
	Latency     Latencies      `json:"latency_per_experience"`
	Actions     map[string]int `json:"actions"`
}

// Merge submits n task experiences of three lessons each through the
// agent-as-extractor path (dedup against every stored heuristic) and
// measures the latency of each.
func Merge(ctx context.Context, e *kaizen.Engine, project string, n int) (MergeResult, error) {
	rng := rand.New(rand.NewPCG(8, 9))
	res := MergeResult{Actions: map[string]int{}}
	ds := make([]time.Duration, 0, n)
	for i := range n {
		var hs []map[string]string
		for j := range 3 {
			subject, action, rule := benchSentence(rng, rng.IntN(5000))
			hs = append(hs, map[string]string{"kind": "avoid", "trigger": "when asked to " + action + " " + subject,
				"rule": rule, "why": "bench", "evidence": fmt.Sprintf("bench evidence %d.%d", i, j)})
		}
		raw, err := json.Marshal(map[string]any{"goal": fmt.Sprintf("bench task %d", i), "transferable_heuristics": hs})
		if err != nil {
			return res, err
		}
		t0 := time.Now()
		out, err := e.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{Project: project,
			TaskID: fmt.Sprintf("bd-merge-%d-%d", time.Now().UnixNano(), i), Kind: "experience", Result: raw})
		if err != nil {
			return res, err
		}
		ds = append(ds, time.Since(t0))
		for _, h := range out.Experience.Heuristics {
			res.Actions[string(h.Action)]++
			res.Candidates++
		}
		res.Experiences++
	}
	res.Latency = Summarise(ds)
	return res, nil
}
