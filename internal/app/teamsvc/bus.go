package teamsvc

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/team"
)

// SendInput sends a typed message on a team's bus.
type SendInput struct {
	Project string           `json:"project,omitempty"`
	Team    string           `json:"team"`
	From    string           `json:"from"`
	To      string           `json:"to"` // member, role:<role> or all
	Type    team.MessageType `json:"type"`
	Summary string           `json:"summary,omitempty"`
	Data    json.RawMessage  `json:"data,omitempty"`
	Task    string           `json:"task,omitempty"`
}

// Send validates a message (its payload against its type), redacts its
// text, stores it under the team's next seq with one delivery per
// recipient, and wakes waiting receivers.
func (s *Service) Send(ctx context.Context, in SendInput) (*team.Message, error) {
	const op = "send message"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if in.Summary == "" {
		in.Summary = team.DefaultSummary(in.From, in.Type, in.To)
	}
	m := team.Message{Team: in.Team, From: in.From, To: in.To, Type: in.Type, Summary: in.Summary, Data: in.Data, Task: in.Task}
	if err := team.ValidateMessage(s.reg, m); err != nil {
		return nil, teamErr(op, err)
	}
	m.Summary, m.Data = scrub(m.Summary), scrubJSON(m.Data)
	now := s.env.Now()
	m.CreatedAt = now
	var out team.Message
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		var err error
		out, err = s.send(ctx, tx, project, m)
		return err
	})
	if err != nil {
		return nil, teamErr(op, err)
	}
	s.notify(project, in.Team)
	return &out, nil
}

// send stores a validated message in tx and hands it to the team's runs.
func (s *Service) send(ctx context.Context, tx store.Tx, project string, m team.Message) (team.Message, error) {
	const op = "send message"
	_, d, err := s.activeTeam(ctx, tx, op, project, m.Team)
	if err != nil {
		return m, err
	}
	rcpt, err := team.Recipients(team.Team{Name: m.Team, Members: d.Members}, m.From, m.To)
	if err != nil {
		return m, teamErr(op, err)
	}
	out, err := tx.AppendTeamMessage(ctx, project, m, rcpt)
	if err != nil {
		return m, err
	}
	if s.runs.onMessage != nil {
		if err := s.runs.onMessage(ctx, tx, project, out); err != nil {
			return out, err
		}
	}
	return out, nil
}

// InboxInput reads a member's messages.
type InboxInput struct {
	Project string `json:"project,omitempty"`
	Team    string `json:"team"`
	Member  string `json:"member"`
	// Peek lists unacknowledged messages without delivering them (no
	// visibility timeout starts, no delivery is counted).
	Peek bool `json:"peek,omitempty"`
	// All lists acknowledged messages too (implies Peek).
	All   bool `json:"all,omitempty"`
	Limit int  `json:"limit,omitempty"`
	// WaitSeconds long-polls until a message is visible (at most 300).
	WaitSeconds int `json:"wait_seconds,omitempty"`
	// VisibilitySeconds overrides the team's visibility timeout.
	VisibilitySeconds int `json:"visibility_seconds,omitempty"`
	// Redeliver delivers every unacknowledged message, also those handed
	// out before and still hidden by their visibility timeout: what a
	// receiver that lost its state (a resumed agent session) needs.
	Redeliver bool `json:"redeliver,omitempty"`
}

// InboxResult is what a receiver got.
type InboxResult struct {
	Items []store.InboxItem `json:"items"`
}

