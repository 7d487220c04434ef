package model

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func TestCosine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		a, b []float32
		want float32
	}{
		{"identical", []float32{1, 2, 3}, []float32{1, 2, 3}, 1},
		{"scaled", []float32{1, 2, 3}, []float32{2, 4, 6}, 1},
		{"opposite", []float32{1, 0}, []float32{-3, 0}, -1},
		{"orthogonal", []float32{1, 0}, []float32{0, 5}, 0},
		{"zero vector", []float32{0, 0}, []float32{1, 1}, 0},
		{"empty", nil, nil, 0},
	}
	for _, tc := range cases {
		got, err := Cosine(tc.a, tc.b)
		if err != nil || math.Abs(float64(got-tc.want)) > 1e-6 {
			t.Errorf("%s: Cosine = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestVectorsOfDifferentDimensionsAreAnError(t *testing.T) {
	t.Parallel()
	a, b := make([]float32, 384), make([]float32, 512)
	for name, f := range map[string]func([]float32, []float32) (float32, error){"Cosine": Cosine, "Dot": Dot} {
		_, err := f(a, b)
		var de *DimensionError
		if !errors.As(err, &de) || de.Want != 384 || de.Got != 512 {
			t.Errorf("%s: err = %v, want a *DimensionError, never a silent 0", name, err)
		}
	}
}

func TestDotMatchesCosineOnUnitVectors(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 70).Draw(t, "n")
		gen := rapid.SliceOfN(rapid.Float32Range(-10, 10), n, n)
		a, b := gen.Draw(t, "a"), gen.Draw(t, "b")
		if Normalize(a) == 0 || Normalize(b) == 0 {
			return
		}
		d, err1 := Dot(a, b)
		c, err2 := Cosine(a, b)
		if err1 != nil || err2 != nil || math.Abs(float64(d-c)) > 1e-4 {
			t.Fatalf("dot %v cosine %v (%v %v)", d, c, err1, err2)
		}
		if c < -1 || c > 1 {
			t.Fatalf("cosine %v out of range", c)
		}
	})
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	v := []float32{3, 4}
	if n := Normalize(v); n != 5 || v[0] != 0.6 || v[1] != 0.8 {
		t.Errorf("Normalize: norm %v, v %v", n, v)
	}
	z := []float32{0, 0}
	if n := Normalize(z); n != 0 || z[0] != 0 {
		t.Errorf("zero vector: %v %v", n, z)
	}
}

func TestVectorIdentity(t *testing.T) {
	t.Parallel()
	offline := NewOfflineEmbedder(512)
	stored := IdentityOf(offline)
	if stored != (VectorIdentity{Embedder: "offline-hash-v5@512", Dimension: 512}) {
		t.Fatalf("IdentityOf = %+v", stored)
	}
	if !stored.Matches(NewOfflineEmbedder(512)) || stored.NeedsReembed(offline) {
		t.Error("the same embedder must match")
	}
	for name, e := range map[string]Embedder{
		"other dimension": NewOfflineEmbedder(256),
		"other model":     &EmbeddingClient{id: "openai:text-embedding-3-small@512", dim: 512},
		"nil":             nil,
	} {
		if stored.Matches(e) || !stored.NeedsReembed(e) {
			t.Errorf("%s: a different embedder must not match", name)
		}
	}
	if err := stored.Check(make([]float32, 512)); err != nil {
		t.Error(err)
	}
	var de *DimensionError
	if err := stored.Check(make([]float32, 384)); !errors.As(err, &de) {
		t.Errorf("Check of a 384-d vector: %v", err)
	}
	if got := stored.String(); got != "offline-hash-v5@512 (512-d)" {
		t.Errorf("String = %q", got)
	}
}

func TestEncodeDecodeVector(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.SliceOf(rapid.Float32()).Draw(t, "v")
		got, err := DecodeVector(EncodeVector(v), len(v))
		if err != nil {
			t.Fatal(err)
		}
		for i := range v {
			if math.Float32bits(v[i]) != math.Float32bits(got[i]) {
				t.Fatalf("value %d: %v != %v", i, v[i], got[i])
			}
		}
	})
	if _, err := DecodeVector([]byte{1, 2, 3}, -1); err == nil {
		t.Error("3 bytes: want an error")
	}
	if _, err := DecodeVector(make([]byte, 8), 3); err == nil {
		t.Error("2 values for dimension 3: want an error")
	}
	if diff := cmp.Diff([]byte{0, 0, 0x80, 0x3f}, EncodeVector([]float32{1})); diff != "" {
		t.Errorf("layout is not little-endian float32: %s", diff)
	}
}
