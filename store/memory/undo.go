package memory

// undoLog records, for every mutation of an Update, the closure that
// reverses it. Rolling back runs them newest first, which restores every
// map (and so every index) to its state before the Update began.
type undoLog struct {
	ops []func()
}

// push records an undo step; a nil log (a View) records nothing.
func (u *undoLog) push(op func()) {
	if u != nil {
		u.ops = append(u.ops, op)
	}
}

func (u *undoLog) rollback() {
	for i := len(u.ops) - 1; i >= 0; i-- {
		u.ops[i]()
	}
	u.ops = nil
}

// put sets m[k] = v and records how to restore the previous entry.
func put[K comparable, V any](u *undoLog, m map[K]V, k K, v V) {
	old, had := m[k]
	m[k] = v
	u.push(func() {
		if had {
			m[k] = old
		} else {
			delete(m, k)
		}
	})
}

// remove deletes m[k] and records how to restore it.
func remove[K comparable, V any](u *undoLog, m map[K]V, k K) {
	old, had := m[k]
	if !had {
		return
	}
	delete(m, k)
	u.push(func() { m[k] = old })
}

// index maps a key (a criterion, task, pattern id or content key) to the set of record
// ids carrying it.
type index map[string]map[string]struct{}

func (ix index) add(u *undoLog, key, id string) {
	set := ix[key]
	if set == nil {
		set = map[string]struct{}{}
		ix[key] = set
	}
	put(u, set, id, struct{}{})
}

func (ix index) remove(u *undoLog, key, id string) {
	if set := ix[key]; set != nil {
		remove(u, set, id)
	}
}
