package model

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/kaizenhq/kaizen/internal/tokenize"
)

// OfflineEmbedderName is the versioned name of the offline embedding
// algorithm. Any change to its output (tokenisation, features, weights,
// hashing) must bump the version, so stored vectors are re-embedded rather
// than compared across two algorithms.
const OfflineEmbedderName = "offline-hash-v5"

// OfflineEmbedder is the default embedder: it needs no model weights and no
// network. It hashes lexical features into a fixed number of dimensions:
//
//   - Latin-script words, lowercased, accents folded, lightly stemmed
//     (plural, -ing, -ed, final -e), English stop words left out;
//     camelCase and snake_case identifiers also split into their parts;
//   - bigrams of consecutive words;
//   - character trigrams of words of four letters or more, so that
//     "config" and "configuration" meet;
//   - for Chinese, Japanese and Korean runs, which have no spaces,
//     character unigrams and bigrams (bigrams approximate words);
//   - the concepts of the bilingual lexicon (internal/tokenize): an English
//     word and a Chinese term of one concept ("timeout", "超时") add the
//     same feature, so that a lesson and its translation or synonym meet.
//
// Each feature is hashed (FNV-1a, 64 bits, mixed) to a dimension and a sign;
// a feature seen n times weighs w·√n; the vector is L2-normalised. The
// output depends only on the text and the dimension: it is the same on
// every platform (integer hashing, no fused multiply-add, correctly rounded
// square roots, a fixed summation order).
//
// It measures shared vocabulary, not meaning: paraphrases that share words
// (or, in Chinese, characters) score high, synonyms without shared words do
// not unless the lexicon relates them, and cross-lingual similarity comes
// from the lexicon's concepts only. Hybrid retrieval (full-text plus
// vectors) and recall's abstention are designed around that.
type OfflineEmbedder struct {
	dim int
	id  string
}

var _ Embedder = (*OfflineEmbedder)(nil)

// NewOfflineEmbedder returns an offline embedder of the given dimension;
// values outside [64, 8192] (including 0) mean [DefaultOfflineDimension].
func NewOfflineEmbedder(dim int) *OfflineEmbedder {
	if dim < minOfflineDimension || dim > maxOfflineDimension {
		dim = DefaultOfflineDimension
	}
	return &OfflineEmbedder{dim: dim, id: OfflineEmbedderName + "@" + strconv.Itoa(dim)}
}

// ID returns "offline-hash-v5@<dimension>".
func (e *OfflineEmbedder) ID() string { return e.id }

// Dimension returns the vector length.
func (e *OfflineEmbedder) Dimension() int { return e.dim }

// Embed returns one unit vector per text; a text with no words (empty,
// blank or only punctuation) gets the zero vector, whose cosine with any
// vector is 0. It fails only when ctx ends.
func (e *OfflineEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	w := workspaces.Get().(*workspace)
	defer workspaces.Put(w)
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("model: offline embed: %w", err)
			}
		}
		out[i] = e.embed(w, t)
	}
	return out, nil
}

// EmbedText embeds one text.
func (e *OfflineEmbedder) EmbedText(text string) []float32 {
	w := workspaces.Get().(*workspace)
	defer workspaces.Put(w)
	return e.embed(w, text)
}

// Feature weights. Squared, they are the share of a vector's energy each
// kind of feature brings.
const (
	weightWord      = 1.0
	weightWordPart  = 0.6 // a part of a camelCase or snake_case identifier
	weightBigram    = 0.7
	weightTrigram   = 0.3
	weightHanChar   = 0.6
	weightHanStop   = 0.1 // function characters such as 的 了 是
	weightHanBigram = 1.0
	weightConcept   = 3.0 // a concept of the bilingual lexicon (tokenize.WordConcepts, HanConcepts)

	maxTrigramWord = 32 // runes
)

// Hash seeds keep the feature kinds apart: the word "ab" and the bigram
// "a b" must not collide by construction.
const (
	kindWord byte = iota + 1
	kindBigram
	kindTrigram
	kindHan
	kindHanBigram
	kindConcept
)

type feature struct {
	hash   uint64
	weight float64
}

// slot aggregates one distinct feature.
type slot struct {
	hash uint64
	sum  float64
	n    uint32
}

// workspace holds the buffers of one embedding, reused through a pool.
type workspace struct {
	tok   tokenize.Words
	feats []feature
	acc   []float64
	grams []rune
	table []slot
}

var workspaces = sync.Pool{New: func() any { return new(workspace) }}

func (e *OfflineEmbedder) embed(w *workspace, text string) []float32 {
	w.feats = w.feats[:0]
	w.tok.Scan(text)
	w.addFeatures()
	vec := make([]float32, e.dim)
	if len(w.feats) == 0 {
		return vec
	}
	// Sum the weights of equal features in an open-addressing table, then
	// project each distinct feature. Table order depends only on the
	// features, so the summation order, and the result, are fixed.
	size := 64
	for size < 2*len(w.feats) {
		size *= 2
	}
	if cap(w.table) < size {
		w.table = make([]slot, size)
	}
	table := w.table[:size]
	clear(table)
	mask := uint64(size - 1)
	for _, f := range w.feats {
		i := f.hash & mask
		for table[i].n != 0 && table[i].hash != f.hash {
			i = (i + 1) & mask
		}
		table[i].hash = f.hash
		table[i].sum += f.weight
		table[i].n++
	}
	if cap(w.acc) < e.dim {
		w.acc = make([]float64, e.dim)
	}
	acc := w.acc[:e.dim]
	clear(acc)
	dim := uint64(e.dim)
	for _, sl := range table {
		if sl.n == 0 {
			continue
		}
		v := sl.sum / math.Sqrt(float64(sl.n)) // mean weight × √n: sublinear term frequency
		if sl.hash>>63 == 1 {
			v = -v
		}
		acc[(sl.hash>>20)%dim] += v
	}
	var norm float64
	for _, x := range acc {
		sq := float64(x * x) // the conversion forbids a fused multiply-add
		norm += sq
	}
	if norm == 0 {
		return vec
	}
	norm = math.Sqrt(norm)
	for i, x := range acc {
		vec[i] = float32(x / norm)
	}
	return vec
}

