package learning

import (
	"strings"
	"sync"
	"unicode"
)

// Task kinds. Similar past tasks are hard to find by words alone: "add an
// index on invoices.created_at" and "rename users.email_address" are both
// schema migrations but share no word. An agent rarely tags its tasks, so
// kaizen infers a coarse kind from the description with a bilingual
// (English and Chinese) lexicon of software-engineering terms, and counts a
// past task of the same kind as similar. The lexicon is general
// vocabulary of the trade, not tuned to any one project; a description
// that matches no kind clearly gets none and is compared by its words as
// before.

// Task kinds InferKind can return.
const (
	KindMigration   = "migration"
	KindUI          = "ui"
	KindAPI         = "api"
	KindRefactor    = "refactor"
	KindBugfix      = "bugfix"
	KindPerformance = "performance"
	KindData        = "data"
	KindTesting     = "testing"
	KindSecurity    = "security"
	KindDocs        = "docs"
	KindInfra       = "infra"
	KindDependency  = "dependency"
)

// TaskKinds lists the kinds InferKind knows.
var TaskKinds = kindLexiconOrder[:]

// cue is a word (an English word prefix, or a Chinese substring) that
// points to a kind with a weight: 2 for a term that alone names the kind
// ("migration", "endpoint"), 1 for a term typical of it, 0.5 for a weak hint.
type cue struct {
	term   string
	weight float64
}

