package learning

import (
	"slices"
	"strings"
)

// TaskSignals are what a tracked task's events told kaizen about how the
// task went, kept so that its outcome can be recorded without anyone
// typing it: the strategies named in its prompts and plan, the files it
// edited, and the latest decisive signal.
type TaskSignals struct {
	// Strategies are the keys of the seed strategies (Strategy.Key)
	// detected in the task's prompts and plan, in the order first seen.
	Strategies []string `json:"strategies,omitempty"`
	// Files are the files the task edited, in the order first seen, at
	// most MaxTaskFiles.
	Files []string `json:"files,omitempty"`
	// Last is the latest decisive signal (empty when none was seen).
	Last Signal `json:"last,omitempty"`
	// EndReason is why the client said the session ended.
	EndReason string `json:"end_reason,omitempty"`
	// Compactions counts context compactions.
	Compactions int `json:"compactions,omitempty"`
}

// MaxTaskFiles bounds the files a task remembers.
const MaxTaskFiles = 200

// Empty reports whether nothing was signalled.
func (s TaskSignals) Empty() bool {
	return len(s.Strategies) == 0 && len(s.Files) == 0 && s.Last == "" && s.EndReason == "" && s.Compactions == 0
}

// Signal is one decisive observation about a task's success.
type Signal string

// The signals, from the tests an agent ran, the user's reaction to its
// work, and the status a client reports when the agent stops.
const (
	SignalTestPass      Signal = "test_pass"
	SignalTestFail      Signal = "test_fail"
	SignalUserConfirmed Signal = "user_confirmed"
	SignalUserRejected  Signal = "user_rejected"
	SignalStopCompleted Signal = "stop_completed"
	SignalStopAborted   Signal = "stop_aborted"
	SignalStopError     Signal = "stop_error"
)

// SessionSignals lists the known signals.
var SessionSignals = []Signal{SignalTestPass, SignalTestFail, SignalUserConfirmed, SignalUserRejected,
	SignalStopCompleted, SignalStopAborted, SignalStopError}

// Valid reports whether s is a known signal.
func (s Signal) Valid() bool { return slices.Contains(SessionSignals, s) }

// TaskNote is what one event adds to a task's signals.
type TaskNote struct {
	// Text is a prompt or a plan: the strategies it names are recorded.
	Text string
	// Files the event edited.
	Files []string
	// Signal is the event's decisive signal, if any.
	Signal Signal
	// EndReason is the client's reason for ending the session.
	EndReason string
	// Compaction: the client compacted the context.
	Compaction bool
}

// Note folds an event's note into the task's signals.
func (t *Task) Note(n TaskNote) {
	s := &t.Signals
	for _, x := range ExtractPatterns(n.Text) {
		if !slices.Contains(s.Strategies, x.Key) {
			s.Strategies = append(s.Strategies, x.Key)
		}
	}
	for _, f := range n.Files {
		f = strings.TrimSpace(f)
		if f == "" || slices.Contains(s.Files, f) || len(s.Files) >= MaxTaskFiles {
			continue
		}
		s.Files = append(s.Files, f)
	}
	if n.Signal != "" {
		s.Last = n.Signal
	}
	if n.EndReason != "" {
		s.EndReason = n.EndReason
	}
	if n.Compaction {
		s.Compactions++
	}
}

// Inference is a task's success inferred from its signals.
type Inference struct {
	Success bool `json:"success"`
	// Reason says which signal decided, in words.
	Reason string `json:"reason"`
}

// InferOutcome infers whether a task succeeded from what its events told.
// The latest decisive signal decides: a failing or passing test run, the
// user rejecting or confirming the result, the client's stop status
// (aborted and error are failures). Without one, a task whose last turn
// ended with a tool failure the agent was not asked about again failed,
// and any other task that did some work succeeded. ok is false for a task
// in which nothing happened (no prompt and no tool call): there is no
// outcome to infer.
func InferOutcome(t Task) (inf Inference, ok bool) {
	switch t.Signals.Last {
	case SignalTestFail:
		return Inference{false, "the last test run failed"}, true
	case SignalTestPass:
		return Inference{true, "the last test run passed"}, true
	case SignalUserRejected:
		return Inference{false, "the user rejected the result"}, true
	case SignalUserConfirmed:
		return Inference{true, "the user confirmed the result"}, true
	case SignalStopAborted:
		return Inference{false, "the client reported the run aborted"}, true
	case SignalStopError:
		return Inference{false, "the client reported the run ended in an error"}, true
	}
	if t.Prompts == 0 && t.ToolCalls == 0 {
		return Inference{}, false
	}
	if t.FailedThisTurn {
		return Inference{false, "a tool failed in the last turn and nothing followed"}, true
	}
	if t.Signals.Last == SignalStopCompleted {
		return Inference{true, "the client reported the run completed"}, true
	}
	return Inference{true, "the session ended without a failure in its last turn"}, true
}
