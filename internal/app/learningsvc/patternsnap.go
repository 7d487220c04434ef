package learningsvc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/kaizenhq/kaizen/internal/atomicfile"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// Pattern snapshots (issue 17). Loading a project's patterns for guidance
// reads every pattern row (seconds at 100,000 patterns), so the engine
// saves each base it loads in full to <home>/patterns/ — in the background
// after the load, waited for at Close — and the first guidance request of
// a later process starts from that file: it checks that the file belongs to
// the same database (store id and location) and project, at a version not
// newer than the store's (store.PatternVersion), then reads the patterns
// changed since that version, exactly as a running engine catches up with
// another process (after a pattern deletion since the file, with the ids
// of the current patterns: see afterReset).
// A missing, unusable or damaged file only means a full load. Stores given
// by the program and in-memory stores get no snapshots (as the vector
// index snapshots, internal/veccache).

// patternSnapMagic starts a snapshot file: then a uvarint-prefixed JSON
// header, the body (encodeRows) and the CRC-32 of everything before it.
const patternSnapMagic = "KZPS1\n"

type patternSnapHeader struct {
	StoreID string `json:"store_id"`
	Locator string `json:"locator"`
	Project string `json:"project"`
	Version int64  `json:"version"`
}

// patternSnapshots saves and restores the bases of a pattern cache. A nil
// *patternSnapshots has none.
type patternSnapshots struct {
	dir     string
	locator string
	logger  *slog.Logger

	mu      sync.Mutex
	storeID string
	saving  map[string]int64 // project → newest version saved or being saved
	wg      sync.WaitGroup
}

// newPatternSnapshots configures snapshots under <home>/patterns for the
// store selected by db (see store.Location); nil when the store was given
// by the program, the home is unknown or the store is in memory.
func newPatternSnapshots(home, db string, given bool, logger *slog.Logger) *patternSnapshots {
	backend, locator := store.SnapshotLocator(db, home)
	if given || home == "" || backend == "memory" {
		return nil
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &patternSnapshots{dir: filepath.Join(home, "patterns"), locator: locator, logger: logger,
		saving: map[string]int64{}}
}

// file names a project's snapshot: a hash, so that neither the DSN nor the
// project name appears in a file name.
func (s *patternSnapshots) file(storeID, project string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{storeID, s.locator, project}, "\x00")))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:16])+".kzp")
}

func (s *patternSnapshots) id(ctx context.Context, tx store.Tx) (string, error) {
	s.mu.Lock()
	id := s.storeID
	s.mu.Unlock()
	if id != "" {
		return id, nil
	}
	id, err := tx.StoreID(ctx)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.storeID = id
	s.mu.Unlock()
	return id, nil
}

// restore returns the project's saved base as a cached state at the
// snapshot's version, when there is one that fits v.
func (s *patternSnapshots) restore(ctx context.Context, tx store.Tx, project string, v store.PatternVersion) (*cachedProject, bool) {
	if s == nil {
		return nil, false
	}
	id, err := s.id(ctx, tx)
	if err != nil {
		s.logger.Warn("pattern snapshot: no store id", "err", err)
		return nil, false
	}
	data, err := os.ReadFile(s.file(id, project))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.logger.Warn("pattern snapshot unreadable", "err", err)
		}
		return nil, false
	}
	h, rows, byID, err := decodePatternSnapshot(data)
	switch {
	case err != nil:
	case h.StoreID != id || h.Locator != s.locator || h.Project != project:
		err = errors.New("it belongs to another database or project")
	case h.Version > v.Version:
		err = fmt.Errorf("it is at version %d, newer than the store's %d", h.Version, v.Version)
	}
	if err != nil {
		s.logger.Warn("pattern snapshot ignored", "project", project, "err", err)
		return nil, false
	}
	s.mu.Lock()
	s.saving[project] = max(s.saving[project], h.Version)
	s.mu.Unlock()
	return &cachedProject{version: h.Version, base: newPatternBaseSorted(rows, byID)}, true
}

