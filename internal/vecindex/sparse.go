package vecindex

// Sparse queries.
//
// A query whose code has few nonzero components (the offline embedder
// hashes a sentence's few dozen features into 512 dimensions: about 50 are
// nonzero after quantization) is scanned with [dotSparse], which reads only
// those components of each stored code, instead of [dotCodes], which
// multiplies every component. Both return the same integer, Σ b[i]·q[i]
// over the biased bytes b of the stored code (a zero q[i] adds nothing),
// so results do not depend on which one ran.

// sparseQuery lists the nonzero codes of a query: the positions and the
// signed codes.
type sparseQuery struct {
	pos []uint16
	val []int32
}

// sparseBelow is the share of nonzero components below which a query is
// scanned sparsely: dotCodes costs about one 64-bit multiplication per two
// components, dotSparse one load and multiplication per nonzero component
// (measured: BenchmarkDotSparse against BenchmarkDotCodes).
const sparseBelow = 0.25

// sparseOf returns the nonzero codes of a query given as biased bytes, and
// false when too many are nonzero for the sparse scan to pay (or the code
// is too long for 16-bit positions).
func sparseOf(code []byte) (sparseQuery, bool) {
	if len(code) > 1<<16 {
		return sparseQuery{}, false
	}
	limit := int(float64(len(code)) * sparseBelow)
	var q sparseQuery
	for i, b := range code {
		if b == codeBias {
			continue
		}
		if len(q.pos) >= limit {
			return sparseQuery{}, false
		}
		q.pos = append(q.pos, uint16(i))
		q.val = append(q.val, int32(b)-codeBias)
	}
	return q, true
}

// dotSparse returns Σ b[p]·v over the query's nonzero codes v at
// positions p, the same value as dotCodes for that query. Each term is at
// most 255·127 in magnitude and there are at most 8192 of them, so the sum
// fits an int32.
func dotSparse(q sparseQuery, b []byte) int32 {
	pos, val := q.pos, q.val[:len(q.pos)]
	var s0, s1 int32
	j := 0
	for ; j+2 <= len(pos); j += 2 {
		s0 += val[j] * int32(b[pos[j]])
		s1 += val[j+1] * int32(b[pos[j+1]])
	}
	if j < len(pos) {
		s0 += val[j] * int32(b[pos[j]])
	}
	return s0 + s1
}
