package learningsvc

import (
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestMentionIndex: every key finds exactly its positions, in the order
// given, with heavy duplicates and absent keys.
func TestMentionIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 2, 3, 100, 5000} {
		var es []mentionEntry
		want := map[uint64][]int32{}
		for i := range n {
			k := r.Uint64()
			if r.IntN(3) == 0 {
				k = uint64(r.IntN(5)) // many duplicates of a few keys
			}
			es = append(es, mentionEntry{k, int32(i)})
			want[k] = append(want[k], int32(i))
		}
		m := newMentionIndex(es)
		for k, ps := range want {
			var got []int32
			m.each(k, func(p int32) error { got = append(got, p); return nil })
			if !slices.Equal(got, ps) {
				t.Fatalf("n %d key %d: %v, want %v", n, k, got, ps)
			}
		}
		m.each(12345678901, func(p int32) error { t.Fatalf("absent key found at %d", p); return nil })
	}
}

// TestMentionKey: the allocation-free key is the hash of the lower-cased,
// trimmed content (FNV-1a), for ASCII and other text.
func TestMentionKey(t *testing.T) {
	for _, c := range []string{"Split by Feature.", "  split BY feature。", "按功能拆分。", "ÉTAPE par étape", "", "x"} {
		h := fnv.New64a()
		h.Write([]byte(strings.ToLower(strings.TrimRight(strings.TrimSpace(c), ".。"))))
		if got := mentionKey(c); got != h.Sum64() {
			t.Errorf("mentionKey(%q) = %d, want %d", c, got, h.Sum64())
		}
	}
}
