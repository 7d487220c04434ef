package vecindex

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
)

func TestNewDimension(t *testing.T) {
	t.Parallel()
	for _, dim := range []int{-1, 0, MaxDim + 1} {
		if _, err := New(dim, Options{}); !errors.Is(err, ErrDimension) {
			t.Errorf("New(%d): err %v, want ErrDimension", dim, err)
		}
	}
	for _, dim := range []int{1, 17, MaxDim} {
		ix, err := New(dim, Options{})
		if err != nil {
			t.Fatalf("New(%d): %v", dim, err)
		}
		if ix.Dim() != dim || ix.Len() != 0 {
			t.Errorf("New(%d): Dim %d Len %d", dim, ix.Dim(), ix.Len())
		}
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	ix, _ := New(4, Options{})
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	cases := []struct {
		id   string
		vec  []float32
		want error
	}{
		{"", []float32{1, 0, 0, 0}, ErrEmptyID},
		{"a", []float32{1, 0, 0}, ErrLength},
		{"a", []float32{1, 0, 0, 0, 0}, ErrLength},
		{"a", nil, ErrLength},
		{"a", []float32{0, 0, 0, 0}, ErrZeroVector},
		{"a", []float32{1, nan, 0, 0}, ErrNotFinite},
		{"a", []float32{1, 0, -inf, 0}, ErrNotFinite},
	}
	for _, c := range cases {
		err := ix.Add(c.id, c.vec)
		if !errors.Is(err, c.want) {
			t.Errorf("Add(%q, %v): %v, want %v", c.id, c.vec, err, c.want)
		}
		var ie *InputError
		if !errors.As(err, &ie) || ie.Op != "add" {
			t.Errorf("Add(%q, %v): %T %v, want *InputError op add", c.id, c.vec, err, err)
		}
		if c.want == ErrEmptyID {
			continue
		}
		if _, err := ix.Search(c.vec, 3); !errors.Is(err, c.want) {
			t.Errorf("Search(%v): %v, want %v", c.vec, err, c.want)
		}
	}
	if ix.Len() != 0 {
		t.Fatalf("Len after refused adds = %d", ix.Len())
	}
	// Tiny and huge finite components normalise.
	if err := ix.Add("tiny", []float32{1e-40, 0, 0, 0}); err != nil {
		t.Errorf("Add(denormal): %v", err)
	}
	if err := ix.Add("huge", []float32{3e38, 3e38, 0, 0}); err != nil {
		t.Errorf("Add(huge): %v", err)
	}
}

func TestSearchK(t *testing.T) {
	t.Parallel()
	ix, _ := New(3, Options{})
	q := []float32{1, 0, 0}
	for _, k := range []int{0, -1, 5} {
		hits, err := ix.Search(q, k)
		if err != nil || hits == nil || len(hits) != 0 {
			t.Errorf("empty index, k=%d: %v %v, want empty", k, hits, err)
		}
	}
	ix.Add("x", []float32{1, 0, 0})
	ix.Add("y", []float32{0, 1, 0})
	ix.Add("z", []float32{-1, 0, 0})
	if hits, _ := ix.Search(q, 0); len(hits) != 0 {
		t.Errorf("k=0: %v", hits)
	}
	hits, _ := ix.Search(q, 10)
	want := []Hit{{"x", 1}, {"y", 0}, {"z", -1}}
	if !slices.Equal(hits, want) {
		t.Errorf("k>n: %v, want %v", hits, want)
	}
	hits, _ = ix.Search(q, 1)
	if !slices.Equal(hits, want[:1]) {
		t.Errorf("k=1: %v", hits)
	}
}

func TestTiesByID(t *testing.T) {
	t.Parallel()
	ix, _ := New(8, Options{})
	v := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	for _, id := range []string{"c", "a", "d", "b"} {
		ix.Add(id, v)
	}
	hits, _ := ix.Search(v, 3)
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
		if h.Score != hits[0].Score {
			t.Errorf("score %v != %v", h.Score, hits[0].Score)
		}
	}
	if !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Errorf("ids %v, want [a b c]", ids)
	}
}

func TestDotCodes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	for it := range 300 {
		stride := 16 * (1 + rng.IntN(MaxDim/16))
		if it < 2 {
			stride = MaxDim
		}
		a := make([]byte, stride)
		b := make([]byte, stride)
		var want, suma int64
		for i := range a {
			switch it % 3 {
			case 0: // the extremes that maximise the cross terms
				a[i], b[i] = 1, 255
			case 1:
				a[i], b[i] = 255, 255
			default:
				a[i], b[i] = byte(1+rng.IntN(255)), byte(1+rng.IntN(255))
			}
			ca, cb := int64(a[i])-codeBias, int64(b[i])-codeBias
			want += ca * cb
			suma += ca
		}
		ys := make([]uint64, stride/2)
		prepare(ys, a)
		if got := int64(dotCodes(ys, b)) - codeBias*suma; got != want {
			t.Fatalf("stride %d case %d: %d, want %d", stride, it%3, got, want)
		}
	}
}

