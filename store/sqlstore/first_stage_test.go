package sqlstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The first stage keeps the same documents whether it reads every posting
// of the terms it reads or, when it reads one term, only that term's
// newest rerankPool(limit) (and then no more), or, when rarer terms come
// before a common one, the common one's newest and those with a rarer term
// (fewer than the whole list).
func TestFirstStageOneTermReadsOnlyThePool(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	order := func(a, b string) int { return strings.Compare(b, a) } // newest (largest) first
	twoTerms := 0
	for it := range 300 {
		// postings of each term, newest first (as the stores answer)
		lists := map[string][]string{}
		df := map[string]int64{}
		terms := []string{"rare", "mid", "common"}
		sizes := []int{1 + rng.IntN(300), 1 + rng.IntN(2000), 3000 + rng.IntN(2000)}
		for i, term := range terms {
			seen := map[string]bool{}
			for len(seen) < sizes[i] {
				seen[fmt.Sprintf("ref-%06d", rng.IntN(10_000))] = true
			}
			ids := make([]string, 0, len(seen))
			for id := range seen {
				ids = append(ids, id)
			}
			slices.SortFunc(ids, order)
			lists[term], df[term] = ids, int64(len(ids))
		}
		query := terms[:1+rng.IntN(len(terms))]
		slices.SortFunc(query, func(a, b string) int { return int(df[a] - df[b]) }) // rarest first
		b := newBM25(query, df, 10_000, 50_000)
		limit := []int{1, 5, 24, 40}[rng.IntN(4)]
		read := 0
		honour := func(reads []termRead) ([][]string, error) {
			out := make([][]string, len(reads))
			for i, r := range reads {
				ids := lists[r.term]
				if r.newest && len(ids) > r.limit {
					ids = ids[:r.limit]
				}
				read += len(ids)
				if len(r.also) > 0 { // and the term's documents with a rarer term
					ids = slices.Clone(ids)
					for _, other := range r.also {
						for _, id := range lists[other] {
							if slices.Contains(lists[r.term], id) && !slices.Contains(ids, id) {
								ids = append(ids, id)
								read++
							}
						}
					}
				}
				out[i] = ids
			}
			return out, nil
		}
		all := func(reads []termRead) ([][]string, error) { // every posting, but the budget's
			out := make([][]string, len(reads))
			for i, r := range reads {
				ids := lists[r.term]
				if len(ids) > PostingBudget {
					ids = ids[:PostingBudget]
				}
				out[i] = ids
			}
			return out, nil
		}
		got, err := firstStage(b, limit, order, honour)
		if err != nil {
			t.Fatal(err)
		}
		want, err := firstStage(b, limit, order, all)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("iteration %d, query %v, limit %d: the first stage kept\n%v\nreading every posting\n%v", it, query, limit, got, want)
		}
		reads := postingReads(b, limit)
		if len(reads) == 1 && read > rerankPool(limit) {
			t.Fatalf("iteration %d: one term read, %d postings read for a pool of %d", it, read, rerankPool(limit))
		}
		if len(reads) == 2 && 2*df[reads[0].term]+int64(rerankPool(limit)) < df[reads[1].term] {
			if limited := reads[1]; !limited.newest || len(limited.also) != 1 {
				t.Fatalf("iteration %d: a rare and a common term (%v), the common one's postings read whole", it, df)
			}
			if whole := df[reads[0].term] + df[reads[1].term]; int64(read) >= whole {
				t.Fatalf("iteration %d: %d postings read, as many as the two lists (%d)", it, read, whole)
			}
			twoTerms++
		}
	}
	if twoTerms == 0 {
		t.Fatal("no search read a rare and a common term")
	}
}
