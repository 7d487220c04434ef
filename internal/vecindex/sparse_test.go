package vecindex

import (
	"math/rand/v2"
	"testing"
)

// TestDotSparseEqualsDotCodes checks that the sparse scan computes the
// same integer as the dense one, for queries of every density the sparse
// scan accepts, including the extreme codes.
func TestDotSparseEqualsDotCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for it := range 300 {
		stride := padStride(1 + rng.IntN(1024))
		if it < 3 {
			stride = MaxDim
		}
		q := make([]byte, stride)
		for i := range q {
			q[i] = codeBias
		}
		nnz := rng.IntN(int(float64(stride)*sparseBelow) + 1)
		for range nnz {
			v := byte(1 + rng.IntN(255))
			if it%3 == 0 {
				v = 1 // -127
			}
			q[rng.IntN(stride)] = v
		}
		b := make([]byte, stride)
		for i := range b {
			b[i] = byte(1 + rng.IntN(255))
			if it%3 == 0 {
				b[i] = 255
			}
		}
		sq, ok := sparseOf(q)
		if !ok {
			t.Fatalf("case %d: a query with at most %d of %d nonzero codes was not taken as sparse", it, nnz, stride)
		}
		ys := make([]uint64, stride/2)
		prepare(ys, q)
		if got, want := dotSparse(sq, b), dotCodes(ys, b); got != want {
			t.Fatalf("case %d (stride %d, %d nonzero): sparse %d, dense %d", it, stride, len(sq.pos), got, want)
		}
	}
}

// TestSparseOfDense refuses dense queries.
func TestSparseOfDense(t *testing.T) {
	q := make([]byte, 64)
	for i := range q {
		q[i] = codeBias
	}
	for i := range 16 { // 25 %: the limit
		q[i] = 200
	}
	if _, ok := sparseOf(q); !ok {
		t.Fatal("16 of 64 nonzero: want sparse")
	}
	q[16] = 1
	if _, ok := sparseOf(q); ok {
		t.Fatal("17 of 64 nonzero: want dense")
	}
	if _, ok := sparseOf(make([]byte, 1<<16+16)); ok {
		t.Fatal("a code too long for 16-bit positions was taken as sparse")
	}
}

func BenchmarkDotSparse(b *testing.B) {
	c := make([]byte, 512)
	q := make([]byte, 512)
	for i := range c {
		c[i], q[i] = byte(i*13), codeBias
	}
	for i := 0; i < 512; i += 10 { // 52 nonzero, as an offline query
		q[i] = byte(i * 7)
	}
	sq, _ := sparseOf(q)
	var sink int32
	for b.Loop() {
		sink += dotSparse(sq, c)
	}
	_ = sink
}
