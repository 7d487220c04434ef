package team

import (
	"cmp"
	"slices"
	"strings"
)

// ValidateGraph checks a whole task graph: every task valid (ValidateTask),
// ids unique, every blocked_by id present in the graph, and no cycle. A cycle
// is refused with a *CycleError naming the ids along it, found
// deterministically (tasks visited in id order).
func ValidateGraph(tasks []Task) error {
	const op = "validate graph"
	if len(tasks) > MaxGraphTasks {
		return invalid(op, "tasks", "%d tasks, at most %d", len(tasks), MaxGraphTasks)
	}
	byID := make(map[string]int, len(tasks))
	for i, t := range tasks {
		if err := ValidateTask(t); err != nil {
			return err
		}
		if _, dup := byID[t.ID]; dup {
			return invalid(op, "id", "task %q appears twice", t.ID)
		}
		byID[t.ID] = i
	}
	deps := make(map[string][]string, len(tasks))
	for _, t := range tasks {
		for _, d := range t.BlockedBy {
			if _, ok := byID[d]; !ok {
				return invalid(op, "blocked_by", "task %q is blocked by unknown task %q", t.ID, d)
			}
		}
		deps[t.ID] = t.BlockedBy
	}
	if c := findCycle(deps); c != nil {
		return &CycleError{Cycle: c}
	}
	return nil
}

// CheckAddTask validates a task about to join an existing graph: the task on
// its own, its dependencies known, its id new, and no cycle through it.
func CheckAddTask(existing []Task, t Task) error {
	all := make([]Task, 0, len(existing)+1)
	all = append(all, existing...)
	return ValidateGraph(append(all, t))
}

// findCycle returns a cycle of the dependency relation (id → blocked_by) as
// ids with the first repeated at the end, or nil. Ids are visited in sorted
// order so the answer is stable.
func findCycle(deps map[string][]string) []string {
	const (
		white = iota
		grey
		black
	)
	color := make(map[string]int, len(deps))
	ids := make([]string, 0, len(deps))
	for id := range deps {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	// Iterative DFS: a stack of (node, next dependency index).
	type frame struct {
		id string
		i  int
	}
	for _, root := range ids {
		if color[root] != white {
			continue
		}
		stack := []frame{{root, 0}}
		color[root] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			ds := deps[top.id]
			if top.i == len(ds) {
				color[top.id] = black
				stack = stack[:len(stack)-1]
				continue
			}
			d := ds[top.i]
			top.i++
			switch color[d] {
			case white:
				color[d] = grey
				stack = append(stack, frame{d, 0})
			case grey:
				// d is on the stack: the cycle runs from d to the top and back.
				var cyc []string
				on := false
				for _, f := range stack {
					if f.id == d {
						on = true
					}
					if on {
						cyc = append(cyc, f.id)
					}
				}
				return append(cyc, d)
			}
		}
	}
	return nil
}

