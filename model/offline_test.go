package model

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/kaizenhq/kaizen/internal/tokenize"
)

func cosineOf(t testing.TB, e Embedder, a, b string) float32 {
	t.Helper()
	vs, err := e.Embed(context.Background(), []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Cosine(vs[0], vs[1])
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// digest is a platform-independent fingerprint of a vector's bits.
func digest(v []float32) string {
	h := sha256.New()
	h.Write(EncodeVector(v))
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func TestOfflineEmbedderIdentity(t *testing.T) {
	t.Parallel()
	e := NewOfflineEmbedder(0)
	if e.ID() != "offline-hash-v5@512" || e.Dimension() != 512 {
		t.Errorf("default: ID %q, dimension %d", e.ID(), e.Dimension())
	}
	e = NewOfflineEmbedder(256)
	if e.ID() != "offline-hash-v5@256" || e.Dimension() != 256 {
		t.Errorf("256: ID %q, dimension %d", e.ID(), e.Dimension())
	}
	if NewOfflineEmbedder(7).Dimension() != DefaultOfflineDimension {
		t.Error("an out-of-range dimension must fall back to the default")
	}
}

// The vectors are part of stored data: a change to them without a new
// OfflineEmbedderName would silently mix two spaces. These digests pin the
// algorithm; update them only together with the version in the name.
func TestOfflineEmbedderIsDeterministic(t *testing.T) {
	t.Parallel()
	e := NewOfflineEmbedder(512)
	golden := map[string]string{
		"Run the database migrations before starting the server": "271687df900bfd58",
		"部署前先运行数据库迁移，不要用 root 用户":                                "3724e3672a12dbab",
		"getUserName() failed: ÉCHEC in config_loader.go":        "48162f34390ab429",
	}
	for text, want := range golden {
		v1 := e.EmbedText(text)
		v2 := NewOfflineEmbedder(512).EmbedText(text)
		if digest(v1) != digest(v2) {
			t.Errorf("%q: two embedders disagree", text)
		}
		if got := digest(v1); got != want {
			t.Errorf("%q: digest %s, want %s (the algorithm changed: bump OfflineEmbedderName)", text, got, want)
		}
	}
}

func TestOfflineEmbedderConcurrentUseIsDeterministic(t *testing.T) {
	t.Parallel()
	e := NewOfflineEmbedder(512)
	texts := []string{"alpha beta gamma", "数据库迁移失败", "", "retry with exponential backoff"}
	want := make([]string, len(texts))
	for i, s := range texts {
		want[i] = digest(e.EmbedText(s))
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 50; k++ {
				vs, err := e.Embed(context.Background(), texts)
				if err != nil {
					t.Error(err)
					return
				}
				for i, v := range vs {
					if digest(v) != want[i] {
						t.Errorf("text %d differs under concurrency", i)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestOfflineEmbedderNormalisation(t *testing.T) {
	t.Parallel()
	e := NewOfflineEmbedder(512)
	for _, s := range []string{"a", "hello world", "部署", strings.Repeat("long text with many words ", 200), "x_y zA1 ÆØÅ ½ 🙂 ｆｕｌｌ"} {
		v := e.EmbedText(s)
		if n := Norm(v); math.Abs(float64(n)-1) > 1e-5 {
			t.Errorf("%q: norm %v, want 1", s[:min(len(s), 20)], n)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("%q: non-finite value", s)
			}
		}
	}
}

func TestOfflineEmbedderEmptyText(t *testing.T) {
	t.Parallel()
	e := NewOfflineEmbedder(128)
	for _, s := range []string{"", "   ", "\n\t", "!!! ... ???", "，。！？", "\x00\x01"} {
		v := e.EmbedText(s)
		if len(v) != 128 || Norm(v) != 0 {
			t.Errorf("%q: want the 128-d zero vector, got norm %v", s, Norm(v))
		}
		if c, err := Cosine(v, e.EmbedText("anything")); err != nil || c != 0 {
			t.Errorf("%q: cosine with the zero vector = %v, %v", s, c, err)
		}
	}
	vs, err := e.Embed(context.Background(), nil)
	if err != nil || len(vs) != 0 {
		t.Errorf("Embed(nil) = %v, %v", vs, err)
	}
}

func TestOfflineEmbedderStopWordsOnly(t *testing.T) {
	t.Parallel()
	e := NewOfflineEmbedder(512)
	if Norm(e.EmbedText("it is what it is")) == 0 {
		t.Error("a text of stop words only must still embed")
	}
}

// similarityCase: a text, its paraphrase, a related text and an unrelated
// one. The offline embedder must rank them in that order.
type similarityCase struct {
	anchor, paraphrase, related, unrelated string
}

var englishCases = []similarityCase{
	{"Run the database migrations before starting the server",
		"Before you start the server, run the database migration",
		"The server fails to start when the database is unreachable",
		"Bake the bread at 220 degrees for thirty minutes"},
	{"Use pnpm instead of npm to install dependencies",
		"Install the dependencies with pnpm, not npm",
		"npm install fails with a peer dependency conflict",
		"The quarterly sales report is due on Friday"},
	{"The build fails because the config file is missing",
		"A missing config file makes the build fail",
		"Check that the config file path is correct before building",
		"My cat likes to sleep in the sun"},
	{"Always run the unit tests before committing changes",
		"Run unit tests before you commit your changes",
		"The integration tests are flaky on CI",
		"Paris is the capital of France"},
}

var chineseCases = []similarityCase{
	{"部署前先运行数据库迁移",
		"在部署之前需要先运行数据库迁移",
		"数据库连接失败导致服务无法启动",
		"今天天气很好，我们去公园散步"},
	{"不要用 root 用户运行容器",
		"容器不能以 root 用户身份运行",
		"容器启动时权限不足",
		"这道菜需要放一点盐和胡椒"},
	{"测试失败是因为配置文件路径错误",
		"配置文件的路径写错了，所以测试失败",
		"修改配置文件之后需要重启服务",
		"周末我想去海边看日出"},
	{"我更喜欢用 pnpm 安装依赖",
		"安装依赖时请用 pnpm",
		"依赖冲突导致安装失败",
		"明天的会议改到下午三点"},
}

func TestOfflineEmbedderSimilarityOrdering(t *testing.T) {
	t.Parallel()
	e := NewOfflineEmbedder(512)
	for lang, cases := range map[string][]similarityCase{"english": englishCases, "chinese": chineseCases} {
		for _, c := range cases {
			p := cosineOf(t, e, c.anchor, c.paraphrase)
			r := cosineOf(t, e, c.anchor, c.related)
			u := cosineOf(t, e, c.anchor, c.unrelated)
			t.Logf("%s %q: paraphrase %.3f related %.3f unrelated %.3f", lang, c.anchor, p, r, u)
			if !(p > r && r > u) {
				t.Errorf("%s %q: want paraphrase %.3f > related %.3f > unrelated %.3f", lang, c.anchor, p, r, u)
			}
			if p < 0.5 {
				t.Errorf("%s %q: paraphrase similarity %.3f < 0.5", lang, c.anchor, p)
			}
			// Hash collisions put unrelated texts at |cos| ≈ 0.05 rms at 512
			// dimensions, up to about 0.16 at the 99th percentile.
			if u > 0.2 {
				t.Errorf("%s %q: unrelated similarity %.3f > 0.2", lang, c.anchor, u)
			}
		}
	}
}

func TestOfflineEmbedderNormalisesText(t *testing.T) {
	t.Parallel()
	e := NewOfflineEmbedder(512)
	same := [][2]string{
		{"Configure the Server", "configure the server"},
		{"café résumé naïve", "cafe resume naive"},
		{"ｕｓｅ ｐｎｐｍ", "use pnpm"},
		{"don't retry", "dont retry"},
		{"the tests failed", "the test fails"},
		{"数据库，迁移！", "数据库 迁移"},
	}
	for _, p := range same {
		if c := cosineOf(t, e, p[0], p[1]); c < 0.999 {
			t.Errorf("%q vs %q: cosine %.4f, want 1 after normalisation", p[0], p[1], c)
		}
	}
	// Identifiers meet their parts.
	if c := cosineOf(t, e, "getUserName", "get user name"); c < 0.4 {
		t.Errorf("camelCase identifier vs words: %.3f", c)
	}
	if c := cosineOf(t, e, "max_retry_count", "max retry count"); c < 0.4 {
		t.Errorf("snake_case identifier vs words: %.3f", c)
	}
}

func TestOfflineEmbedderOddInput(t *testing.T) {
	t.Parallel()
	e := NewOfflineEmbedder(64)
	inputs := []string{
		"\xff\xfe\xfd invalid utf8 \xc3", strings.Repeat("a", 100000), strings.Repeat("部", 10000),
		strings.Repeat("ab_", 1000), "''''", "a'b", "_x_", "x__y", "\u0301\u0301", "e\u0301te\u0301",
	}
	for _, s := range inputs {
		v := e.EmbedText(s)
		if n := Norm(v); n != 0 && math.Abs(float64(n)-1) > 1e-5 {
			t.Errorf("%q: norm %v", s[:min(20, len(s))], n)
		}
	}
}

func TestOfflineEmbedderHonoursContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewOfflineEmbedder(64).Embed(ctx, []string{"x"}); err == nil {
		t.Error("want the context's error")
	}
}

func FuzzOfflineEmbedder(f *testing.F) {
	for _, s := range []string{"", "hello world", "部署前先运行数据库迁移", "getUserName_v2 'x' ｆ", "\xff"} {
		f.Add(s)
	}
	e := NewOfflineEmbedder(64)
	f.Fuzz(func(t *testing.T, s string) {
		v := e.EmbedText(s)
		if len(v) != 64 {
			t.Fatalf("length %d", len(v))
		}
		n := float64(Norm(v))
		if n != 0 && math.Abs(n-1) > 1e-5 {
			t.Fatalf("%q: norm %v", s, n)
		}
		if n == 0 && utf8.ValidString(s) && strings.ContainsFunc(s, tokenize.IsCJK) {
			t.Fatalf("%q: CJK text embedded to zero", s)
		}
	})
}

func benchmarkOffline(b *testing.B, text string) {
	e := NewOfflineEmbedder(DefaultOfflineDimension)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		_ = e.EmbedText(text)
	}
}

// 200-character texts, the size of a heuristic's trigger and rule.
var (
	benchEnglish = firstRunes(strings.Repeat("When the integration tests fail with a connection refused error, check that the database container is running and that the migrations ran before the server started. ", 2), 200)
	benchChinese = firstRunes(strings.Repeat("当集成测试因为连接被拒绝而失败时，先检查数据库容器是否在运行，并确认迁移已在服务启动前执行；修复原因之后再重试，不要盲目重复同样的命令。", 4), 200)
)

func firstRunes(s string, n int) string { return string([]rune(s)[:n]) }

func BenchmarkOfflineEmbed(b *testing.B) {
	b.Run("english-200-chars", func(b *testing.B) { benchmarkOffline(b, benchEnglish) })
	b.Run("chinese-200-chars", func(b *testing.B) { benchmarkOffline(b, benchChinese) })
}

func BenchmarkCosine512(b *testing.B) {
	e := NewOfflineEmbedder(512)
	x, y := e.EmbedText(benchEnglish), e.EmbedText(benchChinese)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = Cosine(x, y)
	}
}

func BenchmarkDot512(b *testing.B) {
	e := NewOfflineEmbedder(512)
	x, y := e.EmbedText(benchEnglish), e.EmbedText(benchChinese)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = Dot(x, y)
	}
}

// The offline embedder's output depends on the bilingual lexicon: the
// lexicon this version was made with is pinned here. When the lexicon
// changes, bump OfflineEmbedderName (stores then re-embed on open) and
// update the digest; recalibrate the thresholds keyed by the new id
// (internal/recalleval: TestCalibrateAbstention, TestCalibrateMerge).
func TestOfflineEmbedderVersionPinsTheLexicon(t *testing.T) {
	const version, digest = "offline-hash-v5", "5a1adfb43ec372d9"
	if OfflineEmbedderName != version || tokenize.LexiconDigest() != digest {
		t.Fatalf("embedder %s with lexicon %s; pinned: %s with lexicon %s — a changed lexicon needs a new embedder version",
			OfflineEmbedderName, tokenize.LexiconDigest(), version, digest)
	}
}