// separated returns nq queries each with 10 vectors at cosines 0.95,
// 0.91, … 0.59 (gaps far above the quantization error) among random
// vectors whose cosines to every query are near 0.
func separated(seed uint64, dim, nq, noise int) *dataset {
	rng := rand.New(rand.NewPCG(seed, 4))
	d := &dataset{dim: dim}
	for range noise {
		d.ids = append(d.ids, fmt.Sprintf("n%05d", len(d.ids)))
		d.vecs = append(d.vecs, gaussUnit(rng, dim))
	}
	for qi := range nq {
		q := gaussUnit(rng, dim)
		d.queries = append(d.queries, q)
		for j := range 10 {
			r := gaussUnit(rng, dim)
			var p float32
			for i := range r {
				p += r[i] * q[i]
			}
			for i := range r {
				r[i] -= p * q[i]
			}
			r = unitOf(r)
			c := 0.95 - 0.04*float64(j)
			s := math.Sqrt(1 - c*c)
			v := make([]float32, dim)
			for i := range v {
				v[i] = float32(c*float64(q[i]) + s*float64(r[i]))
			}
			d.ids = append(d.ids, fmt.Sprintf("q%03d-%d", qi, j))
			d.vecs = append(d.vecs, v)
		}
	}
	return d
}

func TestExactSeparated(t *testing.T) {
	t.Parallel()
	for _, dim := range []int{64, 512, 1000} {
		d := separated(uint64(dim), dim, 20, 1800)
		ix, err := d.index(Options{})
		if err != nil {
			t.Fatal(err)
		}
		for qi, q := range d.queries {
			hits, err := ix.Search(q, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 10 {
				t.Fatalf("dim %d: %d hits", dim, len(hits))
			}
			for j, h := range hits {
				want := fmt.Sprintf("q%03d-%d", qi, j)
				if h.ID != want {
					t.Fatalf("dim %d query %d: hit %d is %s, want %s", dim, qi, j, h.ID, want)
				}
				if c := 0.95 - 0.04*float64(j); math.Abs(float64(h.Score)-c) > 0.01 {
					t.Errorf("dim %d: score of %s = %v, want %v±0.01", dim, h.ID, h.Score, c)
				}
			}
		}
	}
}

func TestExactRandom(t *testing.T) {
	t.Parallel()
	// Top 10s of uniformly random vectors are separated by gaps of the
	// order of the quantization error (rms 0.0003 at dim 512), so exact
	// mode may swap an item at the boundary with one of almost the same
	// cosine, never more.
	const tie = 0.003
	d := uniformData(5, 2000, 100, 512)
	ix, _ := d.index(Options{})
	found, swapped := 0, 0
	for _, q := range d.queries {
		hits, err := ix.Search(q, 10)
		if err != nil {
			t.Fatal(err)
		}
		cos := func(id string) float64 {
			n, _ := strconv.Atoi(id[1:])
			var s float64
			for i, x := range d.vecs[n] {
				s += float64(x) * float64(q[i])
			}
			return s
		}
		got := map[string]bool{}
		lowest := 2.0
		for _, h := range hits {
			got[h.ID] = true
			lowest = min(lowest, cos(h.ID))
		}
		for _, id := range d.exact(q, 10, nil) {
			switch {
			case got[id]:
				found++
			case cos(id)-lowest <= tie:
				swapped++
			default:
				t.Errorf("missed %s at cosine %.4f; lowest hit %.4f", id, cos(id), lowest)
			}
		}
	}
	r := float64(found) / float64(10*len(d.queries))
	t.Logf("exact mode, 2000 uniform vectors of dim 512: recall@10 = %.3f, %.3f up to ties within %v", r, float64(found+swapped)/float64(10*len(d.queries)), tie)
	if r < 0.98 {
		t.Errorf("recall@10 = %.3f, want ≥ 0.98", r)
	}
}

func TestIVFClustered(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("50,000 vectors")
	}
	d := clusteredData(7, 50000, 50, 512)
	ix, _ := d.index(Options{})
	r, err := d.recallAt(ix, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ix.q == nil || len(ix.parts) < 200 {
		t.Fatalf("not an IVF: %d lists", len(ix.parts))
	}
	t.Logf("IVF, 50,000 clustered vectors of dim 512, %d lists: recall@10 = %.3f", len(ix.parts), r)
	if r < 0.95 {
		t.Errorf("recall@10 = %.3f, want ≥ 0.95", r)
	}
}

func TestIVFUniform(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("20,000 vectors")
	}
	// Uniformly random vectors have no structure for lists to follow:
	// this reports how far recall falls there.
	d := uniformData(8, 20000, 30, 512)
	ix, _ := d.index(Options{})
	r, _ := d.recallAt(ix, 10, nil)
	ix.opts.Probe = len(ix.parts)
	all, _ := d.recallAt(ix, 10, nil)
	t.Logf("IVF, 20,000 uniform vectors of dim 512, %d lists: recall@10 = %.3f (auto probe), %.3f (every list)", len(ix.parts), r, all)
	if all < 0.98 {
		t.Errorf("recall@10 probing every list = %.3f, want ≥ 0.98", all)
	}
}

