package model

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// VectorIdentity records which embedder made a stored vector. Store it with
// every vector; when it does not match the current embedder, re-embed the
// text instead of comparing vectors from two spaces.
type VectorIdentity struct {
	// Embedder is the [Embedder.ID].
	Embedder string `json:"embedder"`
	// Dimension is the vector length.
	Dimension int `json:"dimension"`
}

// IdentityOf returns the identity of the vectors e makes.
func IdentityOf(e Embedder) VectorIdentity {
	return VectorIdentity{Embedder: e.ID(), Dimension: e.Dimension()}
}

// Matches reports whether vectors of this identity can be compared with
// vectors e makes now: same embedder id and same dimension.
func (v VectorIdentity) Matches(e Embedder) bool {
	return e != nil && v == IdentityOf(e)
}

// NeedsReembed reports whether a vector stored with identity v must be
// recomputed with e: the inverse of [VectorIdentity.Matches], named for
// the caller's decision.
func (v VectorIdentity) NeedsReembed(e Embedder) bool { return !v.Matches(e) }

// Check verifies that vec has this identity's dimension.
func (v VectorIdentity) Check(vec []float32) error {
	if len(vec) != v.Dimension {
		return &DimensionError{Source: "vector of " + v.String(), Want: v.Dimension, Got: len(vec), Index: -1}
	}
	return nil
}

// String returns "<embedder> (<dimension>-d)".
func (v VectorIdentity) String() string {
	return v.Embedder + " (" + strconv.Itoa(v.Dimension) + "-d)"
}

// Dot returns the dot product of a and b, which must have the same length.
// On unit vectors it is the cosine similarity.
func Dot(a, b []float32) (float32, error) {
	if len(a) != len(b) {
		return 0, &DimensionError{Source: "dot product", Want: len(a), Got: len(b), Index: -1}
	}
	return dot(a, b), nil
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(a) >= 8 {
		a8, b8 := a[:8:8], b[:8:8] // one bounds check for eight products
		s0 += a8[0] * b8[0]
		s1 += a8[1] * b8[1]
		s2 += a8[2] * b8[2]
		s3 += a8[3] * b8[3]
		s4 += a8[4] * b8[4]
		s5 += a8[5] * b8[5]
		s6 += a8[6] * b8[6]
		s7 += a8[7] * b8[7]
		a, b = a[8:], b[8:]
	}
	for i := range a {
		s0 += a[i] * b[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// Cosine returns the cosine similarity of a and b, in [-1, 1]; 0 when
// either is the zero vector. Vectors of different lengths are an error,
// never a silent 0.
func Cosine(a, b []float32) (float32, error) {
	if len(a) != len(b) {
		return 0, &DimensionError{Source: "cosine", Want: len(a), Got: len(b), Index: -1}
	}
	var ab, aa, bb float64 // float64: no underflow for tiny values, no overflow for huge ones
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		ab += x * y
		aa += x * x
		bb += y * y
	}
	if aa == 0 || bb == 0 {
		return 0, nil
	}
	c := ab / (math.Sqrt(aa) * math.Sqrt(bb))
	return float32(max(-1, min(1, c))), nil
}

// Norm returns the L2 norm of v.
func Norm(v []float32) float32 { return float32(norm64(v)) }

func norm64(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// Normalize scales v to unit length in place and returns its former norm;
// the zero vector is left as it is.
func Normalize(v []float32) float32 {
	n := norm64(v)
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return float32(n)
	}
	for i, x := range v {
		v[i] = float32(float64(x) / n)
	}
	return float32(n)
}

// EncodeVector encodes v as little-endian IEEE 754 float32s, the layout
// to store in a BLOB/bytea column.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVector decodes what [EncodeVector] wrote and checks that it holds
// dim values (dim < 0 skips the check).
func DecodeVector(b []byte, dim int) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("model: decode vector: %d bytes is not a whole number of float32s", len(b))
	}
	if dim >= 0 && len(b)/4 != dim {
		return nil, &DimensionError{Source: "decode vector", Want: dim, Got: len(b) / 4, Index: -1}
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
