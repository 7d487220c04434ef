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
		// q18: across languages, and the traps of negation words.
		{"both reject, the choice crossed, across languages",
			l("写 Go 服务、方法需要请求上下文时", "不要把 context.Context 存在结构体字段里，每次调用都作为第一个参数显式传入"),
			l("when methods of a Go service need the request context", "keep the context in a ctx field on the service struct instead of threading it through every call"), true},
		{"without inside a type name is no rejection",
			l("when adding time columns to a PostgreSQL table", "use timestamptz, not plain timestamp"),
			l("在 PostgreSQL 表里加时间列时", "统一用 timestamp without time zone，时区由应用层自己转换"), true},
		{"a type name restated",
			l("在 PostgreSQL 表里加时间列时", "用 timestamptz 存时间"),
			l("when adding time columns to a PostgreSQL table", "store times as timestamp with time zone, not timestamp without time zone"), false},
		{"a weak without does not make the rule a rejecting one",
			l("给访问数据库的代码写单元测试时", "不要 mock 数据库，用真实的测试库跑"),
			l("when unit-testing code that talks to the database", "mock the database layer so the tests run fast without a server"), true},
		{"never X without Y asks for Y",
			l("when calling an external HTTP API", "never call it without a timeout"),
			l("调用外部 HTTP 接口时", "每个请求都设置超时"), false},
		{"non-root and 非 root",
			l("when writing a Dockerfile for a service", "never run the container as root"),
			l("写服务的 Dockerfile 时", "加一行 USER 指令，用非 root 用户运行容器"), false},
		{"root asked for",
			l("when writing a Dockerfile for a service", "never run the container as root; add a USER line"),
			l("写服务的 Dockerfile 时", "直接用 root 运行容器，省掉挂载目录的权限问题"), true},
		{"prefer X over Y",
			l("when a SQL query includes user input", "prefer parameterized queries over string concatenation"),
			l("SQL 里要带用户输入时", "不要拼接 SQL 字符串，使用参数化查询"), false},
		{"别忘了 asks",
			l("when a React component fetches data in an effect", "return a cleanup function that cancels the request on unmount"),
			l("React 组件在 effect 里请求数据时", "别忘了在清理函数里取消请求，不然卸载后还会 setState"), false},
		{"a consequence clause is not asked for",
			l("桌面或移动应用里读写文件、访问网络时", "别在主线程里做耗时的 IO，会卡住界面"),
			l("when an app reads files or calls the network", "move slow disk and network IO off the UI thread"), false},
		{"NOT NULL is a constraint, not a rejection",
			l("when adding a column", "declare it NOT NULL with a default"),
			l("加列时", "加上 NOT NULL 约束并给默认值"), false},
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
