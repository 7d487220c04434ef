package learning_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kaizenhq/kaizen/learning"
)

func TestExtractSeedExample(t *testing.T) {
	t.Parallel()
	got := learning.Labels(learning.ExtractPatterns("我们将按文件类型拆分,每个子任务一个文件"))
	if diff := cmp.Diff([]string{"按文件类型拆分", "每个子任务一个文件"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestExtractEachStrategy(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text, key string
	}{
		{"We will split the work by file type.", "split-by-file-type"},
		{"按文件类型分组", "split-by-file-type"},
		{"Break it down per component", "split-by-component"},
		{"按组件拆分前端", "split-by-component"},
		{"Split by layer: UI / logic / data", "split-by-layer"},
		{"按层拆分", "split-by-layer"},
		{"Organise the subtasks by feature", "split-by-feature"},
		{"按功能拆分", "split-by-feature"},
		{"One file per subtask to avoid conflicts", "one-file-per-subtask"},
		{"每个子任务一个文件", "one-file-per-subtask"},
		{"Handle the shared types first", "shared-types-first"},
		{"先处理共享类型", "shared-types-first"},
		{"Separate the API routes from the UI", "separate-api-routes"},
		{"api routes separately", "separate-api-routes"},
		{"分离API路由", "separate-api-routes"},
		{"Write tests alongside the implementation", "tests-alongside"},
		{"测试与实现一起完成", "tests-alongside"},
		{"Put tests in a separate subtask", "tests-separate"},
		{"测试在单独子任务中完成", "tests-separate"},
		{"Maximize parallelization across workers", "maximize-parallel"},
		{"run everything in parallel", "maximize-parallel"},
		{"最大化并行", "maximize-parallel"},
		{"Execute the steps sequentially", "sequential-order"},
		{"按顺序执行", "sequential-order"},
		{"Respect the dependency chain between modules", "respect-dependencies"},
		{"尊重依赖链", "respect-dependencies"},
	}
	for _, c := range cases {
		got := learning.ExtractPatterns(c.text)
		if len(got) != 1 || got[0].Key != c.key {
			keys := []string{}
			for _, g := range got {
				keys = append(keys, g.Key)
			}
			t.Errorf("%q: got %v, want [%s]", c.text, keys, c.key)
		}
	}
}

func TestExtractOrderLanguageAndNegatives(t *testing.T) {
	t.Parallel()
	got := learning.ExtractPatterns("Respect the dependency chain, tests in a separate subtask, and split by feature.")
	var keys []string
	for _, g := range got {
		keys = append(keys, g.Key)
		if g.Language != learning.LocaleEN {
			t.Errorf("%s: language %s", g.Key, g.Language)
		}
	}
	// results follow the seed's fixed strategy order, not the text order
	if diff := cmp.Diff([]string{"split-by-feature", "tests-separate", "respect-dependencies"}, keys); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, text := range []string{"", "Fix the login bug and ship it.", "我们修复登录错误", "the api is fine"} {
		if got := learning.ExtractPatterns(text); len(got) != 0 {
			t.Errorf("%q: unexpected %v", text, learning.Labels(got))
		}
	}
	if len(learning.Strategies) != 12 {
		t.Errorf("%d strategies, the seed has 12", len(learning.Strategies))
	}
}

func TestStrategyByLabel(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"Split by file type", "按文件类型拆分", "split-by-file-type", "  split BY file type. "} {
		st, ok := learning.StrategyByLabel(s)
		if !ok || st.Key != "split-by-file-type" {
			t.Errorf("StrategyByLabel(%q) = %v, %v", s, st.Key, ok)
		}
	}
	if _, ok := learning.StrategyByLabel("split by mood"); ok {
		t.Error("unknown label matched")
	}
}
