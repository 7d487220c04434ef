package experience

import "testing"

func TestContradicts(t *testing.T) {
	l := func(trigger, rule string) MergeLesson {
		return MergeLesson{Kind: KindPrefer, Trigger: trigger, Rule: rule}
	}
	cases := []struct {
		name string
		a, b MergeLesson
		want bool
	}{
		{"rather than vs the rejected choice",
			l("when installing Python dependencies in CI", "install from the lock file with pip-sync rather than pip install -U"),
			l("when installing Python dependencies in CI", "run pip install -U so the build picks up fixes"), true},
		{"do not vs do",
			l("when a cherry-pick stops with conflicts", "resolve, stage the files and run git cherry-pick --continue; do not commit yourself"),
			l("when a merge stops with conflicts", "resolve, stage the files and finish with git commit"), true},
		{"Chinese rejection vs English request",
			l("在 CI 里构建镜像时", "固定基础镜像的摘要，不要用 latest 标签"),
			l("when building images in CI", "use the latest tag of the base image so security fixes arrive"), true},
		{"而不是 against the other side's request, across languages",
			l("部署前", "用滚动更新而不是直接重启所有实例"),
			l("before deploying", "restart all instances at once"), true},
		{"both reject: restatement",
			l("when committing", "never commit API keys or .env files"),
			l("before a commit", "do not commit .env files or API keys to the repository"), false},
		{"neither rejects",
			l("when a query is slow", "add an index on the filtered column"),
			l("when a query is slow", "look at the query plan first"), false},
		{"rejection of something the other side does not ask for",
			l("when calling a remote API", "set a timeout; do not use the default client"),
			l("when calling a remote API", "set a timeout on every request"), false},
		{"an order rejected is not its items",
			l("when writing a Dockerfile", "do not copy the whole source tree before installing dependencies; copy the manifests first"),
			l("when writing a Dockerfile", "copy the dependency manifests and install them before copying the source"), false},
		{"empty rules", l("", ""), l("", ""), false},
	}
	for _, c := range cases {
		if got := Contradicts(c.a, c.b); got != c.want {
			pa, ra, _ := ruleStance(c.a.Rule)
			pb, rb, _ := ruleStance(c.b.Rule)
			t.Errorf("%s: Contradicts = %v, want %v (a asks %v rejects %v; b asks %v rejects %v)", c.name, got, c.want, pa, ra, pb, rb)
		}
		if got := Contradicts(c.b, c.a); got != c.want {
			t.Errorf("%s (swapped): Contradicts = %v, want %v", c.name, got, c.want)
		}
	}
}

func FuzzContradicts(f *testing.F) {
	f.Add("use X rather than Y", "use Y")
	f.Add("不要用 latest，而不是", "'don't")
	f.Fuzz(func(t *testing.T, a, b string) {
		x, y := MergeLesson{Rule: a}, MergeLesson{Rule: b}
		if Contradicts(x, y) != Contradicts(y, x) {
			t.Fatalf("not symmetric: %q %q", a, b)
		}
	})
}
