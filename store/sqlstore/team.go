package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/team"
)

// skipLocked is appended to the selects that claim rows: PostgreSQL skips
// rows another transaction holds; SQLite's single writer makes the whole
// transaction exclusive already.
func (t *Tx) skipLocked() string {
	if t.d.Name == "postgres" {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// --- teams

const teamCols = `project, name, doc, last_seq, dissolved, created_at, updated_at`

func scanTeam(s scanner) (store.TeamRecord, error) {
	var r store.TeamRecord
	var doc string
	var created, updated sql.NullInt64
	err := s.Scan(&r.Project, &r.Name, &doc, &r.LastSeq, &r.Dissolved, &created, &updated)
	r.Doc, r.CreatedAt, r.UpdatedAt = json.RawMessage(doc), fromMicros(created), fromMicros(updated)
	return r, err
}

// InsertTeam implements store.TeamStorage.
func (t *Tx) InsertTeam(ctx context.Context, r store.TeamRecord) (bool, error) {
	return t.insert(ctx, "team", `INSERT INTO team_teams (`+teamCols+`) VALUES (?, ?, ?, 0, ?, ?, ?) ON CONFLICT DO NOTHING`,
		r.Project, r.Name, string(r.Doc), r.Dissolved, micros(r.CreatedAt), micros(r.UpdatedAt))
}

// GetTeam implements store.TeamStorage.
func (t *Tx) GetTeam(ctx context.Context, project, name string) (store.TeamRecord, error) {
	return one(ctx, t, "team "+name, scanTeam, `SELECT `+teamCols+` FROM team_teams WHERE project = ? AND name = ?`, project, name)
}

// UpdateTeam implements store.TeamStorage.
func (t *Tx) UpdateTeam(ctx context.Context, r store.TeamRecord) error {
	return t.change(ctx, "update team "+r.Name, `UPDATE team_teams SET doc = ?, dissolved = ?, updated_at = ? WHERE project = ? AND name = ?`,
		string(r.Doc), r.Dissolved, micros(r.UpdatedAt), r.Project, r.Name)
}

// ListTeams implements store.TeamStorage.
func (t *Tx) ListTeams(ctx context.Context, project string, includeDissolved bool) ([]store.TeamRecord, error) {
	q := `SELECT ` + teamCols + ` FROM team_teams WHERE project = ?`
	if !includeDissolved {
		q += ` AND dissolved = FALSE`
	}
	return many(ctx, t, "teams", scanTeam, q+` ORDER BY name`, project)
}

// --- tasks

const teamTaskCols = `project, team, id, subject, description, owner, role, capabilities, blocked_by, status, paused,
	blocked_cause, metadata, result, gate, attempts, lease_holder, lease_epoch, lease_expires_at, heartbeat_at, progress,
	run_id, run_key, created_at, updated_at`

func scanTeamTask(s scanner) (team.Task, error) {
	var x team.Task
	var project, caps, deps, meta, result, progress string
	var expires, hb, created, updated sql.NullInt64
	var role, status string
	err := s.Scan(&project, &x.Team, &x.ID, &x.Subject, &x.Description, &x.Owner, &role, &caps, &deps, &status, &x.Paused,
		&x.BlockedCause, &meta, &result, &x.Gate, &x.Attempts, &x.Lease.Holder, &x.Lease.Epoch, &expires, &hb, &progress,
		&x.RunID, &x.RunKey, &created, &updated)
	if err != nil {
		return x, err
	}
	x.Role, x.Status = team.Role(role), team.TaskStatus(status)
	x.Lease.ExpiresAt, x.Lease.HeartbeatAt = fromMicros(expires), fromMicros(hb)
	x.CreatedAt, x.UpdatedAt = fromMicros(created), fromMicros(updated)
	if x.Capabilities, err = fromJSONList(caps); err != nil {
		return x, err
	}
	if x.BlockedBy, err = fromJSONList(deps); err != nil {
		return x, err
	}
	if len(x.Capabilities) == 0 {
		x.Capabilities = nil
	}
	if len(x.BlockedBy) == 0 {
		x.BlockedBy = nil
	}
	if meta != "" {
		x.Metadata = json.RawMessage(meta)
	}
	if result != "" {
		x.Result = json.RawMessage(result)
	}
	if progress != "" {
		var p team.Progress
		if err := json.Unmarshal([]byte(progress), &p); err != nil {
			return x, fmt.Errorf("decode progress of task %s: %w", x.ID, err)
		}
		x.Lease.Progress = &p
	}
	return x, nil
}

func progressText(p *team.Progress) string {
	if p == nil {
		return ""
	}
	b, _ := json.Marshal(p)
	return string(b)
}

func teamTaskArgs(project string, x team.Task) []any {
	return []any{project, x.Team, x.ID, x.Subject, x.Description, x.Owner, string(x.Role), jsonList(x.Capabilities),
		jsonList(x.BlockedBy), string(x.Status), x.Paused, x.BlockedCause, string(x.Metadata), string(x.Result), x.Gate,
		x.Attempts, x.Lease.Holder, x.Lease.Epoch, micros(x.Lease.ExpiresAt), micros(x.Lease.HeartbeatAt),
		progressText(x.Lease.Progress), x.RunID, x.RunKey, micros(x.CreatedAt), micros(x.UpdatedAt)}
}

// InsertTeamTask implements store.TeamStorage.
func (t *Tx) InsertTeamTask(ctx context.Context, project string, x team.Task) (bool, error) {
	args := append(teamTaskArgs(project, x), project, x.Team)
	ok, err := t.insert(ctx, "team task", `INSERT INTO team_tasks (`+teamTaskCols+`, ord)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
		(SELECT COALESCE(MAX(ord), 0) + 1 FROM team_tasks WHERE project = ? AND team = ?)) ON CONFLICT DO NOTHING`, args...)
	if err != nil || !ok {
		return ok, err
	}
	for _, d := range x.BlockedBy {
		if _, err := t.insert(ctx, "team task dependency", `INSERT INTO team_task_deps (project, team, task, dep)
			VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, project, x.Team, x.ID, d); err != nil {
			return false, err
		}
	}
	return true, nil
}

// GetTeamTask implements store.TeamStorage.
func (t *Tx) GetTeamTask(ctx context.Context, project, teamName, id string) (team.Task, error) {
	return one(ctx, t, "team task "+id, scanTeamTask, `SELECT `+teamTaskCols+` FROM team_tasks
		WHERE project = ? AND team = ? AND id = ?`, project, teamName, id)
}

// UpdateTeamTask implements store.TeamStorage.
func (t *Tx) UpdateTeamTask(ctx context.Context, project string, x team.Task, prev team.TaskStatus, prevEpoch int64) error {
	res, err := t.exec(ctx, `UPDATE team_tasks SET subject = ?, description = ?, owner = ?, role = ?, capabilities = ?,
		status = ?, paused = ?, blocked_cause = ?, metadata = ?, result = ?, gate = ?, attempts = ?, lease_holder = ?,
		lease_epoch = ?, lease_expires_at = ?, heartbeat_at = ?, progress = ?, run_id = ?, run_key = ?, updated_at = ?
		WHERE project = ? AND team = ? AND id = ? AND status = ? AND lease_epoch = ?`,
		x.Subject, x.Description, x.Owner, string(x.Role), jsonList(x.Capabilities), string(x.Status), x.Paused,
		x.BlockedCause, string(x.Metadata), string(x.Result), x.Gate, x.Attempts, x.Lease.Holder, x.Lease.Epoch,
		micros(x.Lease.ExpiresAt), micros(x.Lease.HeartbeatAt), progressText(x.Lease.Progress), x.RunID, x.RunKey,
		micros(x.UpdatedAt), project, x.Team, x.ID, string(prev), prevEpoch)
	if err != nil {
		return fmt.Errorf("update team task %s: %w", x.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("update team task %s: %w", x.ID, err)
	} else if n > 0 {
		return nil
	}
	if _, err := t.GetTeamTask(ctx, project, x.Team, x.ID); err != nil {
		return err
	}
	return fmt.Errorf("update team task %s: %w", x.ID, store.ErrStale)
}

// ListTeamTasks implements store.TeamStorage.
func (t *Tx) ListTeamTasks(ctx context.Context, project, teamName string, f store.TeamTaskFilter) ([]team.Task, error) {
	q, args := `SELECT `+teamTaskCols+` FROM team_tasks WHERE project = ? AND team = ?`, []any{project, teamName}
	if len(f.Statuses) > 0 {
		q += ` AND status IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(f.Statuses)), ", ") + `)`
		for _, s := range f.Statuses {
			args = append(args, string(s))
		}
	}
	if f.RunID != "" {
		q += ` AND run_id = ?`
		args = append(args, f.RunID)
	}
	q, args = page(q+` ORDER BY ord, id`, args, f.Limit, f.Offset)
	return many(ctx, t, "team tasks", scanTeamTask, q, args...)
}

// ClaimableTeamTasks implements store.TeamStorage.
func (t *Tx) ClaimableTeamTasks(ctx context.Context, project, teamName, member string, role team.Role, limit int) ([]team.Task, error) {
	if limit <= 0 {
		limit = 1
	}
	return many(ctx, t, "claimable team tasks", scanTeamTask, `SELECT `+prefixed("x", teamTaskCols)+` FROM team_tasks x
		WHERE x.project = ? AND x.team = ? AND x.status = 'pending' AND x.paused = FALSE
		AND (x.owner = ? OR (x.owner = '' AND (x.role = '' OR x.role = ?)))
		AND NOT EXISTS (SELECT 1 FROM team_task_deps d LEFT JOIN team_tasks u
			ON u.project = d.project AND u.team = d.team AND u.id = d.dep
			WHERE d.project = x.project AND d.team = x.team AND d.task = x.id
			AND (u.status IS NULL OR u.status <> 'completed'))
		ORDER BY x.ord, x.id LIMIT ?`+t.skipLocked(), project, teamName, member, string(role), limit)
}

// ExpiredTeamTasks implements store.TeamStorage.
func (t *Tx) ExpiredTeamTasks(ctx context.Context, project, teamName string, now time.Time, limit int) ([]team.Task, error) {
	if limit <= 0 {
		limit = 100
	}
	q, args := `SELECT `+teamTaskCols+` FROM team_tasks WHERE status = 'in_progress' AND lease_expires_at <= ? AND project = ?`,
		[]any{now.UnixMicro(), project}
	if teamName != "" {
		q += ` AND team = ?`
		args = append(args, teamName)
	}
	return many(ctx, t, "expired team tasks", scanTeamTask, q+` ORDER BY lease_expires_at, id LIMIT ?`+t.skipLocked(),
		append(args, limit)...)
}

// NextTeamLeaseExpiry implements store.TeamStorage.
func (t *Tx) NextTeamLeaseExpiry(ctx context.Context, project, teamName string) (time.Time, bool, error) {
	v, err := one(ctx, t, "next lease expiry", func(s scanner) (sql.NullInt64, error) {
		var n sql.NullInt64
		return n, s.Scan(&n)
	}, `SELECT MIN(lease_expires_at) FROM team_tasks WHERE project = ? AND team = ? AND status = 'in_progress'`, project, teamName)
	if err != nil || !v.Valid {
		return time.Time{}, false, err
	}
	return fromMicros(v), true, nil
}

// --- messages

const teamMessageCols = `team, seq, sender, recipient, type, summary, data, task, created_at`

func scanTeamMessage(s scanner) (team.Message, error) {
	var m team.Message
	var typ, data string
	var created sql.NullInt64
	err := s.Scan(&m.Team, &m.Seq, &m.From, &m.To, &typ, &m.Summary, &data, &m.Task, &created)
	m.Type, m.CreatedAt = team.MessageType(typ), fromMicros(created)
	if data != "" {
		m.Data = json.RawMessage(data)
	}
	return m, err
}

// AppendTeamMessage implements store.TeamStorage.
func (t *Tx) AppendTeamMessage(ctx context.Context, project string, m team.Message, recipients []string) (team.Message, error) {
	seq, err := one(ctx, t, "team "+m.Team, func(s scanner) (int64, error) {
		var n int64
		return n, s.Scan(&n)
	}, `UPDATE team_teams SET last_seq = last_seq + 1 WHERE project = ? AND name = ? RETURNING last_seq`, project, m.Team)
	if err != nil {
		return m, err
	}
	m.Seq = seq
	if _, err := t.exec(ctx, `INSERT INTO team_messages (project, `+teamMessageCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		project, m.Team, m.Seq, m.From, m.To, string(m.Type), m.Summary, string(m.Data), m.Task, micros(m.CreatedAt)); err != nil {
		return m, fmt.Errorf("insert team message: %w", err)
	}
	for _, r := range recipients {
		if _, err := t.exec(ctx, `INSERT INTO team_deliveries (project, team, recipient, seq, state, visible_at, deliveries, updated_at)
			VALUES (?, ?, ?, ?, 'delivered', ?, 0, ?)`, project, m.Team, r, m.Seq, micros(m.CreatedAt), micros(m.CreatedAt)); err != nil {
			return m, fmt.Errorf("insert delivery of message %d to %s: %w", m.Seq, r, err)
		}
	}
	return m, nil
}

// GetTeamMessage implements store.TeamStorage.
func (t *Tx) GetTeamMessage(ctx context.Context, project, teamName string, seq int64) (team.Message, error) {
	return one(ctx, t, fmt.Sprintf("team message %d", seq), scanTeamMessage, `SELECT `+teamMessageCols+` FROM team_messages
		WHERE project = ? AND team = ? AND seq = ?`, project, teamName, seq)
}

// ListTeamMessages implements store.TeamStorage.
func (t *Tx) ListTeamMessages(ctx context.Context, project, teamName string, afterSeq int64, limit int) ([]team.Message, error) {
	q, args := page(`SELECT `+teamMessageCols+` FROM team_messages WHERE project = ? AND team = ? AND seq > ? ORDER BY seq`,
		[]any{project, teamName, afterSeq}, limit, 0)
	return many(ctx, t, "team messages", scanTeamMessage, q, args...)
}

const deliveryCols = `d.recipient, d.seq, d.state, d.visible_at, d.deliveries, d.updated_at`

func scanDelivery(s scanner) (team.Delivery, error) {
	var d team.Delivery
	var state string
	var visible, updated sql.NullInt64
	err := s.Scan(&d.Recipient, &d.Seq, &state, &visible, &d.Deliveries, &updated)
	d.State, d.VisibleAt, d.UpdatedAt = team.DeliveryState(state), fromMicros(visible), fromMicros(updated)
	return d, err
}

// Inbox implements store.TeamStorage.
func (t *Tx) Inbox(ctx context.Context, project, teamName, recipient string, f store.InboxFilter) ([]store.InboxItem, error) {
	q := `SELECT ` + prefixed("m", teamMessageCols) + `, ` + deliveryCols + ` FROM team_deliveries d
		JOIN team_messages m ON m.project = d.project AND m.team = d.team AND m.seq = d.seq
		WHERE d.project = ? AND d.team = ? AND d.recipient = ? AND d.seq > ?`
	args := []any{project, teamName, recipient, f.AfterSeq}
	if f.Unacked {
		q += ` AND d.state IN ('delivered', 'read')`
	}
	if !f.VisibleAt.IsZero() {
		q += ` AND d.visible_at <= ?`
		args = append(args, f.VisibleAt.UnixMicro())
	}
	q, args = page(q+` ORDER BY d.seq`, args, f.Limit, 0)
	return many(ctx, t, "inbox", func(s scanner) (store.InboxItem, error) {
		var it store.InboxItem
		var typ, data, state string
		var created, visible, updated sql.NullInt64
		m, d := &it.Message, &it.Delivery
		err := s.Scan(&m.Team, &m.Seq, &m.From, &m.To, &typ, &m.Summary, &data, &m.Task, &created,
			&d.Recipient, &d.Seq, &state, &visible, &d.Deliveries, &updated)
		m.Type, m.CreatedAt = team.MessageType(typ), fromMicros(created)
		if data != "" {
			m.Data = json.RawMessage(data)
		}
		d.State, d.VisibleAt, d.UpdatedAt = team.DeliveryState(state), fromMicros(visible), fromMicros(updated)
		return it, err
	}, q, args...)
}

// GetDelivery implements store.TeamStorage.
func (t *Tx) GetDelivery(ctx context.Context, project, teamName, recipient string, seq int64) (team.Delivery, error) {
	return one(ctx, t, fmt.Sprintf("delivery of message %d to %s", seq, recipient), scanDelivery, `SELECT `+deliveryCols+`
		FROM team_deliveries d WHERE d.project = ? AND d.team = ? AND d.recipient = ? AND d.seq = ?`, project, teamName, recipient, seq)
}

// UpdateDelivery implements store.TeamStorage.
func (t *Tx) UpdateDelivery(ctx context.Context, project, teamName string, d team.Delivery) error {
	return t.change(ctx, fmt.Sprintf("update delivery of message %d to %s", d.Seq, d.Recipient), `UPDATE team_deliveries
		SET state = ?, visible_at = ?, deliveries = ?, updated_at = ? WHERE project = ? AND team = ? AND recipient = ? AND seq = ?`,
		string(d.State), micros(d.VisibleAt), d.Deliveries, micros(d.UpdatedAt), project, teamName, d.Recipient, d.Seq)
}

// MessageDeliveries implements store.TeamStorage.
func (t *Tx) MessageDeliveries(ctx context.Context, project, teamName string, seq int64) ([]team.Delivery, error) {
	return many(ctx, t, "deliveries", scanDelivery, `SELECT `+deliveryCols+` FROM team_deliveries d
		WHERE d.project = ? AND d.team = ? AND d.seq = ? ORDER BY d.recipient`, project, teamName, seq)
}

// --- events

const teamEventCols = `id, project, team, at, kind, subject, from_state, to_state, cause, data`

func scanTeamEvent(s scanner) (store.TeamEvent, error) {
	var e store.TeamEvent
	var at sql.NullInt64
	var data string
	err := s.Scan(&e.ID, &e.Project, &e.Team, &at, &e.Kind, &e.Subject, &e.From, &e.To, &e.Cause, &data)
	e.At = fromMicros(at)
	if data != "" {
		e.Data = json.RawMessage(data)
	}
	return e, err
}

// InsertTeamEvent implements store.TeamStorage.
func (t *Tx) InsertTeamEvent(ctx context.Context, e store.TeamEvent) (int64, error) {
	return one(ctx, t, "team event", func(s scanner) (int64, error) {
		var n int64
		return n, s.Scan(&n)
	}, `INSERT INTO team_events (project, team, at, kind, subject, from_state, to_state, cause, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		e.Project, e.Team, micros(e.At), e.Kind, e.Subject, e.From, e.To, e.Cause, string(e.Data))
}

// ListTeamEvents implements store.TeamStorage.
func (t *Tx) ListTeamEvents(ctx context.Context, project, teamName, subject string, afterID int64, limit int) ([]store.TeamEvent, error) {
	q, args := `SELECT `+teamEventCols+` FROM team_events WHERE project = ? AND team = ? AND id > ?`, []any{project, teamName, afterID}
	if subject != "" {
		q += ` AND subject = ?`
		args = append(args, subject)
	}
	q, args = page(q+` ORDER BY id`, args, limit, 0)
	return many(ctx, t, "team events", scanTeamEvent, q, args...)
}
