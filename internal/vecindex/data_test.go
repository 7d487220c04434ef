package vecindex

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// dataset is a set of unit vectors with ids, and queries.
type dataset struct {
	dim     int
	ids     []string
	vecs    [][]float32
	queries [][]float32
}

func gaussUnit(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return unitOf(v)
}

func unitOf(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	inv := 1 / math.Sqrt(ss)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return v
}

// mix returns unit(a + w·noise) with a gaussian noise of norm about 1.
func mix(rng *rand.Rand, a []float32, w float64) []float32 {
	v := make([]float32, len(a))
	s := w / math.Sqrt(float64(len(a)))
	for i := range v {
		v[i] = a[i] + float32(rng.NormFloat64()*s)
	}
	return unitOf(v)
}

// uniformData draws n vectors and nq queries uniformly on the sphere.
func uniformData(seed uint64, n, nq, dim int) *dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := &dataset{dim: dim}
	for i := range n {
		d.ids = append(d.ids, "v"+strconv.Itoa(i))
		d.vecs = append(d.vecs, gaussUnit(rng, dim))
	}
	for range nq {
		d.queries = append(d.queries, gaussUnit(rng, dim))
	}
	return d
}

// clusteredData draws vectors shaped like text embeddings: topics, each
// with clusters of about 100 items; an item's cosine to its cluster's
// centre is about 0.7 and to another item of its cluster about 0.5.
// Queries are drawn the same way.
var itemNoise = 1.5

func clusteredData(seed uint64, n, nq, dim int) *dataset {
	rng := rand.New(rand.NewPCG(seed, 2))
	topics := make([][]float32, 50)
	for i := range topics {
		topics[i] = gaussUnit(rng, dim)
	}
	clusters := make([][]float32, max(1, n/100))
	for i := range clusters {
		clusters[i] = mix(rng, topics[rng.IntN(len(topics))], 1)
	}
	d := &dataset{dim: dim}
	draw := func() []float32 { return mix(rng, clusters[rng.IntN(len(clusters))], itemNoise) }
	for i := range n {
		d.ids = append(d.ids, "v"+strconv.Itoa(i))
		d.vecs = append(d.vecs, draw())
	}
	for range nq {
		d.queries = append(d.queries, draw())
	}
	return d
}

// exact returns the ids of the k vectors with the highest float cosine,
// ties by id.
func (d *dataset) exact(q []float32, k int, keep func(string) bool) []string {
	type sc struct {
		s  float64
		id string
	}
	var all []sc
	for i, v := range d.vecs {
		if keep != nil && !keep(d.ids[i]) {
			continue
		}
		var s float64
		for j := range v {
			s += float64(v[j]) * float64(q[j])
		}
		all = append(all, sc{s, d.ids[i]})
	}
	slices.SortFunc(all, func(a, b sc) int {
		if c := cmp.Compare(b.s, a.s); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	out := make([]string, 0, k)
	for _, x := range all[:min(k, len(all))] {
		out = append(out, x.id)
	}
	return out
}

func (d *dataset) index(opts Options) (*Index, error) {
	ix, err := New(d.dim, opts)
	if err != nil {
		return nil, err
	}
	for i, v := range d.vecs {
		if err := ix.Add(d.ids[i], v); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// recallAt returns the mean share of the exact top k that the index finds.
func (d *dataset) recallAt(ix *Index, k int, keep func(string) bool) (float64, error) {
	var found, total int
	for _, q := range d.queries {
		hits, err := ix.SearchFilter(q, k, keep)
		if err != nil {
			return 0, err
		}
		want := d.exact(q, k, keep)
		got := map[string]bool{}
		for _, h := range hits {
			got[h.ID] = true
		}
		for _, id := range want {
			if got[id] {
				found++
			}
		}
		total += len(want)
	}
	return float64(found) / float64(total), nil
}
