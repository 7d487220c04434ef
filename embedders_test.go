package kaizen_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/model"
)

// documentedEmbedder reads the TOML block after "<!-- embedder: name -->"
// in docs/models.md.
func documentedEmbedder(t *testing.T, name string) string {
	t.Helper()
	doc, err := os.ReadFile("docs/models.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- embedder: " + regexp.QuoteMeta(name) + " -->\n```toml\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/models.md has no embedder block %q", name)
	}
	return string(m[1])
}

// fakeEmbeddings is an OpenAI-compatible /v1/embeddings server (what
// Ollama and OpenAI serve) answering with the offline embedder's vectors
// at the requested dimension, recording the model and key of each call.
type fakeEmbeddings struct {
	*httptest.Server
	mu     sync.Mutex
	models map[string]int
	auth   map[string]bool
	texts  int
}

func newFakeEmbeddings(t *testing.T, dim int) *fakeEmbeddings {
	f := &fakeEmbeddings{models: map[string]int{}, auth: map[string]bool{}}
	emb := model.NewOfflineEmbedder(dim)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		vecs, err := emb.Embed(r.Context(), req.Input)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		f.mu.Lock()
		f.models[req.Model]++
		f.auth[r.Header.Get("Authorization")] = true
		f.texts += len(req.Input)
		f.mu.Unlock()
		data := make([]any, len(vecs))
		for i, v := range vecs {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data})
	}))
	t.Cleanup(f.Close)
	return f
}

// TestDocumentedEmbedders runs the embedder configurations of
// docs/models.md against a fake server: lessons written with the offline
// embedder are re-embedded when the engine opens with the configured one,
// recall goes through it, and the request carries the documented model
// (and the key, read from api_key_env, only where one is configured).
func TestDocumentedEmbedders(t *testing.T) {
	for _, tc := range []struct {
		name, id, model, auth string
		dim                   int
	}{
		{"ollama-nomic", "openai:nomic-embed-text@768", "nomic-embed-text", "", 768},
		{"ollama-bge-m3", "openai:bge-m3@1024", "bge-m3", "", 1024},
		{"openai", "openai:text-embedding-3-small@1536", "text-embedding-3-small", "Bearer sk-test-embeddings", 1536},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeEmbeddings(t, tc.dim)
			block := documentedEmbedder(t, tc.name)
			block = regexp.MustCompile(`base_url = "[^"]*"`).ReplaceAllString(block, `base_url = "`+srv.URL+`/v1"`)
			t.Setenv("OPENAI_API_KEY", "sk-test-embeddings")
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, kaizen.ConfigFile), []byte(block), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := kaizen.LoadConfig(home)
			if err != nil {
				t.Fatalf("the documented block does not load: %v\n%s", err, block)
			}
			cfg.Project = "proj"
			cfg.Now = func() time.Time { return start }

			// Lessons written with the offline embedder.
			off := cfg
			off.Model.Offline = true
			e, err := kaizen.Open(ctx, off)
			if err != nil {
				t.Fatal(err)
			}
			for task, l := range map[string][3]string{
				"t1": {"avoid", "when editing generated protobuf files", "change the .proto file and regenerate instead of editing pb.go"},
				"t2": {"prefer", "处理金额计算时", "用整数分或十进制类型，不要用浮点数"},
			} {
				doc, _ := json.Marshal(map[string]any{"goal": "a past task", "transferable_heuristics": []map[string]string{
					{"kind": l[0], "trigger": l[1], "rule": l[2], "why": "it went wrong before", "evidence": task}}})
				if _, err := e.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{TaskID: task, Kind: "experience", Result: doc}); err != nil {
					t.Fatal(err)
				}
			}
			e.Close()

			// Reopened with the documented embedder: everything re-embedded.
			e, err = kaizen.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if e.EmbedderID() != tc.id {
				t.Fatalf("embedder %q, want %q", e.EmbedderID(), tc.id)
			}
			res, err := e.ReembedWith(ctx, kaizen.ReembedOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for k, n := range res.Items {
				if n != 0 {
					t.Errorf("%d %s left to re-embed after the automatic re-embedding", n, k)
				}
			}
			rec, err := e.Recall(ctx, kaizen.RecallInput{Query: "edit the generated pb.go protobuf file", DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Heuristics) == 0 || !strings.Contains(rec.Heuristics[0].Rule, ".proto") {
				t.Fatalf("recall through %s: %+v", tc.id, rec)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if srv.models[tc.model] == 0 || len(srv.models) != 1 || srv.texts < 3 {
				t.Errorf("requests by model %v (%d texts), want %s for the stored lessons and the query", srv.models, srv.texts, tc.model)
			}
			if len(srv.auth) != 1 || !srv.auth[tc.auth] {
				t.Errorf("authorization headers %v, want only %q", srv.auth, tc.auth)
			}
		})
	}
}
