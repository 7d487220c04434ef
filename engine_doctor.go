package kaizen

import (
	"context"

	"github.com/kaizenhq/kaizen/store"
)

// StoreHealth is what the store reports about itself.
type StoreHealth = store.Health

// CheckStore checks the database (kaizen doctor): its integrity and its
// schema migrations. KindInvalid when the store cannot check itself.
func (e *Engine) CheckStore(ctx context.Context) (StoreHealth, error) {
	c, ok := e.env.Store.(store.Checker)
	if !ok {
		return StoreHealth{Backend: e.env.Store.Backend()}, &Error{Op: "check store", Kind: KindInvalid,
			Message: "the " + e.env.Store.Backend() + " store cannot check itself"}
	}
	return c.Check(ctx)
}
