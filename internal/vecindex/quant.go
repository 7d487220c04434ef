package vecindex

import (
	"encoding/binary"
	"math"
)

// Codes are stored as bytes b = c+128, where c in [-127, 127] is the int8
// code of a component, so a zero component (and the padding after the last
// dimension) is the byte 128.
const codeBias = 128

// lanes selects byte j and byte j+4 of a little-endian 64-bit word into
// two 32-bit lanes.
const lanes = 0x000000FF000000FF

// padStride returns the stored length of a code: dim rounded up to a
// multiple of 16, the unit of [dotCodes].
func padStride(dim int) int { return (dim + 15) &^ 15 }

// normalize returns a unit-length copy of v, or an error for a vector that
// is zero or holds a NaN or an infinity. The sum of squares is taken in
// float64, where the squares of float32 values neither overflow nor vanish.
func normalize(v []float32) ([]float32, error) {
	var ss float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, ErrNotFinite
		}
		ss += f * f
	}
	if ss == 0 {
		return nil, ErrZeroVector
	}
	inv := 1 / math.Sqrt(ss)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out, nil
}

// quantize writes the int8 codes of v (scale max|v|/127, rounded to
// nearest) into dst as biased bytes, pads dst with the zero code, and
// returns the code's sum and 1/‖code‖. v must not be the zero vector.
func quantize(dst []byte, v []float32) (sum int32, inv float32) {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	s := 127 / float64(m)
	var ss int64
	for i, x := range v {
		c := int32(math.RoundToEven(float64(x) * s))
		c = min(max(c, -127), 127)
		dst[i] = byte(c + codeBias)
		sum += c
		ss += int64(c) * int64(c)
	}
	for i := len(v); i < len(dst); i++ {
		dst[i] = codeBias
	}
	return sum, float32(1 / math.Sqrt(float64(ss)))
}

// prepare lays out the int8 codes of a query (given as biased bytes, as
// stored) as multiplier words for [dotCodes]: for each group of 8 bytes g
// and j in 0..3, word 4g+j holds code[8g+j] in its high 32 bits and
// code[8g+j+4] in its low 32 bits, both signed. dst has len(code)/2 words.
func prepare(dst []uint64, code []byte) {
	for g := 0; g < len(code)/8; g++ {
		b := code[g*8 : g*8+8 : g*8+8]
		for j := 0; j < 4; j++ {
			hi := int64(b[j]) - codeBias
			lo := int64(b[j+4]) - codeBias
			dst[g*4+j] = uint64(lo + hi<<32)
		}
	}
}

// dotCodes returns Σ b[i]·q[i] over the biased bytes b of a stored code and
// the signed query codes q laid out by [prepare]; len(b) is a multiple of
// 16 and ys has len(b)/2 words. The caller subtracts codeBias·Σq to obtain
// the dot product of the two int8 codes.
//
// One 64-bit multiplication computes two products: with a word x holding
// bytes j and j+4 in lanes at bit 0 and bit 32 and y = q[j]·2³² + q[j+4],
// bits 32..63 of x·y accumulate b[j]·q[j] + b[j+4]·q[j+4] and bits 0..31
// accumulate the cross term b[j]·q[j+4]; the other cross term falls off
// the top. Across a code of at most 8192 dimensions, the cross terms sum to
// less than 2³¹ in magnitude, so with a bias of 2³¹ they never borrow from
// or carry into the high half, which is the exact sum.
func dotCodes(ys []uint64, b []byte) int32 {
	n := len(b) / 16
	ys = ys[:n*8]
	b = b[:n*16]
	acc0 := uint64(1) << 31
	var acc1 uint64
	for w := 0; w < n; w++ {
		bb := b[w*16 : w*16+16 : w*16+16]
		x := binary.LittleEndian.Uint64(bb[0:8])
		z := binary.LittleEndian.Uint64(bb[8:16])
		y := ys[w*8 : w*8+8 : w*8+8]
		acc0 += (x&lanes)*y[0] + ((x>>8)&lanes)*y[1] + ((x>>16)&lanes)*y[2] + ((x>>24)&lanes)*y[3]
		acc1 += (z&lanes)*y[4] + ((z>>8)&lanes)*y[5] + ((z>>16)&lanes)*y[6] + ((z>>24)&lanes)*y[7]
	}
	return int32(int64(acc0+acc1) >> 32)
}

// decode maps a biased byte to its code as a float32.
var decode = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(i - codeBias)
	}
	return t
}()

// dotFloatCode returns Σ q[i]·code[i] for a float query and a stored code
// (biased bytes, at least len(q) long).
func dotFloatCode(q []float32, b []byte) float32 {
	b = b[:len(q)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		qq := q[i : i+4 : i+4]
		bb := b[i : i+4 : i+4]
		s0 += qq[0] * decode[bb[0]]
		s1 += qq[1] * decode[bb[1]]
		s2 += qq[2] * decode[bb[2]]
		s3 += qq[3] * decode[bb[3]]
	}
	for ; i < len(q); i++ {
		s0 += q[i] * decode[b[i]]
	}
	return s0 + s1 + s2 + s3
}

// dotFloat returns Σ a[i]·b[i].
func dotFloat(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		aa := a[i : i+4 : i+4]
		bb := b[i : i+4 : i+4]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}
