package viewer

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// staticFile is an embedded asset with its content type and ETag.
type staticFile struct {
	data        []byte
	contentType string
	etag        string
}

var contentTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".svg": "image/svg+xml",
}

// loadStatic reads the embedded assets served under /static/. Only the
// types above are served (not the vendoring notes).
func loadStatic() (map[string]staticFile, error) {
	out := map[string]staticFile{}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, ok := contentTypes[path.Ext(p)]
		if !ok {
			return nil
		}
		data, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[strings.TrimPrefix(p, "static/")] = staticFile{data: data, contentType: ct,
			etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	return out, err
}

// serveStatic serves an embedded asset. Browsers revalidate with the
// ETag (304 when unchanged), so a new release is picked up at once.
func (v *Viewer) serveStatic(w http.ResponseWriter, r *http.Request) error {
	f, ok := v.static[r.PathValue("file")]
	if !ok {
		return viewError{status: http.StatusNotFound, message: "no such file"}
	}
	h := w.Header()
	h.Set("ETag", f.etag)
	h.Set("Cache-Control", "no-cache")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, f.etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", f.contentType)
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(f.data)
	}
	return nil
}