// addFeatures turns the tokens into hashed features.
func (w *workspace) addFeatures() {
	t := &w.tok
	content := 0
	for _, tk := range t.Tokens {
		if !tk.Stop && !tk.Han {
			content++
		}
	}
	useStops := content == 0 // a text of stop words only still embeds
	prev := -1
	for k, tk := range t.Tokens {
		if tk.Han {
			w.addHan(t.Runes[tk.From:tk.To])
			prev = -1
			continue
		}
		if tk.Stop && !useStops {
			continue
		}
		weight := weightWord
		if tk.Part {
			weight = weightWordPart
		}
		w.add(hashBytes(kindWord, t.Buf[tk.StemFrom:tk.StemTo], nil), weight)
		for _, c := range tokenize.WordConcepts(t.Buf[tk.StemFrom:tk.StemTo]) {
			w.add(hashConcept(c), weightConcept*weight)
		}
		if tk.Part {
			continue // parts add no bigrams or trigrams of their own
		}
		if prev >= 0 {
			p := t.Tokens[prev]
			w.add(hashBytes(kindBigram, t.Buf[p.StemFrom:p.StemTo], t.Buf[tk.StemFrom:tk.StemTo]), weightBigram)
		}
		prev = k
		w.addTrigrams(t.Buf[tk.StemFrom:tk.StemTo])
	}
}

func (w *workspace) add(h uint64, weight float64) {
	w.feats = append(w.feats, feature{hash: h, weight: weight})
}

// addTrigrams adds the character trigrams of "<word>" for words of four
// runes or more. Each trigram weighs 2·weightTrigram/√n for n trigrams, so a
// word's trigrams together bring a fixed share of energy whatever its length.
func (w *workspace) addTrigrams(word []byte) {
	rs := append(w.grams[:0], '<')
	for i := 0; i < len(word); {
		r, size := utf8.DecodeRune(word[i:])
		rs = append(rs, r)
		i += size
	}
	rs = append(rs, '>')
	w.grams = rs
	n := len(rs) - 2
	if n < 4 || n > maxTrigramWord {
		return // short words are covered by the word itself; long ones are ids and blobs
	}
	weight := weightTrigram * 2 / math.Sqrt(float64(n))
	for g := 0; g+3 <= len(rs); g++ {
		w.add(hashRunes(kindTrigram, rs[g], rs[g+1], rs[g+2]), weight)
	}
}

// addHan adds character unigrams and bigrams of a CJK run, and the
// concepts of the lexicon terms in it.
func (w *workspace) addHan(run []rune) {
	tokenize.HanConcepts(run, func(c int) { w.add(hashConcept(c), weightConcept) })
	for i, r := range run {
		weight := weightHanChar
		if hanStop(r) {
			weight = weightHanStop
		}
		w.add(hashRunes(kindHan, r, 0, 0), weight)
		if i > 0 {
			w.add(hashRunes(kindHanBigram, run[i-1], r, 0), weightHanBigram)
		}
	}
}

// hanStop reports Chinese function characters, which carry little topic.
func hanStop(r rune) bool {
	switch r {
	case '的', '了', '是', '在', '和', '也', '就', '都', '而', '及', '与', '着', '之', '把', '被',
		'吗', '呢', '吧', '啊', '呀', '这', '那', '个', '我', '你', '他', '她', '它', '们', '有',
		'一', '不', '要', '会', '对', '说', '让', '给', '很', '还', '又', '或', '但', '并', '等',
		'の', 'は', 'が', 'を', 'に', 'で', 'と', 'も', 'た', 'て', 'す', 'る':
		return true
	}
	return false
}

// FNV-1a, 64 bits.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

// mix is the splitmix64 finaliser: it spreads every input bit over the
// bits used for the dimension and the sign.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

func hashBytes(kind byte, a, b []byte) uint64 {
	h := fnvByte(fnvOffset, kind)
	for _, c := range a {
		h = fnvByte(h, c)
	}
	if b != nil {
		h = fnvByte(h, 0)
		for _, c := range b {
			h = fnvByte(h, c)
		}
	}
	return mix(h)
}

func hashConcept(c int) uint64 { return hashRunes(kindConcept, rune(c), 0, 0) }

func hashRunes(kind byte, a, b, c rune) uint64 {
	h := fnvByte(fnvOffset, kind)
	for _, r := range [3]rune{a, b, c} {
		for s := 0; s < 32; s += 8 {
			h = fnvByte(h, byte(r>>s))
		}
	}
	return mix(h)
}
