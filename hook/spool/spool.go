// Package spool is the durable queue of hook events in a kaizen home: a
// hook appends its event here, synced to disk, before it does anything
// else, and whoever ingests the spool (the daemon, else the next kaizen
// command or hook) records the events in order and removes them.
//
// The layout is a directory per session under <home>/spool, holding one
// file per event named <nanoseconds>-<event id>.json, so that the names
// sort in arrival order. A file appears under its final name only once its
// content is synced (it is written under a dot name and renamed), so a
// reader never sees half an event. Ingesters serialise on an exclusive
// lock file; appenders take no lock.
package spool

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Dir is the spool's directory in a kaizen home.
const Dir = "spool"

// rejectedDir keeps the events that can never be recorded (invalid), for
// inspection.
const rejectedDir = "rejected"

// lockFile is the ingesters' lock.
const lockFile = ".ingest.lock"

// MaxEntryBytes bounds one event file.
const MaxEntryBytes = 1 << 20

// Spool is the spool of one kaizen home.
type Spool struct {
	dir string
}

// Open returns the spool of a kaizen home (nothing is created yet).
func Open(home string) *Spool { return &Spool{dir: filepath.Join(home, Dir)} }

// Path is the spool's directory.
func (s *Spool) Path() string { return s.dir }

// Entry is one spooled event.
type Entry struct {
	// Session is the session's directory name.
	Session string
	// Name is the file name: <nanoseconds>-<id>.json.
	Name string
	// At is when the event was spooled (from its name).
	At time.Time
}

// ID is the event id in the entry's name.
func (e Entry) ID() string {
	n := strings.TrimSuffix(e.Name, ".json")
	if i := strings.IndexByte(n, '-'); i >= 0 {
		return n[i+1:]
	}
	return ""
}

// SessionKey names the directory of a session: the task id with the
// characters a file name cannot hold replaced, at most 100 bytes.
func SessionKey(taskID string) string {
	var b strings.Builder
	for _, r := range taskID {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 100 {
			break
		}
	}
	k := strings.TrimLeft(b.String(), ".")
	if k == "" {
		k = "_"
	}
	return k
}

