package trace

import "testing"

func TestIsCorrection(t *testing.T) {
	t.Parallel()
	yes := []string{
		"No, use encoding='utf-8' instead.", "nope", "no!", "No. The other one", "Wrong file, it's in src/", "Don't mock the database",
		"Use pnpm, not npm", "please run the migrations first", "You forgot to start postgres",
		"That's not what I asked", "Try with --no-cache", "it should be port 5433",
		"不要用 ascii，应该用 utf-8", "别改这个文件", "错了，是另一个表", "改成 5433 端口", "先启动数据库再跑测试",
	}
	no := []string{"ok", "Continue.", "thanks!", "looks good", "yes", "继续", "好的", "谢谢", "", "Why did it fail?",
		"nothing to add", "notes look fine", "No module named 'yaml'", "now it says: KeyError 'x'"}
	for _, p := range yes {
		if !IsCorrection(p) {
			t.Errorf("IsCorrection(%q) = false", p)
		}
	}
	for _, p := range no {
		if IsCorrection(p) {
			t.Errorf("IsCorrection(%q) = true", p)
		}
	}
}

func TestSuggestFix(t *testing.T) {
	t.Parallel()
	cases := []struct {
		actions []FixAction
		want    string
	}{
		{nil, ""},
		{[]FixAction{{Kind: ActionPrompt, Detail: "No, use encoding='utf-8'. And hurry.", Correction: true}, {Kind: ActionEdit, Detail: "a.py"}}, "Use encoding='utf-8'"},
		{[]FixAction{{Kind: ActionPrompt, Detail: "why?"}, {Kind: ActionEdit, Detail: "src/a.py"}, {Kind: ActionEdit, Detail: "src/b.py"}}, "Edit a.py, b.py"},
		{[]FixAction{{Kind: ActionCommand, Detail: "go mod tidy"}, {Kind: ActionEdit, Detail: "go.mod"}}, "Run `go mod tidy`, then edit go.mod"},
		{[]FixAction{{Kind: ActionCommand, Detail: "npm ci", Failed: true}, {Kind: ActionCommand, Detail: "npm install"}}, "Run `npm install`"},
		{[]FixAction{{Kind: ActionNote, Detail: "Let me add the missing import. Then run again."}, {Kind: ActionEdit, Detail: "main.go"}}, "Add the missing import"},
		{[]FixAction{{Kind: ActionPrompt, Detail: "不要用 ascii，应该用 utf-8", Correction: true}}, "不要用 ascii，应该用 utf-8"},
	}
	for _, c := range cases {
		if got := SuggestFix(c.actions); got != c.want {
			t.Errorf("SuggestFix(%+v) = %q, want %q", c.actions, got, c.want)
		}
	}
	if got := DescribeFix([]FixAction{{Kind: ActionPrompt, Detail: "No, use X"}, {Kind: ActionCommand, Detail: "make gen", ExitCode: code(2), Failed: true}, {Kind: ActionEdit, Detail: "/a/b/c.go"}}); got != "user: No, use X; ran `make gen` (exit 2); edited c.go" {
		t.Errorf("DescribeFix = %q", got)
	}
}