// kindLexicon: English cues match a word's prefix (so "migrat" covers
// migrate, migration, migrating); multi-word cues match a phrase; Chinese
// cues match a substring.
var kindLexicon = map[string][]cue{
	KindMigration: {{"migration", 2}, {"migrate", 1.5}, {"schema", 2}, {"column", 2}, {"backfill", 1}, {"alter table", 2},
		{"foreign key", 2}, {"index on", 1.5}, {"table", 0.5}, {"database", 1}, {"ddl", 2}, {"rename", 0.5},
		{"primary key", 2}, {"constraint", 1}, {"nullable", 1.5},
		{"迁移", 2}, {"字段", 2}, {"表结构", 2}, {"数据库", 1}, {"索引", 1.5}, {"回填", 1}, {"列", 1}, {"主键", 2}, {"外键", 2}, {"not null", 2}, {"liquibase", 2}, {"flyway", 2}, {"alembic", 2}, {"expand/contract", 2}, {"numeric", 1}, {"rows", 0.5}, {"existing rows", 1}, {"变更集", 2}, {"约束", 1.5}, {"建表", 2}, {"删除废弃", 0.5}, {"orphan", 1}, {"孤立", 1}},
	KindUI: {{"page", 1.5}, {"button", 2}, {"toggle", 1.5}, {"dark mode", 2}, {"layout", 2}, {"form", 1}, {"screen reader", 2},
		{"keyboard", 1}, {"dashboard", 1.5}, {"css", 2}, {"style", 1}, {"component", 1}, {"modal", 2}, {"dialog", 1.5},
		{"responsive", 2}, {"mobile", 1}, {"accessib", 2}, {"a11y", 2}, {"frontend", 2}, {"front-end", 2}, {"progress bar", 2},
		{"sortable", 1}, {"tooltip", 2}, {"theme", 1.5}, {"redesign", 1.5}, {"ui", 2}, {"ux", 2}, {"widget", 1.5}, {"view", 0.5},
		{"页面", 2}, {"布局", 2}, {"按钮", 2}, {"深色", 2}, {"移动端", 1.5}, {"前端", 2}, {"界面", 2}, {"样式", 2}, {"弹窗", 2}, {"组件", 1}, {"表单", 1}, {"skeleton", 2}, {"placeholder", 1}, {"validation message", 1.5}, {"grid", 1}, {"card", 1}, {"sidebar", 2}, {"navbar", 2}, {"侧边栏", 2}, {"列表页", 1.5}, {"筛选", 1}, {"animation", 1.5}, {"icon", 1}, {"font", 1}, {"react", 0.5}, {"vue", 0.5}},
	KindAPI: {{"endpoint", 2}, {"api", 2}, {"rest", 1}, {"graphql", 2}, {"grpc", 2}, {"route", 1}, {"http", 0.5},
		{"interface", 0.5}, {"pagination", 1}, {"rate limit", 2}, {"json", 1}, {"status code", 2}, {"request", 1},
		{"response", 1}, {"webhook", 1}, {"get /", 2}, {"post /", 2}, {"sdk", 1}, {"openapi", 2}, {"swagger", 2},
		{"接口", 2}, {"端点", 2}, {"路由", 1.5}, {"请求", 1}, {"限流", 2}, {"mutation", 1.5}, {"proto", 1.5}, {"handler", 1}, {"envelope", 1.5}, {"route", 0.5}, {"payload", 1}, {"query param", 1.5}, {"v2", 1}, {"服务端", 1}},
	KindRefactor: {{"refactor", 2}, {"extract", 1.5}, {"module", 1}, {"package", 0.5}, {"singleton", 1.5}, {"clean up", 1.5},
		{"cleanup", 1.5}, {"unify", 1.5}, {"simplify", 1.5}, {"decouple", 2}, {"monolith", 1.5}, {"dead code", 2},
		{"duplicat", 0.5}, {"restructure", 2}, {"reorganize", 1.5}, {"split", 0.5}, {"break the", 1}, {"cohesive", 1.5},
		{"hand-written", 0.5}, {"replace", 0.5}, {"pass", 0.25}, {"explicit", 0.5},
		{"重构", 2}, {"抽取", 1.5}, {"模块", 1}, {"统一", 1}, {"解耦", 2}, {"拆分", 1}, {"单体", 1.5}, {"清理", 1}, {"strategy pattern", 2}, {"async/await", 1.5}, {"duplicated", 1.5}, {"generic", 1}, {"inline", 1}, {"god class", 2}, {"behaviour identical", 2}, {"behavior identical", 2}, {"no functional change", 2}, {"without changing behavio", 2}, {"collapse", 1}, {"行为不变", 2}, {"不改变", 1.5}, {"依赖注入", 1.5}, {"封装", 1}},
	KindBugfix: {{"fix", 2}, {"bug", 2}, {"crash", 2}, {"race", 1.5}, {"leak", 1}, {"wrong", 1.5}, {"broken", 1.5},
		{"regression", 2}, {"incorrect", 1.5}, {"double", 0.5}, {"fails", 1}, {"failing", 0.5}, {"error", 0.5},
		{"exception", 1}, {"panic", 1.5}, {"deadlock", 1.5}, {"instead of", 0.5}, {"garbled", 1.5}, {"at random", 1},
		{"修复", 2}, {"错误", 0.5}, {"崩溃", 2}, {"乱码", 2}, {"竞态", 1.5}, {"问题", 0.5}, {"异常", 1}, {"故障", 1.5}, {"off-by-one", 2}, {"twice", 1}, {"ignores", 1.5}, {"empty file", 1}, {"doesn't", 1}, {"does not", 1}, {"not working", 2}, {"mangled", 1.5}, {"两次", 1}, {"没有", 1}, {"不刷新", 1.5}, {"失败", 1}, {"无法", 1.5}, {"报错", 2}},
	KindPerformance: {{"latency", 2}, {"p99", 2}, {"p95", 2}, {"slow", 2}, {"faster", 2}, {"speed", 1.5}, {"cache", 1},
		{"memory", 1}, {"optimi", 2}, {"performance", 2}, {"throughput", 2}, {"cold start", 2}, {"load time", 2},
		{"ms", 1}, {"out of memory", 1}, {"in half", 1}, {"renders in", 1}, {"profil", 1.5}, {"cpu", 1.5},
		{"优化", 2}, {"性能", 2}, {"速度", 1.5}, {"延迟", 2}, {"缓存", 1}, {"耗时", 2}, {"首屏", 2}, {"内存", 1}, {"n+1", 2}, {"eager-load", 2}, {"bulk", 1.5}, {"memoiz", 2}, {"re-render", 1}, {"seq scan", 2}, {"lcp", 2}, {"lazy-load", 1.5}, {"bundle size", 2}, {"流式", 1}, {"占用", 1.5}, {"体积", 1.5}, {"按需加载", 2}, {"加快", 2}, {"太慢", 2}},
	KindData: {{"etl", 2}, {"warehouse", 2}, {"pipeline", 1}, {"rollup", 2}, {"ingestion", 2}, {"streaming", 1.5},
		{"batch", 1}, {"partition", 1.5}, {"clickstream", 2}, {"event", 0.5}, {"dedup", 1}, {"analytics", 2},
		{"kafka", 1.5}, {"nightly", 0.5}, {"per region", 1}, {"revenue", 0.5}, {"consumer", 1}, {"dataset", 2},
		{"数据仓库", 2}, {"汇总", 2}, {"数据管道", 2}, {"埋点", 2}, {"报表", 1}, {"数仓", 2}, {"离线任务", 1.5}, {"airflow", 2}, {"dag", 2}, {"parquet", 2}, {"cohort", 2}, {"retention", 1}, {"looker", 2}, {"bi", 1.5}, {"dbt", 2}, {"spark", 2}, {"flink", 2}, {"cdc", 2}, {"bigquery", 2}, {"snowflake", 2}, {"漏斗", 2}, {"统计", 1.5}, {"实时计算", 2}},
	KindTesting: {{"test", 2}, {"coverage", 2}, {"flaky", 2}, {"unit", 1}, {"e2e", 2}, {"end-to-end", 1.5},
		{"property-based", 2}, {"fixture", 2}, {"mock", 1.5}, {"deterministic", 1}, {"ci", 1}, {"github actions", 1.5},
		{"测试", 2}, {"覆盖率", 2}, {"单元", 1}, {"用例", 1.5}, {"specs", 1.5}, {"spec", 1}, {"freeze the clock", 1.5}, {"integration test", 1}, {"集成测试", 1}, {"断言", 1.5}},
	KindSecurity: {{"csrf", 2}, {"xss", 2}, {"injection", 2}, {"two-factor", 2}, {"2fa", 2}, {"mfa", 2}, {"secret", 1.5},
		{"vault", 2}, {"leaked", 1.5}, {"permission", 1.5}, {"encrypt", 2}, {"vulnerab", 2}, {"cve", 2}, {"sanitiz", 1.5},
		{"escape", 1}, {"security", 2}, {"authenticat", 1}, {"rotate", 1}, {"token", 0.5}, {"admin", 0.5}, {"attack", 2},
		{"安全", 2}, {"防护", 2}, {"漏洞", 2}, {"加密", 2}, {"权限", 1.5}, {"密钥", 1.5}, {"注入", 2}, {"access key", 2}, {"hard-coded", 1}, {"hardcoded", 1}, {"password hash", 2}, {"hashing", 1.5}, {"argon2", 2}, {"bcrypt", 2}, {"httponly", 2}, {"samesite", 2}, {"cookie", 1}, {"content-security-policy", 2}, {"csp", 2}, {"jwt", 1.5}, {"ownership", 1}, {"brute", 1.5}, {"双因素", 2}, {"脱敏", 2}, {"身份证", 1}, {"任意", 1}, {"攻击", 2}},
	KindDocs: {{"document", 1.5}, {"readme", 2}, {"docs", 2}, {"changelog", 2}, {"tutorial", 2}, {"docstring", 2},
		{"文档", 2}, {"说明", 1}, {"contributing", 2}, {"runbook", 2}, {"guide", 1.5}, {"指南", 2}, {"adr", 2}, {"wiki", 1.5}, {"explain", 1}, {"注释", 1.5}, {"how to", 1}},
	KindInfra: {{"deploy", 2}, {"docker", 2}, {"kubernetes", 2}, {"k8s", 2}, {"terraform", 2}, {"helm", 2},
		{"build cache", 1}, {"travis", 1}, {"infrastructure", 2}, {"container", 1.5}, {"nginx", 1.5}, {"server", 0.5},
		{"部署", 2}, {"容器", 2}, {"运维", 2}, {"workflow", 1}, {"jenkins", 2}, {"gitlab ci", 2}, {"流水线", 2}, {"镜像", 1.5}, {"预发布", 1.5}, {"autoscal", 2}, {"alarm", 1.5}, {"on-call", 1.5}, {"cloudwatch", 2}, {"monitor", 1}, {"ci", 0.5}, {"ci/cd", 2}, {"cluster", 1.5}, {"环境", 0.5}, {"发布", 1}},
	KindDependency: {{"upgrade", 2}, {"bump", 2}, {"dependenc", 1.5}, {"version of", 1}, {"library", 0.5},
		{"go.mod", 2}, {"package.json", 2}, {"升级", 2}, {"依赖", 2}, {"unmaintained", 1.5}, {"python 3", 1.5}, {"node.js", 1}, {"lts", 1.5}, {"deprecat", 0.5}, {"废弃", 0.5}, {"migrate to", 0.5}},
}