// Inbox delivers the member's visible, unacknowledged messages in seq
// order: each becomes invisible for the visibility timeout and is
// delivered again after it unless acknowledged (at-least-once). With
// WaitSeconds the call waits for a message.
func (s *Service) Inbox(ctx context.Context, in InboxInput) (*InboxResult, error) {
	const op = "inbox"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	limit, err := app.PageLimit(op, in.Limit, 0)
	if err != nil {
		return nil, err
	}
	wait, err := waitOf(op, in.WaitSeconds)
	if err != nil {
		return nil, err
	}
	if in.VisibilitySeconds < 0 || in.VisibilitySeconds > 86400 {
		return nil, app.Invalid(op, "visibility_seconds", "0 … 86400, got %d", in.VisibilitySeconds)
	}
	var res *InboxResult
	err = s.longPoll(ctx, project, in.Team, wait, func() (bool, time.Time, error) {
		var next time.Time
		res, next, err = s.inboxOnce(ctx, op, project, in, limit)
		return err != nil || len(res.Items) > 0, next, err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (s *Service) inboxOnce(ctx context.Context, op, project string, in InboxInput, limit int) (*InboxResult, time.Time, error) {
	now := s.env.Now()
	res := &InboxResult{Items: []store.InboxItem{}}
	var next time.Time
	read := func(tx store.Tx) error {
		_, d, err := s.loadTeam(ctx, tx, op, project, in.Team)
		if err != nil {
			return err
		}
		if _, err := member(op, d, in.Team, in.Member); err != nil {
			return err
		}
		if in.All {
			res.Items, err = tx.Inbox(ctx, project, in.Team, in.Member, store.InboxFilter{Limit: limit})
			return err
		}
		if in.Peek {
			res.Items, err = tx.Inbox(ctx, project, in.Team, in.Member, store.InboxFilter{Unacked: true, Limit: limit})
			return err
		}
		vis := time.Duration(d.Settings.VisibilitySeconds) * time.Second
		if in.VisibilitySeconds > 0 {
			vis = time.Duration(in.VisibilitySeconds) * time.Second
		}
		f := store.InboxFilter{Unacked: true, VisibleAt: now, Limit: limit}
		if in.Redeliver {
			f.VisibleAt = time.Time{}
		}
		items, err := tx.Inbox(ctx, project, in.Team, in.Member, f)
		if err != nil {
			return err
		}
		res.Items = items[:0]
		for _, it := range items {
			if in.Redeliver && now.Before(it.Delivery.VisibleAt) {
				it.Delivery.VisibleAt = now
			}
			nd, ok := team.Deliver(it.Delivery, now, vis)
			if !ok {
				continue
			}
			if err := tx.UpdateDelivery(ctx, project, in.Team, nd); err != nil {
				return err
			}
			it.Delivery = nd
			res.Items = append(res.Items, it)
		}
		if len(res.Items) == 0 {
			pending, err := tx.Inbox(ctx, project, in.Team, in.Member, store.InboxFilter{Unacked: true, Limit: 1000})
			if err != nil {
				return err
			}
			for _, it := range pending {
				if next.IsZero() || it.Delivery.VisibleAt.Before(next) {
					next = it.Delivery.VisibleAt
				}
			}
		}
		return nil
	}
	var err error
	if in.Peek || in.All {
		err = s.env.View(ctx, op, read)
	} else {
		err = s.env.Update(ctx, op, read)
	}
	return res, next, err
}

// AckInput moves a member's copies of messages forward.
type AckInput struct {
	Project string  `json:"project,omitempty"`
	Team    string  `json:"team"`
	Member  string  `json:"member"`
	Seqs    []int64 `json:"seqs"`
	// State is read, acknowledged (default) or acted_on.
	State team.DeliveryState `json:"state,omitempty"`
}

// Ack marks the member's copies read, acknowledged or acted on (forward
// only; repeating is a no-op). Acknowledged copies are not redelivered.
func (s *Service) Ack(ctx context.Context, in AckInput) ([]team.Delivery, error) {
	const op = "ack messages"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if in.State == "" {
		in.State = team.DeliveryAcknowledged
	}
	if in.State.Rank() < 1 {
		return nil, app.Invalid(op, "state", "read, acknowledged or acted_on, not %q", in.State)
	}
	if len(in.Seqs) == 0 || len(in.Seqs) > 1000 {
		return nil, app.Invalid(op, "seqs", "give 1 to 1000 message seqs")
	}
	now := s.env.Now()
	var out []team.Delivery
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		out = nil
		for _, seq := range in.Seqs {
			d, err := tx.GetDelivery(ctx, project, in.Team, in.Member, seq)
			if err != nil {
				return &app.Error{Op: op, Kind: app.KindNotFound, Field: "seqs", Message: fmt.Sprintf("message %d was not sent to %s in team %s", seq, in.Member, in.Team), Err: err}
			}
			nd, err := team.Advance(d, in.State, now)
			if err != nil {
				return teamErr(op, err)
			}
			if nd != d {
				if err := tx.UpdateDelivery(ctx, project, in.Team, nd); err != nil {
					return err
				}
			}
			out = append(out, nd)
		}
		return nil
	})
	return out, teamErr(op, err)
}

// TailInput reads a team's bus in seq order.
type TailInput struct {
	Project     string `json:"project,omitempty"`
	Team        string `json:"team"`
	After       int64  `json:"after,omitempty"`
	Limit       int    `json:"limit,omitempty"`
	WaitSeconds int    `json:"wait_seconds,omitempty"`
}

// Tail returns the team's messages after a seq (the timeline), waiting
// for one with WaitSeconds.
func (s *Service) Tail(ctx context.Context, in TailInput) ([]team.Message, error) {
	const op = "tail messages"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	limit, err := app.PageLimit(op, in.Limit, 0)
	if err != nil {
		return nil, err
	}
	wait, err := waitOf(op, in.WaitSeconds)
	if err != nil {
		return nil, err
	}
	if wait > 0 {
		s.listen(ctx)
	}
	deadline := s.env.Now().Add(wait)
	for {
		w := s.waiter(project, in.Team)
		var out []team.Message
		err := s.env.View(ctx, op, func(tx store.Tx) error {
			if _, _, err := s.loadTeam(ctx, tx, op, project, in.Team); err != nil {
				return err
			}
			var err error
			out, err = tx.ListTeamMessages(ctx, project, in.Team, in.After, limit)
			return err
		})
		now := s.env.Now()
		if err != nil || len(out) > 0 || wait == 0 || !now.Before(deadline) {
			return out, err
		}
		if err := s.sleep(ctx, w, s.maxSleep(deadline.Sub(now))); err != nil {
			return nil, err
		}
	}
}

// Deliveries shows every recipient's copy of a message (delivered, read,
// acknowledged, acted on, and how often it was handed out).
func (s *Service) Deliveries(ctx context.Context, project, name string, seq int64) ([]team.Delivery, error) {
	const op = "message deliveries"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	var out []team.Delivery
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		out, err = tx.MessageDeliveries(ctx, project, name, seq)
		return err
	})
	return out, err
}
