package viewer

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen"
)

// Projects: the switcher in the header lists every project holding data
// with its last activity, the projects page compares them (counts, last
// activity, a month's success), and a project without data gets the next
// steps instead of empty tables.

// projectOption is an entry of the project switcher.
type projectOption struct {
	Name  string
	Label string
}

// switcher lists the projects for the header: every project holding data
// with how long ago it was last active, plus the current and the default
// project (marked when they hold nothing yet).
func (v *Viewer) switcher(ctx context.Context, current string) []projectOption {
	sums, err := v.e.ProjectSummaries(ctx, kaizen.ProjectQuery{})
	if err != nil {
		v.log.Warn("viewer: listing projects failed", "err", err)
	}
	now := v.e.Now()
	var out []projectOption
	seen := map[string]bool{}
	for _, s := range sums {
		seen[s.Project] = true
		label := s.Project
		if !s.LastActivity.IsZero() {
			label += " · " + ago(now, s.LastActivity)
		}
		out = append(out, projectOption{Name: s.Project, Label: label})
	}
	for _, p := range []string{current, v.defaultProject()} {
		if !seen[p] {
			seen[p] = true
			out = append(out, projectOption{Name: p, Label: p + " · no data yet"})
		}
	}
	slices.SortFunc(out, func(a, b projectOption) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ago says how long before now t was, roughly.
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	case d < 60*24*time.Hour:
		return fmt.Sprintf("%d days ago", int(d.Hours()/24))
	}
	return t.UTC().Format("2006-01-02")
}

// emptyState is what a project without data shows: which project the
// daemon is looking at, where its data is stored, the projects that do
// hold data, and how to start.
type emptyState struct {
	Project, Default string
	Where            string
	Others           []kaizen.ProjectSummary
	Now              time.Time
}

// Ago is how long before the page a project was last active.
func (e emptyState) Ago(t time.Time) string { return ago(e.Now, t) }

func (v *Viewer) emptyState(ctx context.Context, project string) *emptyState {
	e := &emptyState{Project: project, Default: v.defaultProject(), Where: storeLocation(v.e), Now: v.e.Now()}
	sums, err := v.e.ProjectSummaries(ctx, kaizen.ProjectQuery{})
	if err != nil {
		v.log.Warn("viewer: listing projects failed", "err", err)
	}
	for _, s := range sums {
		if s.Project != project {
			e.Others = append(e.Others, s)
		}
	}
	slices.SortFunc(e.Others, func(a, b kaizen.ProjectSummary) int { return b.LastActivity.Compare(a.LastActivity) })
	return e
}

// storeLocation describes where the engine keeps its data, without
// credentials: a SQLite file's path, or a PostgreSQL server and database.
func storeLocation(e *kaizen.Engine) string {
	cfg := e.Config()
	db := cfg.DB
	if u, err := url.Parse(db); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		return fmt.Sprintf("the PostgreSQL database %s on %s", strings.TrimPrefix(u.Path, "/"), u.Host)
	}
	if db == "" || db == "memory" || db == ":memory:" {
		return "a temporary in-memory store (nothing is kept after the daemon stops)"
	}
	return "the SQLite file " + db
}

// ---- the projects page ----

type projectRow struct {
	kaizen.ProjectSummary
	Ago       string
	Spark     sparkline
	Total, OK int
	Current   bool
	Default   bool
}

// Rate is the row's success rate text over the sparkline's days.
func (p projectRow) Rate() string {
	if p.Total == 0 {
		return "–"
	}
	return fmt.Sprintf("%d/%d (%s)", p.OK, p.Total, pct0(float64(p.OK)/float64(p.Total)))
}

type projectsData struct {
	base
	Rows  []projectRow
	Days  int
	Where string
}

// projectTrendDays is the period of the projects page's trends.
const projectTrendDays = 30

func (v *Viewer) projectList(w http.ResponseWriter, r *http.Request) error {
	if _, err := queryOf(r); err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := projectsData{base: v.base(r, "Projects", "projects"), Days: projectTrendDays, Where: storeLocation(v.e)}
	sums, err := v.e.ProjectSummaries(ctx, kaizen.ProjectQuery{Counts: true})
	if err != nil {
		return err
	}
	now := v.e.Now()
	for _, s := range sums {
		row := projectRow{ProjectSummary: s, Current: s.Project == d.Project, Default: s.Project == v.defaultProject()}
		if !s.LastActivity.IsZero() {
			row.Ago = ago(now, s.LastActivity)
		}
		days, _, err := v.successByDay(ctx, s.Project, projectTrendDays)
		if err != nil {
			return err
		}
		for _, b := range days {
			row.Total += b.Total
			row.OK += b.Succeeded
		}
		row.Spark = projectSparkline(days)
		d.Rows = append(d.Rows, row)
	}
	slices.SortStableFunc(d.Rows, func(a, b projectRow) int { return b.LastActivity.Compare(a.LastActivity) })
	return v.renderList(w, r, "projects", d)
}