// compiledLexicon is kindLexicon arranged for matching: latin words by
// the word (whole-word cues) or by prefix, and phrases and Chinese cues as
// substrings.
type compiledLexicon struct {
	prefix, whole map[string][]kindCue // a latin word cue: by the cue itself
	phrases       []kindCue            // latin phrases: substrings at a word start
	chinese       []kindCue            // substrings
	maxPrefix     int
}

type kindCue struct {
	kind   int // index in TaskKinds
	term   string
	weight float64
}

var lexicon = sync.OnceValue(func() *compiledLexicon {
	l := &compiledLexicon{prefix: map[string][]kindCue{}, whole: map[string][]kindCue{}}
	for k, kind := range TaskKinds {
		for _, c := range kindLexicon[kind] {
			kc := kindCue{k, c.term, c.weight}
			switch {
			case !isLatin(c.term):
				l.chinese = append(l.chinese, kc)
			case strings.ContainsAny(c.term, " /"):
				l.phrases = append(l.phrases, kc)
			case len(c.term) <= 3:
				l.whole[c.term] = append(l.whole[c.term], kc)
			default:
				l.prefix[c.term] = append(l.prefix[c.term], kc)
				l.maxPrefix = max(l.maxPrefix, len(c.term))
			}
		}
	}
	return l
})

