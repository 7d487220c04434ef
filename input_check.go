package kaizen

import "github.com/kaizenhq/kaizen/internal/app"

// ValidProject checks a project name as every surface does: a bounded
// name without path separators.
func ValidProject(p string) error { return app.ValidProject(p) }