// saveLater saves base, the project's patterns at version, in the
// background (Close waits for it), unless a newer one was saved.
func (s *patternSnapshots) saveLater(ctx context.Context, tx store.Tx, project string, version int64, base *patternBase) {
	if s == nil {
		return
	}
	id, err := s.id(ctx, tx)
	if err != nil {
		s.logger.Warn("pattern snapshot: no store id", "err", err)
		return
	}
	s.mu.Lock()
	if s.saving[project] >= version {
		s.mu.Unlock()
		return
	}
	s.saving[project] = version
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		h := patternSnapHeader{StoreID: id, Locator: s.locator, Project: project, Version: version}
		if err := s.save(h, base.rows, base.byID); err != nil {
			s.logger.Warn("pattern snapshot not saved", "project", project, "err", err)
		}
	}()
}

// wait waits for the saves under way.
func (s *patternSnapshots) wait() {
	if s != nil {
		s.wg.Wait()
	}
}

// save writes a snapshot atomically (a temporary file renamed over the old
// one).
func (s *patternSnapshots) save(h patternSnapHeader, rows []patternRow, byID []int32) error {
	return atomicfile.Write(s.file(h.StoreID, h.Project), func(w io.Writer) error {
		return writePatternSnapshot(w, h, rows, byID)
	})
}

