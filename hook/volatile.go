package hook

import (
	"os"
	"path/filepath"
	"strings"
)

// VolatileExecutable says why an executable path will not outlive the
// command that names it ("" when it is a lasting path): it lies in Go's
// build cache or a go-build work directory (what `go run` builds and
// deletes on exit), or in the temporary directory.
func VolatileExecutable(exe string) string {
	abs, err := filepath.Abs(exe)
	if err != nil {
		abs = exe
	}
	abs = filepath.Clean(abs)
	for _, part := range strings.Split(filepath.ToSlash(abs), "/") {
		if strings.HasPrefix(part, "go-build") {
			return "in a Go build directory (go run)"
		}
	}
	var caches []string
	if c := os.Getenv("GOCACHE"); c != "" {
		caches = append(caches, c)
	}
	if c, err := os.UserCacheDir(); err == nil {
		caches = append(caches, filepath.Join(c, "go-build"))
	}
	for _, c := range caches {
		if within(abs, c) {
			return "in Go's build cache"
		}
	}
	for _, tmp := range []string{os.TempDir(), "/tmp", "/var/tmp", "/private/var/folders", "/var/folders"} {
		if within(abs, tmp) {
			return "in a temporary directory (" + tmp + ")"
		}
	}
	return ""
}

// within reports whether path is dir or below it (both compared after
// resolving symbolic links where possible).
func within(path, dir string) bool {
	if dir == "" {
		return false
	}
	for _, d := range []string{filepath.Clean(dir), resolve(dir)} {
		for _, p := range []string{path, resolve(path)} {
			if rel, err := filepath.Rel(d, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return true
			}
		}
	}
	return false
}

func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