func TestReplaceAndRemove(t *testing.T) {
	t.Parallel()
	for _, exactBelow := range []int{0, 64} { // exhaustive, then IVF
		d := clusteredData(9, 600, 0, 32)
		ix, _ := d.index(Options{ExactBelow: exactBelow})
		ix.Train()
		if (ix.q != nil) != (exactBelow == 64) {
			t.Fatalf("exactBelow %d: trained = %v", exactBelow, ix.q != nil)
		}
		// Replace v0 by the vector of v1: the length stays, and v0 now
		// ties with v1.
		if err := ix.Add("v0", d.vecs[1]); err != nil {
			t.Fatal(err)
		}
		if ix.Len() != 600 {
			t.Fatalf("Len after replace = %d", ix.Len())
		}
		hits, _ := ix.Search(d.vecs[1], 2)
		if len(hits) != 2 || hits[0].ID != "v0" || hits[1].ID != "v1" || hits[0].Score != hits[1].Score {
			t.Fatalf("after replace: %v", hits)
		}
		if ix.Remove("nope") {
			t.Error("Remove of an unknown id reported true")
		}
		// Remove every other vector; each remaining one must still be its
		// own nearest neighbour.
		for i := 0; i < 600; i += 2 {
			if !ix.Remove(d.ids[i]) {
				t.Fatalf("Remove(%s) = false", d.ids[i])
			}
		}
		if ix.Remove("v0") {
			t.Error("second Remove reported true")
		}
		if ix.Len() != 300 {
			t.Fatalf("Len = %d, want 300", ix.Len())
		}
		for i := 1; i < 600; i += 2 {
			hits, _ := ix.Search(d.vecs[i], 1)
			if len(hits) != 1 || hits[0].ID != d.ids[i] || hits[0].Score < 0.999 {
				t.Fatalf("exactBelow %d: search of %s: %v", exactBelow, d.ids[i], hits)
			}
		}
		hits, _ = ix.Search(d.vecs[0], 600)
		if len(hits) != 300 {
			t.Fatalf("%d hits, want 300", len(hits))
		}
		for _, h := range hits {
			if n, _ := strconv.Atoi(h.ID[1:]); n%2 == 0 {
				t.Fatalf("removed %s returned", h.ID)
			}
		}
		for i := 1; i < 600; i += 2 {
			ix.Remove(d.ids[i])
		}
		if hits, _ := ix.Search(d.vecs[0], 5); ix.Len() != 0 || len(hits) != 0 {
			t.Fatalf("emptied index: Len %d, hits %v", ix.Len(), hits)
		}
	}
}

