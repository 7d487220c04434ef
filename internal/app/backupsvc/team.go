package backupsvc

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/team"
)

// The team engine's records (seed 004): teams (definition with members,
// limits and settings, lifecycle), their task graphs (dependency edges,
// status, leases with their fencing epochs), their messages with every
// recipient's delivery, their event logs, and collaboration pattern runs
// with their event logs.
//
// Tasks and runs keep their ids and are inserted idempotently. Messages,
// team events and run events are numbered by the store (message seq, event
// id, run event n): they are imported only into a team (or run) that this
// import created, so a second import, or an import into a home where the
// team already lives, adds none. Message seqs and run event numbers are
// checked to come back identical (the runs' state refers to them).
const (
	recTeam         = "team"
	recTeamTask     = "team_task"
	recTeamMessage  = "team_message"
	recTeamEvent    = "team_event"
	recTeamRun      = "team_run"
	recTeamRunEvent = "team_run_event"
)

type teamTaskRecord struct {
	Project string    `json:"project"`
	Task    team.Task `json:"task"`
}

type teamMessageRecord struct {
	Project    string          `json:"project"`
	Message    team.Message    `json:"message"`
	Deliveries []team.Delivery `json:"deliveries"`
}

type teamRunEventRecord struct {
	Project string         `json:"project"`
	RunID   string         `json:"run_id"`
	Event   store.RunEvent `json:"event"`
}

func teamKey(project, name string) string { return project + "\x00" + name }

// created reports whether this import created the team (kind "team") or
// the run (kind "run") named by key.
func (st *importState) created(kind, key string) bool { return st.teamNew[kind+"\x00"+key] }

func (st *importState) markCreated(kind, key string) {
	if st.teamNew == nil {
		st.teamNew = map[string]bool{}
	}
	st.teamNew[kind+"\x00"+key] = true
}

// decodeTeamRecord is decodeRecord for the team records: lease expiries,
// delivery visibility and the like are deadlines, legitimately in the
// future, so they are set aside while the rest of the record is checked.
func decodeTeamRecord[T any](st *importState, raw json.RawMessage, deadlines func(*T) []*time.Time) (T, error) {
	var v T
	if err := app.DecodeJSON(raw, &v, "import"); err != nil {
		return v, err
	}
	scrubRecord(&v)
	var saved []time.Time
	var ptrs []*time.Time
	if deadlines != nil {
		ptrs = deadlines(&v)
		for _, p := range ptrs {
			if !p.IsZero() && p.Year() < 1970 {
				return v, app.Invalid("import", "deadline", "%s is before 1970", p.Format(time.RFC3339))
			}
			saved = append(saved, *p)
			*p = time.Time{}
		}
	}
	err := app.CheckRecord("import", v, st.now)
	for i, p := range ptrs {
		*p = saved[i]
	}
	return v, err
}

func validTeamName(field, name string) error {
	if !team.ValidName(name) {
		return app.Invalid("import", field, "invalid team name %q", name)
	}
	return nil
}

func validJSON(field string, raw json.RawMessage, required bool) error {
	if (required || len(raw) > 0) && !json.Valid(raw) {
		return app.Invalid("import", field, "is not valid JSON")
	}
	return nil
}

// teamExists checks that a record's team is earlier in the file (or in the
// home already).
func (st *importState) teamExists(ctx context.Context, project, name string) error {
	if err := validTeamName("team", name); err != nil {
		return err
	}
	if _, err := st.tx.GetTeam(ctx, project, name); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return app.Invalid("import", "team", "references team %q, which is not earlier in the file", name)
		}
		return err
	}
	return nil
}