// InferKind returns the task kind a description names, or "" when no
// kind is clearly named: the best kind needs a total cue weight of at
// least 1.5 and 0.5 more than the runner-up's. The first word of the
// description counts half again (a ticket starts with what it does:
// "Fix …", "Upgrade …", "Refactor …"). A cue counts once however often
// it occurs.
func InferKind(task string) string {
	if strings.TrimSpace(task) == "" {
		return ""
	}
	l := lexicon()
	text := " " + strings.ToLower(task) + " "
	words := kindWords(text)
	var score [len(kindLexiconOrder)]float64
	seen := map[string]bool{}
	hit := func(c kindCue, first bool) {
		if seen[c.term] {
			return
		}
		seen[c.term] = true
		score[c.kind] += c.weight
		if first {
			score[c.kind] += c.weight / 2
		}
	}
	for wi, w := range words {
		for _, c := range l.whole[w] {
			hit(c, wi == 0)
		}
		// "200 ms", and "200ms" too
		if d := strings.TrimLeft(w, "0123456789"); d != w && d != "" {
			for _, c := range l.whole[d] {
				hit(c, false)
			}
		}
		for n := min(len(w), l.maxPrefix); n > 3; n-- {
			for _, c := range l.prefix[w[:n]] {
				hit(c, wi == 0)
			}
		}
	}
	for _, c := range l.phrases {
		if phraseIn(text, c.term) {
			hit(c, false)
		}
	}
	if !isLatin(text) {
		for _, c := range l.chinese {
			if strings.Contains(text, c.term) {
				hit(c, false)
			}
		}
	}
	best, second, kind := 0.0, 0.0, ""
	for k, sc := range score {
		switch {
		case sc > best:
			best, second, kind = sc, best, TaskKinds[k]
		case sc > second:
			second = sc
		}
	}
	if best < 1.5 || best-second < 0.5 {
		return ""
	}
	return kind
}

// kindLexiconOrder sizes the score array: one slot per kind.
var kindLexiconOrder = [...]string{KindMigration, KindUI, KindAPI, KindRefactor, KindBugfix, KindPerformance,
	KindData, KindTesting, KindSecurity, KindDocs, KindInfra, KindDependency}

// phraseIn reports whether a latin phrase occurs in text at a word start.
func phraseIn(text, term string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], term)
		if j < 0 {
			return false
		}
		i += j
		if i == 0 || !unicode.IsLetter(rune(text[i-1])) {
			return true
		}
		i++
	}
}

// kindWords are the lower-case latin words of a text (letters, digits and
// the characters a term may contain: '-', '.', '/', '+').
func kindWords(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-./+", r)))
	})
}

func isLatin(s string) bool {
	for _, r := range s {
		if r >= unicode.MaxASCII {
			return false
		}
	}
	return true
}