// validName reports whether a session key or event id is safe as a file
// name component.
func validName(s string) bool {
	if s == "" || len(s) > 128 || s[0] == '.' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// Append adds an event to a session's queue. When it returns without
// error the event is on disk (file and directory synced): it survives a
// crash of the process or of the machine.
func (s *Spool) Append(session, id string, data []byte, now time.Time) (Entry, error) {
	if !validName(session) || session == rejectedDir {
		return Entry{}, fmt.Errorf("spool: invalid session key %q", session)
	}
	if !validName(id) || strings.Contains(id, "-") {
		return Entry{}, fmt.Errorf("spool: invalid event id %q", id)
	}
	if len(data) > MaxEntryBytes {
		return Entry{}, fmt.Errorf("spool: event of %d bytes is larger than %d", len(data), MaxEntryBytes)
	}
	e := Entry{Session: session, Name: fmt.Sprintf("%020d-%s.json", now.UnixNano(), id), At: now}
	dir := filepath.Join(s.dir, session)
	var err error
	// An ingester removes a session's directory once it is empty: retry
	// when it vanished between creating it and writing into it.
	for range 5 {
		if err = os.MkdirAll(dir, 0o700); err != nil {
			return Entry{}, fmt.Errorf("spool: %w", err)
		}
		err = writeSynced(dir, e.Name, data)
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return Entry{}, fmt.Errorf("spool: %w", err)
	}
	return e, nil
}

// writeSynced writes data to dir/name durably: a temporary dot file,
// synced, renamed to its name, and the directory synced.
func writeSynced(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// Sessions lists the sessions with a queue, sorted.
func (s *Spool) Sessions() ([]string, error) {
	des, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	var out []string
	for _, de := range des {
		if de.IsDir() && de.Name() != rejectedDir && validName(de.Name()) {
			out = append(out, de.Name())
		}
	}
	return out, nil
}

// Pending lists a session's events in arrival order.
func (s *Spool) Pending(session string) ([]Entry, error) {
	if !validName(session) {
		return nil, fmt.Errorf("spool: invalid session key %q", session)
	}
	des, err := os.ReadDir(filepath.Join(s.dir, session))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	var out []Entry
	for _, de := range des {
		name := de.Name()
		if de.IsDir() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		i := strings.IndexByte(name, '-')
		if i <= 0 {
			continue
		}
		ns, err := strconv.ParseInt(name[:i], 10, 64)
		if err != nil {
			continue
		}
		out = append(out, Entry{Session: session, Name: name, At: time.Unix(0, ns)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Read returns an event's content.
func (s *Spool) Read(e Entry) ([]byte, error) {
	f, err := os.Open(filepath.Join(s.dir, e.Session, e.Name))
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxEntryBytes+1))
	if err != nil {
		return nil, fmt.Errorf("spool: read %s: %w", e.Name, err)
	}
	if len(data) > MaxEntryBytes {
		return nil, fmt.Errorf("spool: %s is larger than %d bytes", e.Name, MaxEntryBytes)
	}
	return data, nil
}

// Remove deletes an ingested event, and its session's directory when that
// was the last event.
func (s *Spool) Remove(e Entry) error {
	dir := filepath.Join(s.dir, e.Session)
	if err := os.Remove(filepath.Join(dir, e.Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("spool: %w", err)
	}
	_ = syncDir(dir)
	// Fails, harmlessly, while other events or an appender's temporary
	// file are in it.
	_ = os.Remove(dir)
	return nil
}

// Reject moves an event that can never be recorded to the rejected
// directory, with the reason in a file beside it.
func (s *Spool) Reject(e Entry, reason string) error {
	dir := filepath.Join(s.dir, rejectedDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	base := e.Session + "--" + e.Name
	if err := os.Rename(filepath.Join(s.dir, e.Session, e.Name), filepath.Join(dir, base)); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	_ = os.WriteFile(filepath.Join(dir, strings.TrimSuffix(base, ".json")+".reason"), []byte(reason+"\n"), 0o600)
	_ = os.Remove(filepath.Join(s.dir, e.Session))
	return nil
}

// Stats describes what waits in the spool.
type Stats struct {
	// Pending counts the events not ingested yet, in Sessions sessions.
	Pending  int `json:"pending"`
	Sessions int `json:"sessions"`
	// Oldest is when the oldest pending event was spooled.
	Oldest time.Time `json:"oldest,omitzero"`
	// Rejected counts the events set aside as invalid.
	Rejected int `json:"rejected"`
}

// Stat counts the pending and rejected events.
func (s *Spool) Stat() (Stats, error) {
	var st Stats
	sessions, err := s.Sessions()
	if err != nil {
		return st, err
	}
	for _, ses := range sessions {
		es, err := s.Pending(ses)
		if err != nil {
			return st, err
		}
		if len(es) > 0 {
			st.Sessions++
		}
		st.Pending += len(es)
		for _, e := range es {
			if st.Oldest.IsZero() || e.At.Before(st.Oldest) {
				st.Oldest = e.At
			}
		}
	}
	des, err := os.ReadDir(filepath.Join(s.dir, rejectedDir))
	if err == nil {
		for _, de := range des {
			if strings.HasSuffix(de.Name(), ".json") {
				st.Rejected++
			}
		}
	}
	return st, nil
}

// CleanTemp removes the temporary files of appenders that died before
// finishing, older than the given age: their events were never
// acknowledged.
func (s *Spool) CleanTemp(olderThan time.Duration, now time.Time) {
	sessions, _ := s.Sessions()
	for _, ses := range sessions {
		dir := filepath.Join(s.dir, ses)
		des, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, de := range des {
			if !strings.HasPrefix(de.Name(), ".tmp-") {
				continue
			}
			if fi, err := de.Info(); err == nil && now.Sub(fi.ModTime()) > olderThan {
				os.Remove(filepath.Join(dir, de.Name()))
			}
		}
		_ = os.Remove(dir)
	}
}