// encodePatternSnapshot returns a snapshot file's bytes (writePatternSnapshot).
func encodePatternSnapshot(h patternSnapHeader, rows []patternRow, byID []int32) ([]byte, error) {
	var buf bytes.Buffer
	if err := writePatternSnapshot(&buf, h, rows, byID); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// snapChunk is how much of a snapshot is laid out in memory before it is
// written: the file is streamed, not built whole (it is about the size of
// the rows, and was a fifth of the memory allocated by a full load).
const snapChunk = 64 << 10

// writePatternSnapshot lays out a snapshot into w: the magic, the header,
// then the interned strings (kinds, states, tags), the rows' numbers and
// string references, one blob of every id and content, the positions in
// id order, and a CRC-32 of everything before it.
func writePatternSnapshot(w io.Writer, h patternSnapHeader, rows []patternRow, byID []int32) error {
	return writePatternSnapshotOf(w, h, len(rows), func(i int) *patternRow { return &rows[i] }, byID)
}

// writePatternSnapshotOf is writePatternSnapshot of the n rows row(0) …
// row(n-1) (a state saved without laying out its rows first: see
// saveAtClose).
func writePatternSnapshotOf(w io.Writer, h patternSnapHeader, n int, row func(int) *patternRow, byID []int32) error {
	if len(byID) != n {
		return errors.New("pattern snapshot: id order of another length")
	}
	head, err := json.Marshal(h)
	if err != nil {
		return err
	}
	sum := crc32.NewIEEE()
	out := io.MultiWriter(w, sum)
	b := make([]byte, 0, snapChunk+1024)
	flush := func(force bool) error {
		if len(b) == 0 || (!force && len(b) < snapChunk) {
			return nil
		}
		_, err := out.Write(b)
		b = b[:0]
		return err
	}
	b = append(b, patternSnapMagic...)
	b = binary.AppendUvarint(b, uint64(len(head)))
	if err := flush(true); err != nil {
		return err
	}
	if _, err := out.Write(head); err != nil {
		return err
	}
	// interned strings: index 0 is ""
	table := map[string]uint64{"": 0}
	names := []string{""}
	intern := func(s string) uint64 {
		i, ok := table[s]
		if !ok {
			i = uint64(len(names))
			table[s] = i
			names = append(names, s)
		}
		return i
	}
	for i := range n {
		r := row(i)
		intern(string(r.kind))
		intern(string(r.manual))
		for _, t := range r.tags {
			intern(t)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, n := range names {
		b = binary.AppendUvarint(b, uint64(len(n)))
		b = append(b, n...)
		if err := flush(false); err != nil {
			return err
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	blob := 0
	le := binary.LittleEndian
	for i := range n {
		r := row(i)
		blob += len(r.id) + len(r.content)
		if uint64(len(r.id)) > math.MaxUint32 || uint64(len(r.content)) > math.MaxUint32 || blob > math.MaxUint32 {
			return errors.New("pattern snapshot: texts beyond 4 GiB")
		}
		var flags byte
		if r.inverted {
			flags = 1
		}
		b = le.AppendUint32(b, uint32(len(r.id)))
		b = le.AppendUint32(b, uint32(len(r.content)))
		b = le.AppendUint32(b, uint32(table[string(r.kind)]))
		b = le.AppendUint32(b, uint32(table[string(r.manual)]))
		b = append(b, flags)
		b = le.AppendUint32(b, uint32(len(r.tags)))
		b = le.AppendUint64(b, uint64(r.succ))
		b = le.AppendUint64(b, uint64(r.fail))
		b = le.AppendUint64(b, math.Float64bits(r.h))
		b = le.AppendUint64(b, math.Float64bits(r.x))
		b = le.AppendUint64(b, uint64(r.hRef))
		b = le.AppendUint64(b, uint64(r.xRef))
		for _, t := range r.tags {
			b = le.AppendUint32(b, uint32(table[t]))
		}
		if err := flush(false); err != nil {
			return err
		}
	}
	b = binary.AppendUvarint(b, uint64(blob))
	for i := range n {
		r := row(i)
		b = append(b, r.id...)
		b = append(b, r.content...)
		if err := flush(false); err != nil {
			return err
		}
	}
	for _, p := range byID {
		b = le.AppendUint32(b, uint32(p))
		if err := flush(false); err != nil {
			return err
		}
	}
	if err := flush(true); err != nil {
		return err
	}
	_, err = w.Write(le.AppendUint32(b, sum.Sum32()))
	return err
}

// rowFixed is the size of a row's fixed part in a snapshot: the lengths
// of its id and content, its kind and state (string table indexes), its
// flags, its number of tags, its counts, sums and times.
const rowFixed = 4 + 4 + 4 + 4 + 1 + 4 + 6*8

// errBadPatternSnapshot is wrapped by every decoding error of a snapshot
// file (a damaged or foreign file: the cache then loads from the store).
var errBadPatternSnapshot = errors.New("bad pattern snapshot")

func badSnapshot(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadPatternSnapshot, fmt.Sprintf(format, args...))
}

// snapReader reads a snapshot's fields, failing once on the first error.
type snapReader struct {
	b   []byte
	err error
}

func (r *snapReader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = badSnapshot("truncated %s", what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length that at least min bytes per element must follow.
func (r *snapReader) count(what string, min int) int {
	v := r.uvarint(what)
	if r.err == nil && v > uint64(len(r.b)/max(min, 1)) {
		r.err = badSnapshot("%s %d beyond the file", what, v)
		return 0
	}
	return int(v)
}

func (r *snapReader) bytes(what string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.err = badSnapshot("truncated %s", what)
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

// decodePatternSnapshot parses a snapshot file. Any damage is an error
// wrapping errBadPatternSnapshot, never a panic.
func decodePatternSnapshot(data []byte) (patternSnapHeader, []patternRow, []int32, error) {
	var h patternSnapHeader
	rest, ok := strings.CutPrefix(string(data[:min(len(data), len(patternSnapMagic))]), patternSnapMagic)
	if !ok || rest != "" {
		return h, nil, nil, badSnapshot("not a kaizen pattern snapshot")
	}
	if len(data) < len(patternSnapMagic)+4 {
		return h, nil, nil, badSnapshot("truncated")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return h, nil, nil, badSnapshot("checksum mismatch")
	}
	r := &snapReader{b: body[len(patternSnapMagic):]}
	head := r.bytes("header", r.count("header length", 1))
	if r.err != nil {
		return h, nil, nil, r.err
	}
	if err := json.Unmarshal(head, &h); err != nil {
		return h, nil, nil, badSnapshot("header: %v", err)
	}
	nNames := r.count("string table", 1)
	names := make([]string, nNames)
	for i := range names {
		names[i] = string(r.bytes("string", r.count("string length", 1)))
	}
	n := r.count("rows", rowFixed)
	if r.err != nil {
		return h, nil, nil, r.err
	}
	rows := make([]patternRow, n)
	lens := make([]uint32, 2*n)
	le := binary.LittleEndian
	name := func(i uint32) (string, bool) { // an index into the string table
		if int64(i) >= int64(len(names)) {
			return "", false
		}
		return names[i], true
	}
	b := r.b
	for i := range rows {
		if len(b) < rowFixed {
			return h, nil, nil, badSnapshot("truncated row %d", i)
		}
		row := &rows[i]
		lens[2*i], lens[2*i+1] = le.Uint32(b), le.Uint32(b[4:])
		kind, ok1 := name(le.Uint32(b[8:]))
		manual, ok2 := name(le.Uint32(b[12:]))
		if !ok1 || !ok2 {
			return h, nil, nil, badSnapshot("row %d names a string not in the table", i)
		}
		row.kind, row.manual = learning.PatternKind(kind), learning.MaturityState(manual)
		row.inverted = b[16]&1 != 0
		nt := le.Uint32(b[17:])
		row.succ, row.fail = int64(le.Uint64(b[21:])), int64(le.Uint64(b[29:]))
		row.h, row.x = math.Float64frombits(le.Uint64(b[37:])), math.Float64frombits(le.Uint64(b[45:]))
		row.hRef, row.xRef = int64(le.Uint64(b[53:])), int64(le.Uint64(b[61:]))
		b = b[rowFixed:]
		if uint64(nt) > uint64(len(b)/4) {
			return h, nil, nil, badSnapshot("tags of row %d beyond the file", i)
		}
		if nt > 0 {
			row.tags = make([]string, nt)
			for k := range row.tags {
				t, ok := name(le.Uint32(b[4*k:]))
				if !ok {
					return h, nil, nil, badSnapshot("row %d names a tag not in the table", i)
				}
				row.tags[k] = t
			}
			b = b[4*nt:]
		}
	}
	r.b = b
	blobLen := r.count("texts", 1)
	blob := string(r.bytes("texts", blobLen))
	if r.err == nil && len(r.b) != 4*n {
		r.err = badSnapshot("id order of %d bytes for %d rows", len(r.b), n)
	}
	byID := make([]int32, n)
	for i := range byID {
		if r.err != nil {
			break
		}
		p := le.Uint32(r.b[4*i:])
		if p >= uint32(n) {
			r.err = badSnapshot("id order names row %d of %d", p, n)
		}
		byID[i] = int32(p)
	}
	r.b = nil
	if r.err != nil {
		return h, nil, nil, r.err
	}
	if len(r.b) != 0 {
		return h, nil, nil, badSnapshot("%d bytes after the id order", len(r.b))
	}
	at := 0
	for i := range rows {
		a, c := int(lens[2*i]), int(lens[2*i+1])
		if a > len(blob)-at || c > len(blob)-at-a {
			return h, nil, nil, badSnapshot("texts of row %d beyond the blob", i)
		}
		rows[i].id, rows[i].content = blob[at:at+a], blob[at+a:at+a+c]
		at += a + c
	}
	if at != len(blob) {
		return h, nil, nil, badSnapshot("%d bytes of texts unused", len(blob)-at)
	}
	for i := 1; i < len(byID); i++ { // strictly increasing ids: a permutation in id order
		if rows[byID[i-1]].id >= rows[byID[i]].id {
			return h, nil, nil, badSnapshot("rows out of id order at %d", i)
		}
	}
	return h, rows, byID, nil
}

// UsePatternSnapshots makes plan guidance save the patterns it loads in
// full under <home>/patterns and start from them in a later process (see
// patternSnapshots; db and given as for the vector index snapshots).
// Call it before serving requests.
func (s *Service) UsePatternSnapshots(home, db string, given bool, logger *slog.Logger) {
	s.cache.snaps = newPatternSnapshots(home, db, given, logger)
}

// Close waits for the pattern snapshots being saved, after saving the
// cached states with many changes since their base (saveAtClose).
func (s *Service) Close() {
	s.cache.snaps.wait()
	s.cache.saveAtClose()
}
