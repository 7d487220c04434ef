// Package atomicfile writes a file so that a reader sees either its old
// content or its whole new content, never a part: the content goes to a
// temporary file in the same directory, which is then renamed over the
// target. Used for the engine's cache files (vector index and pattern
// snapshots), which a crash may lose but must never leave half-written.
package atomicfile

import (
	"io"
	"os"
	"path/filepath"
)

// Write creates the directory of path (0700) when missing, lets write fill
// a temporary file there and renames it to path. On any error the
// temporary file is removed and path is left as it was. The file is not
// synced: what is written this way can be rebuilt.
func Write(path string, write func(w io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".snapshot-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after a successful rename: a no-op
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
