package vecindex

import (
	"cmp"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

const (
	// samplePerList is the number of sampled vectors per list that the
	// k-means of a training sees.
	samplePerList = 32
	// lloydIters is the number of Lloyd iterations of a training.
	lloydIters = 6
	// groupAbove is the number of lists above which the nearest centroid
	// is found in two levels: centroids are grouped by a small k-means of
	// their own, and only the members of the groupsProbed groups nearest
	// to a vector are compared with it.
	groupAbove   = 64
	groupsProbed = 3
	// trainSeed seeds the sampling and reseeding of the k-means.
	trainSeed = 0x6b61697a656e
)

// quantizer is the coarse quantizer of the IVF: the unit centroids of the
// lists, in float for ranking lists against a query and quantized for
// assigning stored codes to lists.
type quantizer struct {
	dim, stride int
	cent        []float32 // lists × dim, unit length
	codes       codebook  // the centroids, quantized
	groups      codebook  // group centres, when grouped
	members     [][]int32 // the centroids of each group
}

// codebook holds unit vectors quantized and laid out as dotCodes
// multipliers, to score stored codes against them.
type codebook struct {
	n   int
	ys  []uint64 // n × stride/2
	sum []int32
	inv []float32
}

func newCodebook(vecs []float32, dim, stride int) codebook {
	n := len(vecs) / dim
	cb := codebook{n: n, ys: make([]uint64, n*stride/2), sum: make([]int32, n), inv: make([]float32, n)}
	code := make([]byte, stride)
	for i := range n {
		cb.sum[i], cb.inv[i] = quantize(code, vecs[i*dim:(i+1)*dim])
		prepare(cb.ys[i*stride/2:(i+1)*stride/2], code)
	}
	return cb
}

// score is proportional to the cosine of entry i and the stored code b
// (by a factor that depends on b only).
func (cb *codebook) score(i int, b []byte) float32 {
	w := len(cb.ys) / cb.n
	d := dotCodes(cb.ys[i*w:(i+1)*w], b)
	return float32(d-codeBias*cb.sum[i]) * cb.inv[i]
}

// newQuantizer builds a quantizer over unit centroids.
func newQuantizer(cent []float32, dim, stride int) *quantizer {
	q := &quantizer{dim: dim, stride: stride, cent: cent, codes: newCodebook(cent, dim, stride)}
	lists := len(cent) / dim
	if lists <= groupAbove {
		return q
	}
	g := int(math.Ceil(math.Sqrt(float64(lists))))
	centres := make([]float32, g*dim)
	for i := range g {
		copy(centres[i*dim:(i+1)*dim], cent[(i*lists/g)*dim:])
	}
	asg := make([]int32, lists)
	sums := make([]float64, g*dim)
	for it := 0; ; it++ {
		parallel(lists, func(lo, hi int) {
			for c := lo; c < hi; c++ {
				v := cent[c*dim : (c+1)*dim]
				best, bs := 0, float32(math.Inf(-1))
				for j := range g {
					if s := dotFloat(v, centres[j*dim:(j+1)*dim]); s > bs {
						best, bs = j, s
					}
				}
				asg[c] = int32(best)
			}
		})
		if it == 4 {
			break
		}
		clear(sums)
		for c, j := range asg {
			accumulate(sums[int(j)*dim:(int(j)+1)*dim], cent[c*dim:(c+1)*dim], 1)
		}
		for j := range g {
			// A group left empty keeps its centre and stays empty.
			setUnit(centres[j*dim:(j+1)*dim], sums[j*dim:(j+1)*dim])
		}
	}
	members := make([][]int32, g)
	for c, j := range asg {
		members[j] = append(members[j], int32(c))
	}
	kept := centres[:0]
	for j := range g {
		if len(members[j]) > 0 {
			kept = append(kept, centres[j*dim:(j+1)*dim]...)
			q.members = append(q.members, members[j])
		}
	}
	q.groups = newCodebook(kept, dim, stride)
	return q
}

// accumulate adds w·v to sum.
func accumulate(sum []float64, v []float32, w float32) {
	sum = sum[:len(v)]
	for i, x := range v {
		sum[i] += float64(x * w)
	}
}

// setUnit sets dst to sum scaled to unit length and reports whether sum
// had a length; a zero sum leaves dst unchanged.
func setUnit(dst []float32, sum []float64) bool {
	var ss float64
	for _, x := range sum {
		ss += x * x
	}
	if ss == 0 {
		return false
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range sum {
		dst[i] = float32(x * inv)
	}
	return true
}

// nearest returns the list whose centroid is nearest to the stored code b.
func (q *quantizer) nearest(b []byte) int {
	if len(q.members) == 0 {
		best, bs := 0, float32(math.Inf(-1))
		for c := range q.codes.n {
			if s := q.codes.score(c, b); s > bs {
				best, bs = c, s
			}
		}
		return best
	}
	var tg [groupsProbed]int
	var ts [groupsProbed]float32
	for i := range ts {
		tg[i], ts[i] = -1, float32(math.Inf(-1))
	}
	for g := range q.groups.n {
		s := q.groups.score(g, b)
		if s <= ts[groupsProbed-1] {
			continue
		}
		i := groupsProbed - 1
		for i > 0 && s > ts[i-1] {
			tg[i], ts[i] = tg[i-1], ts[i-1]
			i--
		}
		tg[i], ts[i] = g, s
	}
	best, bs := 0, float32(math.Inf(-1))
	for _, g := range tg {
		if g < 0 {
			continue
		}
		for _, c := range q.members[g] {
			if s := q.codes.score(int(c), b); s > bs || (s == bs && int(c) < best) {
				best, bs = int(c), s
			}
		}
	}
	return best
}

// rank returns the lists ordered by the similarity of their centroids to
// the unit query qf, nearest first, ties by list number.
func (q *quantizer) rank(qf []float32) []int {
	n := len(q.cent) / q.dim
	type ls struct {
		s float32
		i int
	}
	all := make([]ls, n)
	for c := range n {
		all[c] = ls{dotFloat(qf, q.cent[c*q.dim:(c+1)*q.dim]), c}
	}
	slices.SortFunc(all, func(a, b ls) int {
		if c := cmp.Compare(b.s, a.s); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	order := make([]int, n)
	for i, x := range all {
		order[i] = x.i
	}
	return order
}

func (q *quantizer) bytes() int64 {
	b := 4*int64(len(q.cent)) + int64(cb(q.codes)) + int64(cb(q.groups))
	for _, m := range q.members {
		b += 24 + 4*int64(cap(m))
	}
	return b
}

func cb(c codebook) int { return 8*len(c.ys) + 8*c.n }

// ref names a stored vector by list and position.
type ref struct{ part, idx int32 }

func (ix *Index) code(r ref) []byte {
	return ix.parts[r.part].codes[int(r.idx)*ix.stride : int(r.idx+1)*ix.stride]
}

// unit writes the dequantized unit vector of r into dst.
func (ix *Index) unit(dst []float32, r ref) {
	b := ix.code(r)[:ix.dim]
	inv := ix.parts[r.part].inv[r.idx]
	for i, x := range b {
		dst[i] = decode[x] * inv
	}
}

// train builds the quantizer from the current vectors and redistributes
// them into its lists. The caller holds the write lock.
func (ix *Index) train() {
	n, dim := ix.n, ix.dim
	lists := ix.opts.Lists
	if lists == 0 {
		lists = int(math.Round(math.Sqrt(float64(n))))
	}
	lists = max(1, min(lists, n))

	refs := make([]ref, 0, n)
	for p := range ix.parts {
		for i := range ix.parts[p].ids {
			refs = append(refs, ref{int32(p), int32(i)})
		}
	}
	rng := rand.New(rand.NewPCG(trainSeed, uint64(n)))
	s := min(n, lists*samplePerList)
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	for i := range s {
		j := i + rng.IntN(n-i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	sample := make([]ref, s)
	for i := range sample {
		sample[i] = refs[perm[i]]
	}

	// Spherical k-means on the sample, from distinct sampled vectors.
	cent := make([]float32, lists*dim)
	for c := range lists {
		ix.unit(cent[c*dim:(c+1)*dim], sample[c])
	}
	asg := make([]int32, s)
	sums := make([]float64, lists*dim)
	counts := make([]int, lists)
	v := make([]float32, dim)
	for range lloydIters {
		q := newQuantizer(cent, dim, ix.stride)
		parallel(s, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				asg[i] = int32(q.nearest(ix.code(sample[i])))
			}
		})
		clear(sums)
		clear(counts)
		for i, c := range asg {
			ix.unit(v, sample[i])
			accumulate(sums[int(c)*dim:(int(c)+1)*dim], v, 1)
			counts[c]++
		}
		for c := range lists {
			if counts[c] == 0 || !setUnit(cent[c*dim:(c+1)*dim], sums[c*dim:(c+1)*dim]) {
				// An empty list restarts from a random sampled vector.
				ix.unit(cent[c*dim:(c+1)*dim], sample[rng.IntN(s)])
			}
		}
	}
	q := newQuantizer(cent, dim, ix.stride)

	all := make([]int32, n)
	parallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			all[i] = int32(q.nearest(ix.code(refs[i])))
		}
	})
	size := make([]int, lists)
	for _, c := range all {
		size[c]++
	}
	parts := make([]part, lists)
	for c := range parts {
		parts[c] = part{
			ids:   make([]string, 0, size[c]),
			codes: make([]byte, 0, size[c]*ix.stride),
			inv:   make([]float32, 0, size[c]),
		}
	}
	for i, r := range refs {
		c := all[i]
		pt := &parts[c]
		old := &ix.parts[r.part]
		id := old.ids[r.idx]
		ix.where[id] = loc{c, int32(len(pt.ids))}
		pt.ids = append(pt.ids, id)
		pt.codes = append(pt.codes, ix.code(r)...)
		pt.inv = append(pt.inv, old.inv[r.idx])
	}
	ix.parts, ix.q, ix.trainedN = parts, q, n
}

// parallel runs f over [0, n) split into one contiguous range per
// processor; each range's results must not depend on the others.
func parallel(n int, f func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	if w <= 1 || n < 256 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + w - 1) / w
	for lo := 0; lo < n; lo += chunk {
		wg.Go(func() { f(lo, min(lo+chunk, n)) })
	}
	wg.Wait()
}
