package vecindex

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// Snapshots: an index's vectors and its IVF quantizer in a compact binary
// form, so that a process can start from a file instead of re-reading,
// re-quantizing and re-clustering every vector. The layout is
//
//	magic "KZVI" | format 2 | uvarint dim | uvarint trainedN | uvarint L |
//	L × dim float32 centroids (little-endian; L = 0: untrained) |
//	max(L, 1) lists × (uvarint n | n × (uvarint len(id) | id | dim code bytes)) |
//	CRC-32C (Castagnoli) of everything before it, little-endian
//
// Codes are the stored biased int8 codes (padding is not written); the
// norms are recomputed on reading, and the quantizer's codebooks rebuilt
// from the centroids. A read index searches exactly as the written one.

var snapshotMagic = [5]byte{'K', 'Z', 'V', 'I', 2}

// ErrSnapshot reports a snapshot that cannot be read: truncated, corrupt
// (checksum), of another format, or holding invalid vectors.
var ErrSnapshot = errors.New("vecindex: bad snapshot")

// maxIDLen bounds an id read from a snapshot.
const maxIDLen = 1 << 16

// WriteTo writes a snapshot of the index to w. It holds the read lock
// while writing, so searches go on and writes wait.
func (ix *Index) WriteTo(w io.Writer) (int64, error) {
	crc := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	cw := &countWriter{w: io.MultiWriter(w, crc)}
	bw := bufio.NewWriterSize(cw, 1<<16)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var buf [binary.MaxVarintLen64]byte
	uvarint := func(v uint64) { bw.Write(buf[:binary.PutUvarint(buf[:], v)]) }
	bw.Write(snapshotMagic[:])
	uvarint(uint64(ix.dim))
	uvarint(uint64(ix.trainedN))
	lists := 0
	if ix.q != nil {
		lists = len(ix.parts)
	}
	uvarint(uint64(lists))
	if lists > 0 {
		for _, x := range ix.q.cent {
			bw.Write(binary.LittleEndian.AppendUint32(buf[:0], math.Float32bits(x)))
		}
	}
	for p := range ix.parts {
		pt := &ix.parts[p]
		uvarint(uint64(len(pt.ids)))
		for i, id := range pt.ids {
			uvarint(uint64(len(id)))
			bw.WriteString(id)
			bw.Write(pt.codes[i*ix.stride : i*ix.stride+ix.dim])
		}
	}
	if err := bw.Flush(); err != nil {
		return cw.n, err
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], crc.Sum32())
	_, err := w.Write(sum[:])
	return cw.n + 4, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Read reads a snapshot written by [Index.WriteTo] into a new index with the
// given options. Any defect is an error wrapping [ErrSnapshot]; the
// checksum is verified before anything is parsed.
func Read(r io.Reader, opts Options) (*Index, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return ReadBytes(data, opts)
}

// ReadBytes is [Read] from a snapshot in memory. It copies what it keeps:
// data may be reused afterwards.
func ReadBytes(data []byte, opts Options) (*Index, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrSnapshot, fmt.Sprintf(format, a...))
	}
	if len(data) < len(snapshotMagic)+4 || [5]byte(data[:5]) != snapshotMagic {
		return nil, bad("not a vector index snapshot of this format")
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, bad("checksum mismatch")
	}
	br := bytes.NewReader(body[len(snapshotMagic):])
	dim, err := binary.ReadUvarint(br)
	if err != nil || dim < 1 || dim > MaxDim {
		return nil, bad("dimension")
	}
	trainedN, err := binary.ReadUvarint(br)
	if err != nil || trainedN > math.MaxInt32 {
		return nil, bad("trained size")
	}
	lists, err := binary.ReadUvarint(br)
	if err != nil || lists*dim*4 > uint64(br.Len()) {
		return nil, bad("lists")
	}
	ix, err := New(int(dim), opts)
	if err != nil {
		return nil, bad("%v", err)
	}
	// The trained size is the size at the last training, within a factor
	// of two of the count: a hint that spares the id map most of its
	// growth (bounded by what the snapshot can hold).
	ix.where = make(map[string]loc, min(trainedN, uint64(br.Len())/(dim+1)))
	var cent []float32
	if lists > 0 {
		cent = make([]float32, int(lists*dim))
		raw := make([]byte, 4*len(cent))
		_, _ = br.Read(raw) // length checked above
		for i := range cent {
			cent[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		for c := range int(lists) {
			if _, err := normalize(cent[c*int(dim) : (c+1)*int(dim)]); err != nil {
				return nil, bad("centroid %d: %v", c, err)
			}
		}
		ix.parts = make([]part, lists)
	}
	// The vectors are parsed in place: codes are copied into the lists and
	// the ids of a list share one string.
	rest := body[len(body)-br.Len():]
	uvarint := func() (uint64, bool) {
		v, n := binary.Uvarint(rest)
		if n <= 0 {
			return 0, false
		}
		rest = rest[n:]
		return v, true
	}
	for p := range ix.parts {
		n, ok := uvarint()
		if !ok || n > uint64(len(rest)) { // every vector takes at least a byte
			return nil, bad("count of list %d", p)
		}
		pt := &ix.parts[p]
		// First pass: the ids' total length, to hold them in one string.
		idBytes, scan := 0, rest
		for i := uint64(0); i < n; i++ {
			l, k := binary.Uvarint(scan)
			if k <= 0 || l == 0 || l > maxIDLen || l+dim > uint64(len(scan)-k) {
				return nil, bad("vector %d of list %d", i, p)
			}
			idBytes += int(l)
			scan = scan[k+int(l)+int(dim):]
		}
		// Allocated once the list is known to hold n vectors.
		pt.ids = make([]string, 0, n)
		pt.codes = make([]byte, int(n)*ix.stride)
		pt.inv = make([]float32, 0, n)
		var names []byte
		if idBytes > 0 {
			names = make([]byte, 0, idBytes)
		}
		starts := make([]int, 0, n+1)
		for i := uint64(0); i < n; i++ {
			l, _ := uvarint() // checked by the first pass
			starts = append(starts, len(names))
			names = append(names, rest[:l]...)
			code := rest[l : l+dim]
			rest = rest[l+dim:]
			copy(pt.codes[int(i)*ix.stride:], code)
			var ss int64
			for _, b := range code {
				if b == 0 { // the code -128 is never written
					return nil, bad("code out of range in vector %q", names[starts[i]:])
				}
				c := int64(b) - codeBias
				ss += c * c
			}
			if ss == 0 {
				return nil, bad("zero vector %q", names[starts[i]:])
			}
			for j := int(i)*ix.stride + int(dim); j < int(i+1)*ix.stride; j++ {
				pt.codes[j] = codeBias
			}
			pt.inv = append(pt.inv, float32(1/math.Sqrt(float64(ss))))
		}
		all := string(names)
		starts = append(starts, len(all))
		for i := range n {
			id := all[starts[i]:starts[i+1]]
			if _, dup := ix.where[id]; dup {
				return nil, bad("vector %q twice", id)
			}
			ix.where[id] = loc{int32(p), int32(len(pt.ids))}
			pt.ids = append(pt.ids, id)
			ix.n++
		}
	}
	br.Reset(rest)
	if br.Len() != 0 {
		return nil, bad("%d bytes after the last vector", br.Len())
	}
	if lists > 0 {
		ix.q = newQuantizer(cent, int(dim), ix.stride)
	}
	ix.trainedN = int(trainedN)
	return ix, nil
}
