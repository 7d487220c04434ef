package viewer_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
)

// TestLearningPageRankingsByKind: migrations succeed with sequential
// order and fail with parallelization, bugfixes the other way round; the
// learning page shows one ranking per kind of task, each led by its own
// best strategy with the other one marked to avoid there, and a
// strategy's text from an agent is escaped.
func TestLearningPageRankingsByKind(t *testing.T) {
	t.Parallel()
	b := setup(t, withClock)
	const seq, par, odd = "Sequential execution order", "Maximize parallelization", "<b>bold</b> strategy"
	for i := range 24 {
		mig := i%2 == 0
		for j, p := range []string{seq, par} {
			desc := "fix the crash on empty carts"
			if mig {
				desc = "add a column to the orders table"
			}
			ok := (p == seq) == mig
			in := kaizen.OutcomeInput{TaskID: fmt.Sprintf("t%d-%d", i, j), Task: desc, Patterns: []string{p}, Success: ptr(ok)}
			if !ok {
				in.ErrorCount, in.RetryCount = ptr(3), ptr(2)
			}
			b.record(in)
			b.clock.Advance(time.Hour)
		}
	}
	b.record(kaizen.OutcomeInput{TaskID: "odd", Task: "add a column to the users table", Patterns: []string{odd}})
	r := b.must(b.get("/learning"), http.StatusOK)
	body := r.body[strings.Index(r.body, `id="kinds-title"`):]
	contains(t, "rankings", body, "Rankings by kind of task", `id="kind-migration"`, `id="kind-bugfix"`,
		"&lt;b&gt;bold&lt;/b&gt; strategy", "avoid here")
	if strings.Contains(body, "<b>bold</b>") {
		t.Error("a strategy's text is not escaped")
	}
	mig := body[strings.Index(body, `id="kind-migration"`):strings.Index(body, `id="kind-bugfix"`)]
	bug := body[strings.Index(body, `id="kind-bugfix"`):]
	if !(strings.Index(mig, seq) < strings.Index(mig, par)) || !strings.Contains(mig[strings.Index(mig, par):], "avoid here") {
		t.Errorf("migration ranking does not lead with %q and avoid %q:\n%s", seq, par, mig)
	}
	if !(strings.Index(bug, par) < strings.Index(bug, seq)) {
		t.Errorf("bugfix ranking does not lead with %q:\n%s", par, bug)
	}
}
