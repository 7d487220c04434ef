package experiencesvc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
)

// Capture limits.
const (
	// maxCaptureTurns is the number of turns one capture call may carry.
	maxCaptureTurns = 200
	// maxTurnBytes is the size at which a turn's content is cut (with a
	// marker): captured turns are evidence, not archives.
	maxTurnBytes = 32 << 10
	// minMemoryRunes is the length below which a turn is not indexed as a
	// recallable memory ("ok", "thanks").
	minMemoryRunes = 12
)

// TurnInput is one captured message.
type TurnInput struct {
	// Role is user, assistant, tool or system.
	Role string `json:"role"`
	// Content is the message text. Secrets are redacted before storage;
	// over-long content is cut.
	Content string `json:"content"`
	// TurnID is the client's id of the exchange (a prompt and its answer
	// share it); optional. With it, capturing the same message twice
	// stores it once.
	TurnID string `json:"turn_id,omitempty"`
	// Time is RFC 3339; empty means now.
	Time string `json:"time,omitempty"`
}

// CaptureInput captures turns of a task's conversation.
type CaptureInput struct {
	Project string `json:"project,omitempty"`
	// TaskID is the task (bead id or agent session id) the turns belong to.
	TaskID string `json:"bead_id"`
	// Source names the reporting client (claude, codex, cli, mcp…).
	Source string      `json:"source,omitempty"`
	Turns  []TurnInput `json:"turns"`
}

// CaptureResult reports a capture.
type CaptureResult struct {
	Project string `json:"project"`
	TaskID  string `json:"bead_id"`
	// Stored counts new turns; Duplicates counts turns already captured.
	Stored     int `json:"stored"`
	Duplicates int `json:"duplicates"`
	// Redacted counts secrets replaced by a [REDACTED:rule] marker.
	Redacted int               `json:"redacted"`
	Turns    []experience.Turn `json:"turns"`
}

// Capture stores turns of a task's conversation: the material feedback
// signals, task experiences and memories are made of. User and assistant
// turns become recallable memories (full text and vector).
func (s *Service) Capture(ctx context.Context, in CaptureInput) (*CaptureResult, error) {
	const op = "capture"
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "bead_id", in.TaskID); err != nil {
		return nil, err
	}
	if in.Source != "" {
		if err := app.ValidID(op, "source", in.Source); err != nil {
			return nil, err
		}
	}
	if len(in.Turns) == 0 {
		return nil, app.Invalid(op, "turns", "at least one turn is required")
	}
	if len(in.Turns) > maxCaptureTurns {
		return nil, app.Invalid(op, "turns", "at most %d turns per call, got %d", maxCaptureTurns, len(in.Turns))
	}
	res := &CaptureResult{Project: project, TaskID: in.TaskID, Turns: make([]experience.Turn, 0, len(in.Turns))}
	var texts []string
	var memIdx []int
	for i, t := range in.Turns {
		field := fmt.Sprintf("turns[%d]", i)
		role := experience.Role(strings.ToLower(strings.TrimSpace(t.Role)))
		if !slices.Contains(experience.Roles, role) {
			return nil, app.Invalid(op, field+".role", "unknown role %q (want user, assistant, tool or system)", t.Role)
		}
		if !utf8.ValidString(t.Content) {
			return nil, app.Invalid(op, field+".content", "is not valid UTF-8")
		}
		content, n := cleanCaptured(t.Content)
		res.Redacted += n
		if strings.TrimSpace(content) == "" {
			return nil, app.Invalid(op, field+".content", "is required and must not be blank")
		}
		if err := app.ValidOptionalIDs(op, field+".turn_id", t.TurnID); err != nil {
			return nil, err
		}
		at, err := app.ParseTime(op, field+".time", t.Time, now)
		if err != nil {
			return nil, err
		}
		if t.Time == "" {
			// Turns of one call without times keep their order: a
			// microsecond apart, the storage precision.
			at = at.Add(time.Duration(i) * time.Microsecond)
		}
		turn := experience.Turn{Project: project, TaskID: in.TaskID, TurnID: t.TurnID, Role: role,
			Content: content, Source: in.Source, Time: at, Seq: s.nextTurnSeq(now)}
		turn.ID = turnID(turn)
		res.Turns = append(res.Turns, turn)
		if memoryWorthy(turn) {
			texts = append(texts, turn.Content)
			memIdx = append(memIdx, i)
		}
	}
	// memVec[i] is the vector of turn i when it is a memory, else nil.
	memVec := make([][]float32, len(res.Turns))
	if len(texts) > 0 {
		vecs, err := s.embed(ctx, op, texts...)
		if err != nil {
			return nil, err
		}
		for j, i := range memIdx {
			memVec[i] = vecs[j]
		}
	}
	var after func()
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		res.Stored, res.Duplicates = 0, 0
		w, err := s.vecWriter(ctx, tx, project)
		if err != nil {
			return err
		}
		for i, t := range res.Turns {
			ok, err := tx.InsertTurn(ctx, t)
			if err != nil {
				return err
			}
			if !ok {
				res.Duplicates++
				continue
			}
			res.Stored++
			if memVec[i] != nil {
				if err := w.put(ctx, tx, experience.ItemMemory, t.ID, t.Content, memVec[i], now); err != nil {
					return err
				}
			}
		}
		after, err = w.finish(ctx, tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	after()
	return res, nil
}