func TestSearchFilterSelective(t *testing.T) {
	t.Parallel()
	d := clusteredData(10, 20000, 20, 128)
	ix, _ := d.index(Options{})
	keep := func(id string) bool {
		n, _ := strconv.Atoi(id[1:])
		return n%100 == 0 // 1% of the vectors: 200
	}
	for _, q := range d.queries {
		hits, err := ix.SearchFilter(q, 10, keep)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 10 {
			t.Fatalf("%d hits, want 10", len(hits))
		}
		for _, h := range hits {
			if !keep(h.ID) {
				t.Fatalf("filtered-out %s returned", h.ID)
			}
		}
		hits, _ = ix.SearchFilter(q, 500, keep)
		if len(hits) != 200 {
			t.Fatalf("k=500: %d hits, want every one of the 200 kept", len(hits))
		}
	}
	if ix.q == nil {
		t.Fatal("not an IVF")
	}
	r, _ := d.recallAt(ix, 10, keep)
	t.Logf("IVF with 99%% filtered out: recall@10 among kept = %.3f", r)
	if r < 0.8 {
		t.Errorf("recall@10 among kept = %.3f, want ≥ 0.8", r)
	}
	hits, _ := ix.SearchFilter(d.queries[0], 10, func(string) bool { return false })
	if len(hits) != 0 {
		t.Errorf("keep rejecting all: %v", hits)
	}
	one := func(id string) bool { return id == "v12345" }
	hits, _ = ix.SearchFilter(d.queries[0], 10, one)
	if len(hits) != 1 || hits[0].ID != "v12345" {
		t.Errorf("keep accepting one: %v", hits)
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	d := clusteredData(11, 3000, 10, 64)
	a, _ := d.index(Options{ExactBelow: 500})
	b, _ := d.index(Options{ExactBelow: 500})
	for _, q := range d.queries {
		ha, _ := a.Search(q, 20)
		hb, _ := b.Search(q, 20)
		if !slices.Equal(ha, hb) {
			t.Fatalf("different results:\n%v\n%v", ha, hb)
		}
	}
	if !slices.Equal(a.q.cent, b.q.cent) {
		t.Fatal("different centroids")
	}
}

func TestGrowthRetrains(t *testing.T) {
	t.Parallel()
	d := clusteredData(12, 4000, 1, 32)
	ix, _ := New(32, Options{ExactBelow: 1000})
	q := d.queries[0]
	for i := range 999 {
		ix.Add(d.ids[i], d.vecs[i])
	}
	ix.Search(q, 1)
	if ix.q != nil {
		t.Fatal("trained below ExactBelow")
	}
	ix.Add(d.ids[999], d.vecs[999])
	ix.Search(q, 1)
	if ix.trainedN != 1000 || len(ix.parts) != 32 {
		t.Fatalf("trainedN %d, lists %d; want 1000, 32", ix.trainedN, len(ix.parts))
	}
	for i := 1000; i < 1999; i++ {
		ix.Add(d.ids[i], d.vecs[i])
	}
	ix.Search(q, 1)
	if ix.trainedN != 1000 {
		t.Fatalf("retrained at %d before doubling", ix.trainedN)
	}
	ix.Add(d.ids[1999], d.vecs[1999])
	ix.Search(q, 1)
	if ix.trainedN != 2000 || len(ix.parts) != 45 {
		t.Fatalf("trainedN %d, lists %d; want 2000, 45", ix.trainedN, len(ix.parts))
	}
	total := 0
	for _, p := range ix.parts {
		total += len(p.ids)
		if len(p.codes) != len(p.ids)*ix.stride || len(p.inv) != len(p.ids) {
			t.Fatal("list arrays out of step")
		}
	}
	if total != 2000 || len(ix.where) != 2000 {
		t.Fatalf("%d vectors in lists, %d in map", total, len(ix.where))
	}
}

func TestBytes(t *testing.T) {
	t.Parallel()
	d := clusteredData(13, 5000, 0, 512)
	ix, _ := d.index(Options{})
	ix.Train()
	per := float64(ix.Bytes()) / 5000
	t.Logf("Bytes per vector of dim 512: %.0f", per)
	if per < 512 || per > 700 {
		t.Errorf("Bytes per vector = %.0f, want 512..700", per)
	}
}

func TestConcurrent(t *testing.T) {
	t.Parallel()
	d := clusteredData(14, 3000, 20, 64)
	ix, _ := New(64, Options{ExactBelow: 500})
	for i := range 1000 {
		ix.Add(d.ids[i], d.vecs[i])
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				hits, err := ix.Search(d.queries[(w+i)%len(d.queries)], 5)
				if err != nil || len(hits) != 5 {
					t.Errorf("search: %v %v", hits, err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := 1000; i < 3000; i++ {
			ix.Add(d.ids[i], d.vecs[i])
			if i%3 == 0 {
				ix.Remove(d.ids[i-500])
			}
		}
	})
	wg.Wait()
	if want := 3000 - len(slices.Collect(func(yield func(int) bool) {
		for i := 1000; i < 3000; i++ {
			if i%3 == 0 && !yield(i) {
				return
			}
		}
	})); ix.Len() != want {
		t.Fatalf("Len %d, want %d", ix.Len(), want)
	}
}

// Similarity scores one stored vector as Search scores its hits.
func TestSimilarity(t *testing.T) {
	d := clusteredData(9, 3000, 5, 64)
	ix, err := d.index(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range d.queries {
		hits, err := ix.Search(q, 5)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			s, ok, err := ix.Similarity(q, h.ID)
			if err != nil || !ok || s != h.Score {
				t.Fatalf("Similarity of %s = %v, %t, %v; Search scored it %v", h.ID, s, ok, err, h.Score)
			}
		}
	}
	if _, ok, err := ix.Similarity(d.queries[0], "missing"); ok || err != nil {
		t.Fatalf("a missing id: %t, %v", ok, err)
	}
	if _, _, err := ix.Similarity(make([]float32, 64), d.ids[0]); !errors.Is(err, ErrZeroVector) {
		t.Fatalf("a zero query: %v", err)
	}
}
