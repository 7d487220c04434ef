package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kaizenhq/kaizen/store"
)

// teamChannel is the LISTEN/NOTIFY channel of team changes. Channels are
// per database, not per schema: the payload names the schema, and a
// listener ignores other schemas' changes.
const teamChannel = "kaizen_team"

var _ store.TeamNotifier = (*Store)(nil)

// teamNote is a notification's payload.
type teamNote struct {
	Schema  string `json:"s"`
	Project string `json:"p"`
	Team    string `json:"t"`
}

// NotifyTeam implements store.TeamNotifier with pg_notify: every
// connection listening on the database hears it.
func (s *Store) NotifyTeam(ctx context.Context, project, team string) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	_, err := s.db.ExecContext(ctx, `SELECT pg_notify($1, json_build_object('s', coalesce(current_schema(), ''),
		'p', $2::text, 't', $3::text)::text)`, teamChannel, project, team)
	if err != nil {
		return fmt.Errorf("notify team %s: %w", team, err)
	}
	return nil
}

// ListenTeams implements store.TeamNotifier on a dedicated connection
// (outside the pool, so no pooled connection keeps a LISTEN), reconnecting
// with a growing pause (at most 5 s) when it drops.
func (s *Store) ListenTeams(ctx context.Context, listening func(up bool), fn func(project, team string)) error {
	pause := 50 * time.Millisecond
	for {
		err := s.listenOnce(ctx, listening, fn)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if s.closed.Load() {
			return store.ErrClosed
		}
		if err == nil {
			pause = 50 * time.Millisecond
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, 5*time.Second)
	}
}

func (s *Store) listenOnce(ctx context.Context, listening func(up bool), fn func(project, team string)) error {
	conn, err := pgx.Connect(ctx, s.dsn)
	if err != nil {
		return fmt.Errorf("listen: connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	var schema string
	if err := conn.QueryRow(ctx, `SELECT coalesce(current_schema(), '')`).Scan(&schema); err != nil {
		return fmt.Errorf("listen: schema: %w", err)
	}
	if _, err := conn.Exec(ctx, `LISTEN `+teamChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if listening != nil {
		listening(true)
		defer listening(false)
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return fmt.Errorf("listen: %w", err)
		}
		var note teamNote
		if json.Unmarshal([]byte(n.Payload), &note) != nil || note.Schema != schema {
			continue
		}
		fn(note.Project, note.Team)
	}
}
