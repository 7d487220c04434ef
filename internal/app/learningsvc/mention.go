package learningsvc

import "math/bits"

// mentionIndex is a multimap from key hashes (mentionKey, keyHash) to
// pattern positions, built in linear time without sorting: the entries
// are grouped by bucket (counting sort on the top bits of the mixed key)
// and, within a bucket, kept in the order they were given.
type mentionIndex struct {
	shift   uint
	start   []int32 // bucket b holds entries[start[b]:start[b+1]]
	entries []mentionEntry
}

type mentionEntry struct {
	key uint64
	pos int32
}

func (m *mentionIndex) bucket(key uint64) uint64 {
	if m.shift >= 64 {
		return 0
	}
	return (key * 0x9E3779B97F4A7C15) >> m.shift
}

// newMentionIndex indexes es (given in position order, which lookups
// keep).
func newMentionIndex(es []mentionEntry) mentionIndex {
	b := bits.Len(uint(max(len(es), 1) - 1)) // 2^b ≥ len(es)
	m := mentionIndex{shift: uint(64 - b), start: make([]int32, 1<<b+1)}
	for _, e := range es {
		m.start[m.bucket(e.key)+1]++
	}
	for i := 1; i < len(m.start); i++ {
		m.start[i] += m.start[i-1]
	}
	m.entries = make([]mentionEntry, len(es))
	next := make([]int32, 1<<b)
	copy(next, m.start)
	for _, e := range es {
		bk := m.bucket(e.key)
		m.entries[next[bk]] = e
		next[bk]++
	}
	return m
}

// each calls fn with the position of every entry of key, in the order
// they were given.
func (m *mentionIndex) each(key uint64, fn func(pos int32) error) error {
	if len(m.start) == 0 {
		return nil
	}
	bk := m.bucket(key)
	for _, e := range m.entries[m.start[bk]:m.start[bk+1]] {
		if e.key == key {
			if err := fn(e.pos); err != nil {
				return err
			}
		}
	}
	return nil
}
