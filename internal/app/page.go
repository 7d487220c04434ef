package app

import (
	"context"

	"github.com/kaizenhq/kaizen/store"
)

// Page is the one shape of every paged listing on every surface: the
// project it lists, the page's items (never nil, so an empty page is []
// in JSON), the total number of matching records, and the page bounds.
type Page[T any] struct {
	Project string `json:"project"`
	Items   []T    `json:"items"`
	Total   int64  `json:"total"`
	Limit   int    `json:"limit"`
	Offset  int    `json:"offset"`
}

// PageQuery validates what every listing takes: the project, the page,
// and optional ids given as field name, value pairs (empty values are
// absent). It returns the project and the page's limit.
func (e *Env) PageQuery(op, project string, limit, offset int, ids ...string) (string, int, error) {
	project, err := e.ResolveProject(op, project)
	if err != nil {
		return "", 0, err
	}
	if limit, err = PageLimit(op, limit, offset); err != nil {
		return "", 0, err
	}
	return project, limit, ValidOptionalIDs(op, ids...)
}

// ValidOptionalIDs checks ids given as field name, value pairs; an empty
// value is an absent id.
func ValidOptionalIDs(op string, pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			continue
		}
		if err := ValidID(op, pairs[i], pairs[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// ListPage counts a listing and reads its page in one read transaction.
func ListPage[T any](ctx context.Context, env *Env, op, project string, limit, offset int,
	count func(store.Tx) (int64, error), list func(store.Tx) ([]T, error)) (*Page[T], error) {
	p := &Page[T]{Project: project, Limit: limit, Offset: offset}
	err := env.View(ctx, op, func(tx store.Tx) error {
		var err error
		if p.Total, err = count(tx); err != nil {
			return err
		}
		p.Items, err = list(tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.Items == nil {
		p.Items = []T{}
	}
	return p, nil
}

// NewPage wraps items already read as a page.
func NewPage[T any](project string, items []T, total int64, limit, offset int) *Page[T] {
	if items == nil {
		items = []T{}
	}
	return &Page[T]{Project: project, Items: items, Total: total, Limit: limit, Offset: offset}
}

// Finish completes a page read by hand: nil on error, else the page with
// non-nil items.
func Finish[T any](p *Page[T], err error) (*Page[T], error) {
	if err != nil {
		return nil, err
	}
	if p.Items == nil {
		p.Items = []T{}
	}
	return p, nil
}
