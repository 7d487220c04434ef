package experience

import (
	"fmt"
	"slices"
	"testing"
)

func TestRRF(t *testing.T) {
	t.Parallel()
	got := RRF(60, []string{"a", "b", "c"}, []string{"c", "a", "d"})
	want := []Fused{
		{"a", 1.0/61 + 1.0/62, []int{1, 2}},
		{"c", 1.0/63 + 1.0/61, []int{3, 1}},
		{"b", 1.0 / 62, []int{2, 0}},
		{"d", 1.0 / 63, []int{0, 3}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].RefID != want[i].RefID || !slices.Equal(got[i].Ranks, want[i].Ranks) {
			t.Errorf("%d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	// Exact sums, added in list order.
	if got[0].Score != float64(1)/61+float64(1)/62 || got[2].Score != float64(1)/62 {
		t.Errorf("scores %v %v", got[0].Score, got[2].Score)
	}
}

func TestRRFTiesDuplicatesAndEdges(t *testing.T) {
	t.Parallel()
	// Equal scores are ordered by RefID.
	got := RRF(10, []string{"z", "y"}, []string{"y", "z"})
	if got[0].RefID != "y" || got[1].RefID != "z" || got[0].Score != got[1].Score {
		t.Errorf("ties: %+v", got)
	}
	// A duplicate within a list counts once, at its best rank; an empty id
	// is skipped but keeps its place.
	got = RRF(1, []string{"a", "", "a", "b"})
	if len(got) != 2 || got[0].RefID != "a" || got[0].Score != 0.5 || got[0].Ranks[0] != 1 ||
		got[1].RefID != "b" || got[1].Score != 0.2 || got[1].Ranks[0] != 4 {
		t.Errorf("duplicates: %+v", got)
	}
	// k < 1 means 60; no lists, empty lists: nothing.
	if got := RRF(0, []string{"a"}); got[0].Score != float64(1)/61 {
		t.Errorf("k=0: %+v", got)
	}
	if got := RRF(-5, []string{"a"}); got[0].Score != float64(1)/61 {
		t.Errorf("k<0: %+v", got)
	}
	if got := RRF(60); len(got) != 0 {
		t.Errorf("no lists: %+v", got)
	}
	if got := RRF(60, nil, []string{}); len(got) != 0 {
		t.Errorf("empty lists: %+v", got)
	}
	// A huge k does not overflow into negative scores.
	if got := RRF(int(^uint(0)>>1), []string{"a"}); got[0].Score <= 0 {
		t.Errorf("huge k: %+v", got)
	}
	// Ranks has one entry per list.
	if got := RRF(60, []string{"a"}, nil, []string{"a"}); !slices.Equal(got[0].Ranks, []int{1, 0, 1}) {
		t.Errorf("ranks %v", got[0].Ranks)
	}
}

func TestRRFDeterministic(t *testing.T) {
	t.Parallel()
	var a, b []string
	for i := range 200 {
		a = append(a, fmt.Sprintf("m%03d", (i*37)%200))
		b = append(b, fmt.Sprintf("m%03d", (i*91)%200))
	}
	first := RRF(60, a, b)
	for range 5 {
		again := RRF(60, a, b)
		for i := range first {
			if first[i].RefID != again[i].RefID || first[i].Score != again[i].Score {
				t.Fatalf("run differs at %d", i)
			}
		}
	}
	for i := 1; i < len(first); i++ {
		if first[i].Score > first[i-1].Score || (first[i].Score == first[i-1].Score && first[i].RefID < first[i-1].RefID) {
			t.Fatalf("not sorted at %d: %+v %+v", i, first[i-1], first[i])
		}
	}
}

func BenchmarkRRF(b *testing.B) {
	var x, y []string
	for i := range 100 {
		x = append(x, fmt.Sprintf("m%03d", i))
		y = append(y, fmt.Sprintf("m%03d", (i*7)%150))
	}
	for b.Loop() {
		RRF(60, x, y)
	}
}