func init() {
	RecordTypes = append(RecordTypes, recTeam, recTeamTask, recTeamMessage, recTeamEvent, recTeamRun, recTeamRunEvent)
	importers[recTeam] = func(ctx context.Context, st *importState, raw json.RawMessage) error {
		r, err := decodeTeamRecord[store.TeamRecord](st, raw, nil)
		if err != nil {
			return err
		}
		if r.Project, err = st.project(r.Project); err != nil {
			return err
		}
		if err := validTeamName("name", r.Name); err != nil {
			return err
		}
		if err := validJSON("doc", r.Doc, true); err != nil {
			return err
		}
		r.LastSeq = 0 // the messages bring it back
		ok, err := st.tx.InsertTeam(ctx, r)
		if err != nil {
			return err
		}
		if ok {
			st.markCreated("team", teamKey(r.Project, r.Name))
		}
		st.count(recTeam, ok)
		return nil
	}
	importers[recTeamTask] = func(ctx context.Context, st *importState, raw json.RawMessage) error {
		r, err := decodeTeamRecord(st, raw, func(r *teamTaskRecord) []*time.Time {
			return []*time.Time{&r.Task.Lease.ExpiresAt}
		})
		if err != nil {
			return err
		}
		if r.Project, err = st.project(r.Project); err != nil {
			return err
		}
		if err := team.ValidateTask(r.Task); err != nil {
			return app.Invalid("import", "task", "%v", err)
		}
		if err := st.teamExists(ctx, r.Project, r.Task.Team); err != nil {
			return err
		}
		ok, err := st.tx.InsertTeamTask(ctx, r.Project, r.Task)
		st.count(recTeamTask, ok)
		return err
	}
	importers[recTeamMessage] = func(ctx context.Context, st *importState, raw json.RawMessage) error {
		r, err := decodeTeamRecord(st, raw, func(r *teamMessageRecord) []*time.Time {
			ts := make([]*time.Time, len(r.Deliveries))
			for i := range r.Deliveries {
				ts[i] = &r.Deliveries[i].VisibleAt
			}
			return ts
		})
		if err != nil {
			return err
		}
		if r.Project, err = st.project(r.Project); err != nil {
			return err
		}
		m := r.Message
		if err := st.teamExists(ctx, r.Project, m.Team); err != nil {
			return err
		}
		if m.Seq < 1 {
			return app.Invalid("import", "seq", "must be >= 1")
		}
		if err := app.ValidID("import", "from", m.From); err != nil {
			return err
		}
		if err := team.ValidateAddress(m.To); err != nil {
			return app.Invalid("import", "to", "%v", err)
		}
		if err := validJSON("data", m.Data, false); err != nil {
			return err
		}
		recipients := make([]string, 0, len(r.Deliveries))
		seen := map[string]bool{}
		for _, d := range r.Deliveries {
			if !team.ValidName(d.Recipient) || seen[d.Recipient] {
				return app.Invalid("import", "recipient", "invalid or repeated recipient %q", d.Recipient)
			}
			if d.State.Rank() < 0 || d.Deliveries < 0 {
				return app.Invalid("import", "delivery", "invalid state %q or count %d", d.State, d.Deliveries)
			}
			seen[d.Recipient] = true
			recipients = append(recipients, d.Recipient)
		}
		if !st.created("team", teamKey(r.Project, m.Team)) {
			st.count(recTeamMessage, false)
			return nil
		}
		got, err := st.tx.AppendTeamMessage(ctx, r.Project, m, recipients)
		if err != nil {
			return err
		}
		if got.Seq != m.Seq {
			return app.Invalid("import", "seq", "message %d of team %q comes after message %d: messages must be complete and in order", m.Seq, m.Team, got.Seq-1)
		}
		for _, d := range r.Deliveries {
			d.Seq = m.Seq
			if err := st.tx.UpdateDelivery(ctx, r.Project, m.Team, d); err != nil {
				return err
			}
		}
		st.count(recTeamMessage, true)
		return nil
	}
	importers[recTeamEvent] = func(ctx context.Context, st *importState, raw json.RawMessage) error {
		e, err := decodeTeamRecord[store.TeamEvent](st, raw, nil)
		if err != nil {
			return err
		}
		if e.Project, err = st.project(e.Project); err != nil {
			return err
		}
		if err := st.teamExists(ctx, e.Project, e.Team); err != nil {
			return err
		}
		if err := validJSON("data", e.Data, false); err != nil {
			return err
		}
		if !st.created("team", teamKey(e.Project, e.Team)) {
			st.count(recTeamEvent, false)
			return nil
		}
		e.ID = 0
		_, err = st.tx.InsertTeamEvent(ctx, e)
		st.count(recTeamEvent, err == nil)
		return err
	}
	importers[recTeamRun] = func(ctx context.Context, st *importState, raw json.RawMessage) error {
		r, err := decodeTeamRecord[store.TeamRun](st, raw, nil)
		if err != nil {
			return err
		}
		if r.Project, err = st.project(r.Project); err != nil {
			return err
		}
		if err := app.ValidID("import", "id", r.ID); err != nil {
			return err
		}
		if err := validTeamName("team", r.Team); err != nil {
			return err
		}
		if r.Pattern == "" {
			return app.Invalid("import", "pattern", "required")
		}
		var run team.Run
		if err := json.Unmarshal(r.Run, &run); err != nil {
			return app.Invalid("import", "run", "is not a pattern run: %v", err)
		}
		ok, err := st.tx.InsertTeamRun(ctx, r)
		if err != nil {
			return err
		}
		if ok {
			st.markCreated("run", teamKey(r.Project, r.ID))
		}
		st.count(recTeamRun, ok)
		return nil
	}
	importers[recTeamRunEvent] = func(ctx context.Context, st *importState, raw json.RawMessage) error {
		r, err := decodeTeamRecord[teamRunEventRecord](st, raw, nil)
		if err != nil {
			return err
		}
		if r.Project, err = st.project(r.Project); err != nil {
			return err
		}
		if err := app.ValidID("import", "run_id", r.RunID); err != nil {
			return err
		}
		if err := validJSON("event", r.Event.Event, true); err != nil {
			return err
		}
		if err := validJSON("commands", r.Event.Commands, false); err != nil {
			return err
		}
		if _, err := st.tx.GetTeamRun(ctx, r.Project, r.RunID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return app.Invalid("import", "run_id", "references run %q, which is not earlier in the file", r.RunID)
			}
			return err
		}
		if !st.created("run", teamKey(r.Project, r.RunID)) {
			st.count(recTeamRunEvent, false)
			return nil
		}
		n, err := st.tx.AppendRunEvent(ctx, r.Project, r.RunID, r.Event)
		if err != nil {
			return err
		}
		if n != r.Event.N {
			return app.Invalid("import", "n", "event %d of run %q comes after event %d: events must be complete and in order", r.Event.N, r.RunID, n-1)
		}
		st.count(recTeamRunEvent, true)
		return nil
	}
}

