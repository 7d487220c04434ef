package veccache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/atomicfile"
	"github.com/kaizenhq/kaizen/internal/vecindex"
	"github.com/kaizenhq/kaizen/store"
)

// Vector index Snapshots. Loading a project's vector index reads and
// quantizes every stored vector (seconds at 100,000 vectors), so the engine
// saves each index it loaded to <home>/vectors/ — after a full load, in the
// background, and at Close — and a later process starts from that file:
// it checks that the file belongs to the same database (store id and
// location), project, kind and embedder, at a version not newer than the
// store's, then applies the changes made since that version
// (store EmbeddingChanges), exactly as a running engine catches up with
// another process. A missing, stale-beyond-use or damaged file only means a
// full load. In-memory stores have no Snapshots.

// snapshotMagic starts a snapshot file: then a uvarint-prefixed JSON
// header, then the vecindex snapshot.
const snapshotMagic = "KZVS1\n"

// header says what a snapshot holds.
type header struct {
	StoreID  string `json:"store_id"`
	Locator  string `json:"locator"`
	Project  string `json:"project"`
	Kind     string `json:"kind"`
	Embedder string `json:"embedder"`
	Version  int64  `json:"version"`
}

// Snapshots saves and restores the indexes of a vector cache.
type Snapshots struct {
	dir     string // "" disables Snapshots
	locator string // the database the engine opened
	logger  *slog.Logger
}

// NewSnapshots configures snapshots under <home>/vectors for the store
// selected by db (see store.Location). A store given by the program
// (given is true), an unknown home and an ephemeral "memory" store get no
// snapshots.
func NewSnapshots(home, db string, given bool, logger *slog.Logger) Snapshots {
	s := Snapshots{logger: logger}
	if s.logger == nil {
		s.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	backend, locator := store.SnapshotLocator(db, home)
	if given || home == "" || backend == "memory" {
		return s
	}
	s.locator = locator
	s.dir = filepath.Join(home, "vectors")
	return s
}

// file names the snapshot of an index: a hash, so that neither the DSN nor
// the project name appears in a file name.
func (s Snapshots) file(h header) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{h.StoreID, h.Locator, h.Project, h.Kind, h.Embedder}, "\x00")))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:16])+".kvx")
}

// header is the header of a project's index of one kind, as of version.
func (s Snapshots) header(ctx context.Context, tx store.Tx, embedder, project string, kind experience.ItemKind,
	version int64) (header, error) {
	id, err := tx.StoreID(ctx)
	return header{StoreID: id, Locator: s.locator, Project: project, Kind: string(kind), Embedder: embedder,
		Version: version}, err
}

// restore reads the snapshot of an index made at a version not newer than
// want.Version; false when there is none that fits.
func (s Snapshots) restore(want header) (*vecindex.Index, int64, bool) {
	if s.dir == "" {
		return nil, 0, false
	}
	data, err := os.ReadFile(s.file(want))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.logger.Warn("vector index snapshot unreadable", "err", err)
		}
		return nil, 0, false
	}
	h, body, err := parseSnapshot(data)
	if err == nil && (h.StoreID != want.StoreID || h.Locator != want.Locator || h.Project != want.Project ||
		h.Kind != want.Kind || h.Embedder != want.Embedder) {
		err = errors.New("it belongs to another index")
	}
	if err == nil && h.Version > want.Version {
		err = fmt.Errorf("it is at version %d, newer than the store's %d", h.Version, want.Version)
	}
	var ix *vecindex.Index
	if err == nil {
		ix, err = vecindex.ReadBytes(body, vecindex.Options{})
	}
	if err != nil {
		s.logger.Warn("vector index snapshot ignored", "project", want.Project, "kind", want.Kind, "err", err)
		return nil, 0, false
	}
	return ix, h.Version, true
}

func parseSnapshot(data []byte) (header, []byte, error) {
	var h header
	rest, ok := bytes.CutPrefix(data, []byte(snapshotMagic))
	if !ok {
		return h, nil, errors.New("not a kaizen vector snapshot")
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(rest)-k) {
		return h, nil, errors.New("truncated header")
	}
	if err := json.Unmarshal(rest[k:k+int(n)], &h); err != nil {
		return h, nil, fmt.Errorf("header: %w", err)
	}
	return h, rest[k+int(n):], nil
}

// save writes the snapshot of an index atomically (a temporary file
// renamed over the old one). The index may move on while it is written:
// its content is then newer than h.Version, which a restore corrects by
// applying the changes since h.Version again (they are idempotent).
func (s Snapshots) save(h header, ix *vecindex.Index) error {
	if s.dir == "" {
		return nil
	}
	head, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return atomicfile.Write(s.file(h), func(w io.Writer) error {
		var b bytes.Buffer
		b.WriteString(snapshotMagic)
		b.Write(binary.AppendUvarint(nil, uint64(len(head))))
		b.Write(head)
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
		_, err := ix.WriteTo(w)
		return err
	})
}
