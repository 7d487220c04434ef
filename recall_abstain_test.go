package kaizen_test

import (
	"encoding/json"
	"testing"

	"github.com/kaizenhq/kaizen"
)

// TestRecallAbstainsAndCrossesLanguages: with the offline embedder's
// calibrated abstention, a question no lesson answers injects nothing and
// says so; a Chinese query recalls the English lesson it is about and an
// English query the Chinese one.
func TestRecallAbstainsAndCrossesLanguages(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		lessons := map[string][3]string{
			"timeout": {"prefer", "when calling another service over the network", "set a timeout on every request instead of waiting forever"},
			"money":   {"prefer", "处理金额计算时", "用整数分或十进制类型，不要用浮点数"},
			"docker":  {"verify", "after changing a Dockerfile", "build the image locally and run the container once before pushing"},
		}
		ids := map[string]string{}
		for key, l := range lessons {
			doc, _ := json.Marshal(map[string]any{"goal": "a past task", "transferable_heuristics": []map[string]string{
				{"kind": l[0], "trigger": l[1], "rule": l[2], "why": "it went wrong before", "evidence": "task " + key}}})
			ids[key] = submit(t, b, "task-"+key, doc).Heuristics[0].HeuristicID
		}
		for _, tc := range []struct{ query, want string }{
			{"调用其他服务的网络请求时，给每个请求设置超时，不要无限等待", "timeout"},
			{"use integer cents or a decimal type for money amounts, never float", "money"},
			{"how do I center a div vertically with flexbox", ""},
		} {
			rec, err := b.e.Recall(ctx, kaizen.RecallInput{Query: tc.query, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(rec.Heuristics) != 0 || rec.Text != "" || (len(rec.Items) > 0 && !rec.Abstained) {
					t.Errorf("%q: want nothing injected, got %d heuristics, abstained %v", tc.query, len(rec.Heuristics), rec.Abstained)
				}
				continue
			}
			if rec.Abstained || len(rec.Heuristics) == 0 || rec.Heuristics[0].ID != ids[tc.want] {
				t.Errorf("%q: want %s injected first, got %+v (abstained %v: %s)", tc.query, tc.want, rec.Heuristics, rec.Abstained, rec.AbstainReason)
			}
		}
	})
}

// TestUnrelatedLessonsStayDistinct: the writer keeps a same-domain lesson
// that says something else as a heuristic of its own, across languages,
// and merges a reworded duplicate.
func TestUnrelatedLessonsStayDistinct(t *testing.T) {
	b := setup(t, "sqlite")
	write := func(task string, l [3]string) *kaizen.ExperienceResult {
		doc, _ := json.Marshal(map[string]any{"goal": "a past task", "transferable_heuristics": []map[string]string{
			{"kind": l[0], "trigger": l[1], "rule": l[2], "why": "it went wrong before", "evidence": "task " + task}}})
		return submit(t, b, task, doc)
	}
	first := write("t1", [3]string{"avoid", "when storing user passwords", "never hash passwords with MD5 or SHA-1; use bcrypt or argon2"})
	for i, l := range [][3]string{
		{"avoid", "在代码里需要使用密钥或令牌时", "不要把密钥硬编码或提交到仓库，改用环境变量或密钥管理服务"},
		{"avoid", "when a feature needs a new environment variable", "do not read it with a silent default in production code; fail at startup when it is missing"},
	} {
		got := write(sprintf("u%d", i), l).Heuristics[0]
		if got.Action != "created" {
			t.Errorf("unrelated lesson %q: %s into %s (similarity %.3f)", l[2], got.Action, got.HeuristicID, got.Similarity)
		}
	}
	dup := write("t2", [3]string{"avoid", "when storing user passwords", "never hash passwords with MD5 or SHA-1, use bcrypt or argon2 instead"}).Heuristics[0]
	if dup.Action != "updated" || dup.HeuristicID != first.Heuristics[0].HeuristicID {
		t.Errorf("duplicate: %+v", dup)
	}
}
