package viewer

import (
	"context"
	"net/url"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// outcomeTable is a table of outcomes (the overview's recent outcomes, the
// outcomes page, a task's outcomes): each with the patterns it used by
// name, how its result is known, and optionally a delete button.
type outcomeTable struct {
	Project   string
	Rows      []outcomeRow
	Deletable bool
}

// outcomeRow is one outcome with its patterns' names.
type outcomeRow struct {
	learning.Outcome
	PatternRefs []patternRef
	// Known is "recorded" (reported by the agent or a user) or "inferred"
	// (from what the hooks saw, when the engine marks it so).
	Known string
}

// patternRef is a pattern an outcome used, linked to its panel.
type patternRef struct {
	ID, Content, Link string
}

// outcomeTable builds the table of outcomes, reading each used pattern's
// content once (a deleted pattern shows its id).
func (v *Viewer) outcomeTable(ctx context.Context, project string, outcomes []learning.Outcome, deletable bool) (outcomeTable, error) {
	t := outcomeTable{Project: project, Deletable: deletable}
	names := map[string]string{}
	for _, o := range outcomes {
		row := outcomeRow{Outcome: o, Known: outcomeKnown(o)}
		for _, id := range o.Patterns {
			name, ok := names[id]
			if !ok {
				d, err := v.e.GetPattern(ctx, project, id)
				switch {
				case err == nil:
					name = d.Content
				case kaizen.KindOf(err) == kaizen.KindNotFound:
					name = id
				default:
					return t, err
				}
				names[id] = name
			}
			row.PatternRefs = append(row.PatternRefs, patternRef{ID: id, Content: name,
				Link: link("/patterns/"+url.PathEscape(id), "project", project)})
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// outcomeKnown says how an outcome's result is known: "inferred" when
// kaizen recorded it by itself from a tracked session's signals (closed by
// the hooks or idle), else "recorded".
func outcomeKnown(o learning.Outcome) string {
	if o.Inferred {
		return "inferred"
	}
	return "recorded"
}