// exportTeam writes the team engine's records: each team with its tasks,
// messages (with their deliveries) and events, then the pattern runs
// (oldest first, so parents come before their children) with their events.
func exportTeam(ctx context.Context, tx store.Tx, p string, write writeFunc) error {
	teams, err := tx.ListTeams(ctx, p, true)
	if err != nil {
		return err
	}
	for _, t := range teams {
		if err := write(recTeam, t); err != nil {
			return err
		}
		if err := pages(func(limit, offset int) ([]team.Task, error) {
			return tx.ListTeamTasks(ctx, p, t.Name, store.TeamTaskFilter{Limit: limit, Offset: offset})
		}, func(x team.Task) error {
			return write(recTeamTask, teamTaskRecord{Project: p, Task: x})
		}); err != nil {
			return err
		}
		for after := int64(0); ; {
			msgs, err := tx.ListTeamMessages(ctx, p, t.Name, after, pageSize)
			if err != nil {
				return err
			}
			for _, m := range msgs {
				ds, err := tx.MessageDeliveries(ctx, p, t.Name, m.Seq)
				if err != nil {
					return err
				}
				if ds == nil {
					ds = []team.Delivery{}
				}
				if err := write(recTeamMessage, teamMessageRecord{Project: p, Message: m, Deliveries: ds}); err != nil {
					return err
				}
				after = m.Seq
			}
			if len(msgs) < pageSize {
				break
			}
		}
		for after := int64(0); ; {
			evs, err := tx.ListTeamEvents(ctx, p, t.Name, "", after, pageSize)
			if err != nil {
				return err
			}
			for _, e := range evs {
				if err := write(recTeamEvent, e); err != nil {
					return err
				}
				after = e.ID
			}
			if len(evs) < pageSize {
				break
			}
		}
	}
	return pages(func(limit, offset int) ([]store.TeamRun, error) {
		return tx.ListTeamRuns(ctx, p, store.TeamRunFilter{Limit: limit, Offset: offset})
	}, func(r store.TeamRun) error {
		if err := write(recTeamRun, r); err != nil {
			return err
		}
		evs, err := tx.ListRunEvents(ctx, p, r.ID)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if err := write(recTeamRunEvent, teamRunEventRecord{Project: p, RunID: r.ID, Event: e}); err != nil {
				return err
			}
		}
		return nil
	})
}
