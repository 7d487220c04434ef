package viewer

import (
	"context"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kaizenhq/kaizen"
)

// base is what every full page shows: the navigation, the project
// switcher and the live-update wiring.
type base struct {
	Title    string
	Nav      string // the active navigation entry
	Project  string
	Projects []projectOption
	Path     string // the page's path, target of the project switcher
	// Version is the project's change signature (signature) read before
	// the page's data; the live-update script compares it with the
	// stream's.
	Version string
	Events  string // the event stream URL, "" without live updates
	Auth    bool   // a token is configured: show "log out"
}

// project is the project a request names (?project=), else the engine's
// default project.
func (v *Viewer) project(r *http.Request) string {
	if p := r.URL.Query().Get("project"); p != "" {
		return p
	}
	if p := v.e.Config().Project; p != "" {
		return p
	}
	return kaizen.DefaultProject
}

// base builds the common page data. It never fails: a store error leaves
// the switcher with the current project only (the page's own query
// reports the error). Listing the projects scans the store's project
// indexes, so fragments (htmx requests) skip it.
func (v *Viewer) base(r *http.Request, title, nav string) base {
	b := base{Title: title, Nav: nav, Project: v.project(r), Path: r.URL.Path, Auth: v.srv.TokenRequired()}
	if target(r) != "" {
		return b // a fragment: no header, no stream
	}
	ctx := r.Context()
	b.Projects = v.switcher(ctx, b.Project)
	if nav != "" {
		// The version read before the page's data (versioned), else now.
		sig, ok := ctx.Value(versionKey{}).(string)
		if !ok {
			var err error
			sig, err = signature(ctx, v.e, b.Project)
			ok = err == nil
		}
		if ok {
			b.Version = sig
			b.Events = "/events?" + url.Values{"project": {b.Project}}.Encode()
		}
	}
	return b
}

func (v *Viewer) defaultProject() string {
	if p := v.e.Config().Project; p != "" {
		return p
	}
	return kaizen.DefaultProject
}

// params reads a page's query parameters with limits.
type params struct{ v url.Values }

func queryOf(r *http.Request) (params, error) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return params{}, badRequest("malformed query string: %v", err)
	}
	return params{v}, nil
}

// maxParamLen bounds free-text query parameters.
const maxParamLen = 1000

// str returns a text parameter, trimmed, at most maxParamLen bytes of
// valid UTF-8.
func (p params) str(name string) (string, error) {
	s := strings.TrimSpace(p.v.Get(name))
	if len(s) > maxParamLen || !utf8.ValidString(s) {
		return "", badRequest("query parameter %s: must be valid UTF-8 of at most %d bytes", name, maxParamLen)
	}
	return s, nil
}

// intIn returns an integer parameter in [lo, hi], def when absent.
func (p params) intIn(name string, def, lo, hi int) (int, error) {
	s := strings.TrimSpace(p.v.Get(name))
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, badRequest("query parameter %s: %q is not an integer between %d and %d", name, s, lo, hi)
	}
	return n, nil
}

// oneOf returns a parameter that must be one of allowed ("" allowed when
// listed).
func (p params) oneOf(name string, allowed ...string) (string, error) {
	s := strings.TrimSpace(p.v.Get(name))
	if !slices.Contains(allowed, s) {
		return "", badRequest("query parameter %s: %q is not one of %s", name, s, strings.Join(allowed, ", "))
	}
	return s, nil
}

// Paging of every list.
const (
	defaultPageSize = 25
	maxPageSize     = 200
)

// page reads offset and limit.
func (p params) page() (offset, limit int, err error) {
	if offset, err = p.intIn("offset", 0, 0, math.MaxInt32); err != nil {
		return 0, 0, err
	}
	limit, err = p.intIn("limit", defaultPageSize, 1, maxPageSize)
	return offset, limit, err
}

// listParams reads what every list page reads first: the query, a text
// parameter (the search, or a filter such as task) and the page.
func listParams(r *http.Request, key string) (q params, text string, offset, limit int, err error) {
	if q, err = queryOf(r); err != nil {
		return q, "", 0, 0, err
	}
	if text, err = q.str(key); err != nil {
		return q, "", 0, 0, err
	}
	offset, limit, err = q.page()
	return q, text, offset, limit, err
}

// link builds "path?k=v&…" from key/value pairs, leaving out empty
// strings, zeros and false (the defaults).
func link(path string, kv ...any) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		k := fmt.Sprint(kv[i])
		var s string
		switch x := kv[i+1].(type) {
		case string:
			s = x
		case int:
			if x != 0 { // zero is every parameter's default
				s = strconv.Itoa(x)
			}
		case bool:
			if x {
				s = "1"
			}
		default:
			s = fmt.Sprint(x)
		}
		if s != "" {
			q.Set(k, s)
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// pager is the paging bar of a list.
type pager struct {
	Offset, Limit int
	Total         int64
	From, To      int64
	Prev, Next    string // links, "" at either end
}

// newPager builds the paging bar; at(offset) is the link to a page.
func newPager(offset, limit int, total int64, shown int, at func(offset int) string) pager {
	p := pager{Offset: offset, Limit: limit, Total: total}
	if shown > 0 {
		p.From, p.To = int64(offset)+1, int64(offset+shown)
	}
	if offset > 0 {
		p.Prev = at(max(0, offset-limit))
	}
	if int64(offset+limit) < total {
		p.Next = at(offset + limit)
	}
	return p
}

// funcs are the template functions. None of them returns template.HTML:
// every value, and above all text that agents wrote, is escaped by
// html/template in its context.
var funcs = template.FuncMap{
	"link": link,
	"f1":   func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"f2":   func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) },
	"f3":   func(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) },
	"pct": func(f float64) string {
		if math.IsNaN(f) {
			return "–"
		}
		return strconv.FormatFloat(f*100, 'f', 0, 64) + "%"
	},
	"when": func(t any) string {
		switch x := t.(type) {
		case time.Time:
			if x.IsZero() {
				return "–"
			}
			return x.UTC().Format("2006-01-02 15:04 UTC")
		case *time.Time:
			if x == nil || x.IsZero() {
				return "–"
			}
			return x.UTC().Format("2006-01-02 15:04 UTC")
		}
		return ""
	},
	"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"ms": func(ms int64) string {
		return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
	},
	"join":       func(s []string) string { return strings.Join(s, ", ") },
	"firstLine":  firstLine,
	"nudgeClass": nudgeClass,
	"list":       func(s ...string) []string { return s },
	"add":        func(a, b int) int { return a + b },
	"thresholds": func(m map[string]float64) []threshold {
		out := make([]threshold, 0, len(m))
		for k, v := range m {
			out = append(out, threshold{k, v})
		}
		slices.SortFunc(out, func(a, b threshold) int { return strings.Compare(a.Name, b.Name) })
		return out
	},
}

type threshold struct {
	Name  string
	Value float64
}

// withTimeout bounds the queries of one page.
func withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 30*time.Second)
}