// nextTurnSeq returns the capture order of the next turn: increasing
// across the captures of this engine, and the capture time in
// microseconds when that is larger, so turns of one timestamp captured by
// successive processes also keep their order (as far as their clocks
// agree). Listings order turns by time, then seq.
func (s *Service) nextTurnSeq(now time.Time) int64 {
	for {
		last := s.turnSeq.Load()
		next := max(last+1, now.UnixMicro())
		if s.turnSeq.CompareAndSwap(last, next) {
			return next
		}
	}
}

// turnID derives a turn's id from what identifies it, so that a client
// re-sending a message (a retried hook) stores it once.
func turnID(t experience.Turn) string {
	h := sha256.New()
	for _, s := range []string{t.Project, t.TaskID, t.TurnID, string(t.Role), t.Content} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	if t.TurnID == "" { // without a client id, the time tells repeats apart
		h.Write([]byte(t.Time.UTC().Format("2006-01-02T15:04:05.999999Z")))
	}
	return "turn-" + hex.EncodeToString(h.Sum(nil))[:26]
}

// memoryWorthy reports whether a turn is indexed as a recallable memory:
// what the user said and what the assistant concluded, long enough to
// carry a fact. Tool output and system prompts are kept for extraction but
// not recalled.
func memoryWorthy(t experience.Turn) bool {
	if t.Role != experience.RoleUser && t.Role != experience.RoleAssistant {
		return false
	}
	return utf8.RuneCountInString(strings.TrimSpace(t.Content)) >= minMemoryRunes
}

// cleanCaptured removes control characters (terminal escapes, NUL) other
// than newline and tab from captured text, scrubs secrets from it
// (app.Scrub: after the control characters are gone, so that none can hide
// a key's name, and before the cut, so that none is cut out of
// recognition) and cuts it at maxTurnBytes. It returns the text and the
// number of secrets replaced.
func cleanCaptured(s string) (string, int) {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r':
			return -1
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
	clean, n := app.ScrubCount(clean)
	if len(clean) <= maxTurnBytes {
		return clean, n
	}
	cut := maxTurnBytes
	for cut > 0 && !utf8.RuneStart(clean[cut]) {
		cut--
	}
	return clean[:cut] + "\n[… cut: the turn was longer than 32 KB]", n
}

// TurnQuery lists captured turns.
type TurnQuery struct {
	Project string `json:"project,omitempty"`
	TaskID  string `json:"bead_id,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	Offset  int    `json:"offset,omitempty"`
}

// TurnList is a page of turns, oldest first.
type TurnList = app.Page[experience.Turn]

// ListTurns lists captured turns, oldest first.
func (s *Service) ListTurns(ctx context.Context, q TurnQuery) (*TurnList, error) {
	const op = "list turns"
	project, limit, err := s.env.PageQuery(op, q.Project, q.Limit, q.Offset, "bead_id", q.TaskID)
	if err != nil {
		return nil, err
	}
	f := store.TurnFilter{TaskID: q.TaskID, Limit: limit, Offset: q.Offset}
	return app.ListPage(ctx, s.env, op, project, limit, q.Offset,
		func(tx store.Tx) (int64, error) { return tx.CountTurns(ctx, project, f) },
		func(tx store.Tx) ([]experience.Turn, error) { return tx.ListTurns(ctx, project, f) })
}