// Ready returns the ready set: tasks that are pending, not paused, hold no
// lease, and whose every blocked_by task is completed, in claim order
// (created_at, then id). A dependency missing from tasks counts as not
// completed.
func Ready(tasks []Task) []Task {
	status := make(map[string]TaskStatus, len(tasks))
	for _, t := range tasks {
		status[t.ID] = t.Status
	}
	var out []Task
	for _, t := range tasks {
		if t.Status != StatusPending || t.Paused || t.Lease.Held() {
			continue
		}
		if depsDone(t, status) {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b Task) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

func depsDone(t Task, status map[string]TaskStatus) bool {
	for _, d := range t.BlockedBy {
		if status[d] != StatusCompleted {
			return false
		}
	}
	return true
}

// BlockChange is one status change that dependency propagation asks for.
type BlockChange struct {
	Task  string     `json:"task"`
	To    TaskStatus `json:"to"`    // StatusBlocked or StatusPending
	Cause string     `json:"cause"` // e.g. "dependency IMPL-001 failed"
}

// Propagate computes the status changes that dependency failures imply.
//
// Policy: a pending task with a failed, cancelled or blocked dependency —
// direct, or through a chain — becomes blocked, because it can never become
// ready on its own; the change's Cause ("dependency <id> failed") is meant
// to be stored as the task's BlockedCause. A task blocked that way returns
// to pending once none of its dependencies is failed, cancelled or blocked
// any more (the failed dependency was retried: failed → pending). Tasks
// blocked explicitly (another BlockedCause) are never unblocked here, and
// in-progress and terminal tasks are left alone. The result is sorted by
// task id; applying it and calling Propagate again yields nothing (a fixed
// point), which tests check.
func Propagate(tasks []Task) []BlockChange {
	byID := make(map[string]Task, len(tasks))
	for _, t := range tasks {
		byID[t.ID] = t
	}
	// bad[id] = the root cause if id is (or will be) unusable as a dependency.
	memo := map[string]string{}
	visiting := map[string]bool{}
	var cause func(id string) string
	firstBad := func(t Task) string {
		for _, d := range t.BlockedBy {
			if dc := cause(d); dc != "" {
				return dc
			}
		}
		return ""
	}
	cause = func(id string) string {
		if c, ok := memo[id]; ok {
			return c
		}
		t, ok := byID[id]
		if !ok || visiting[id] {
			return ""
		}
		visiting[id] = true
		defer delete(visiting, id)
		c := ""
		switch t.Status {
		case StatusFailed, StatusCancelled:
			c = "dependency " + t.ID + " " + string(t.Status)
		case StatusPending:
			c = firstBad(t)
		case StatusBlocked:
			c = firstBad(t)
			if c == "" && !BlockedByPropagation(t) {
				c = "dependency " + t.ID + " blocked"
			}
		}
		memo[id] = c
		return c
	}
	var out []BlockChange
	for _, t := range tasks {
		depCause := firstBad(t)
		switch {
		case t.Status == StatusPending && depCause != "":
			out = append(out, BlockChange{Task: t.ID, To: StatusBlocked, Cause: depCause})
		case t.Status == StatusBlocked && depCause == "" && BlockedByPropagation(t):
			out = append(out, BlockChange{Task: t.ID, To: StatusPending, Cause: "no dependency failed, cancelled or blocked any more"})
		}
	}
	slices.SortFunc(out, func(a, b BlockChange) int { return cmp.Compare(a.Task, b.Task) })
	return out
}

// BlockedByPropagation reports whether a blocked task was blocked by
// Propagate (its BlockedCause names a dependency) rather than explicitly.
// Only such tasks are returned to pending by Propagate.
func BlockedByPropagation(t Task) bool {
	return t.Status == StatusBlocked && strings.HasPrefix(t.BlockedCause, "dependency ")
}

// PlanItem is one unit of a plan to be layered: an id and the ids it waits for.
type PlanItem struct {
	ID        string   `json:"id"`
	Title     string   `json:"title,omitempty"`
	BlockedBy []string `json:"blocked_by,omitempty"`
}

// TopoLayers groups plan items into dependency layers: layer 0 holds items
// with no dependencies, layer k items whose dependencies all sit in layers
// below k. Items keep their input order inside a layer. Unknown dependency
// ids are a *ValidationError, cycles a *CycleError. CP-6 turns each layer
// into one increment.
func TopoLayers(items []PlanItem) ([][]PlanItem, error) {
	const op = "layer plan"
	if len(items) > MaxGraphTasks {
		return nil, invalid(op, "items", "%d items, at most %d", len(items), MaxGraphTasks)
	}
	idx := make(map[string]int, len(items))
	deps := make(map[string][]string, len(items))
	for i, it := range items {
		if it.ID == "" {
			return nil, invalid(op, "id", "item %d has no id", i)
		}
		if _, dup := idx[it.ID]; dup {
			return nil, invalid(op, "id", "item %q appears twice", it.ID)
		}
		idx[it.ID] = i
		deps[it.ID] = it.BlockedBy
	}
	for _, it := range items {
		for _, d := range it.BlockedBy {
			if _, ok := idx[d]; !ok {
				return nil, invalid(op, "blocked_by", "item %q is blocked by unknown item %q", it.ID, d)
			}
		}
	}
	if c := findCycle(deps); c != nil {
		return nil, &CycleError{Cycle: c}
	}
	level := make(map[string]int, len(items))
	var depth func(id string) int
	depth = func(id string) int {
		if l, ok := level[id]; ok {
			return l
		}
		l := 0
		for _, d := range deps[id] {
			l = max(l, depth(d)+1)
		}
		level[id] = l
		return l
	}
	var layers [][]PlanItem
	for _, it := range items {
		l := depth(it.ID)
		for len(layers) <= l {
			layers = append(layers, nil)
		}
		layers[l] = append(layers[l], it)
	}
	return layers, nil
}

// TaskLayers layers a validated task graph (see TopoLayers) and returns task ids.
func TaskLayers(tasks []Task) ([][]string, error) {
	items := make([]PlanItem, len(tasks))
	for i, t := range tasks {
		items[i] = PlanItem{ID: t.ID, Title: t.Subject, BlockedBy: t.BlockedBy}
	}
	layers, err := TopoLayers(items)
	if err != nil {
		return nil, err
	}
	out := make([][]string, len(layers))
	for i, l := range layers {
		for _, it := range l {
			out[i] = append(out[i], it.ID)
		}
	}
	return out, nil
}
