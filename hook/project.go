package hook

import (
	"os"
	"path/filepath"

	"github.com/kaizenhq/kaizen"
)

// ProjectForDir names the project of a directory the way every surface
// does for its working directory: the name of its git root (the nearest
// directory up holding .git), else its own name; the default project when
// that is not a valid project name.
func ProjectForDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	name := filepath.Base(GitRoot(dir))
	if name == "" || name == "/" || name == "." {
		return kaizen.DefaultProject
	}
	check := kaizen.DefaultConfig()
	check.Project = name
	if check.Validate() != nil {
		return kaizen.DefaultProject
	}
	return name
}

// GitRoot is the nearest directory from dir up holding .git, else dir.
func GitRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}
