package teamsvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/team"
)

// WorkResult is what a worker's work produced.
type WorkResult struct {
	Result json.RawMessage
	Failed bool
	Error  string
	Usage  *Usage
}

// WorkFunc does one task (a Go function worker). ctx ends when the task is
// cancelled, the lease is lost or the worker stops.
type WorkFunc func(ctx context.Context, t team.Task) (WorkResult, error)

// WorkerOptions configure a worker loop: claim, heartbeat, work, report.
type WorkerOptions struct {
	Project string
	Team    string
	Member  string
	// Func is the work of a Go function worker; else Command runs per task.
	Func WorkFunc
	// Command is run with sh -c per task: the task as JSON on stdin, its
	// fields in KAIZEN_* variables; stdout is the result (JSON, or text
	// wrapped as {"output": …}); a non-zero exit fails the task.
	Command string
	// Timeout bounds one task's command (0: the lease keeps it alive
	// without bound). On timeout or cancellation the process group gets
	// SIGTERM, then SIGKILL after Grace (default 5 s).
	Timeout time.Duration
	Grace   time.Duration
	// Dir is the working directory of commands and gates.
	Dir string
	// HeartbeatEvery renews the lease (default a third of the lease).
	HeartbeatEvery time.Duration
	// WaitSeconds long-polls each claim (default 30, 0 with Once).
	WaitSeconds int
	// Once stops the loop when no task is ready (after the wait).
	Once bool
	// MaxTasks stops the loop after that many tasks (0: no bound).
	MaxTasks int
	// Log receives one line per event (optional).
	Log func(string)
}

// WorkerStats counts what a worker loop did.
type WorkerStats struct {
	Claimed   int `json:"claimed"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Dropped   int `json:"dropped"` // lease lost or task cancelled: work discarded
}

// RunWorker runs a worker loop until ctx ends (or Once/MaxTasks stop it).
// Every report carries the lease epoch of the claim, so a worker whose
// lease expired cannot complete a task someone else now holds.
func (s *Service) RunWorker(ctx context.Context, o WorkerOptions) (WorkerStats, error) {
	const op = "worker"
	var st WorkerStats
	if (o.Func == nil) == (o.Command == "") {
		return st, app.Invalid(op, "command", "give a command or a function, exactly one")
	}
	if o.WaitSeconds == 0 && !o.Once {
		o.WaitSeconds = 30
	}
	if o.Grace <= 0 {
		o.Grace = 5 * time.Second
	}
	logf := func(format string, a ...any) {
		if o.Log != nil {
			o.Log(fmt.Sprintf(format, a...))
		}
	}
	for o.MaxTasks == 0 || st.Claimed < o.MaxTasks {
		if ctx.Err() != nil {
			return st, nil
		}
		res, err := s.Claim(ctx, ClaimInput{Project: o.Project, Team: o.Team, Member: o.Member, WaitSeconds: o.WaitSeconds})
		if err != nil {
			if ctx.Err() != nil {
				return st, nil
			}
			return st, err
		}
		if res.Task == nil {
			if o.Once {
				return st, nil
			}
			continue
		}
		st.Claimed++
		t := *res.Task
		logf("claimed %s (%s) epoch %d", t.ID, t.Subject, res.Epoch)
		outcome := s.work(ctx, o, t, res)
		switch outcome {
		case "completed":
			st.Completed++
		case "failed":
			st.Failed++
		default:
			st.Dropped++
		}
		logf("%s %s", t.ID, outcome)
	}
	return st, nil
}

// work runs one task under heartbeats and reports it; it returns
// completed, failed or dropped.
func (s *Service) work(ctx context.Context, o WorkerOptions, t team.Task, claim *ClaimResult) string {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lease := claim.ExpiresAt.Sub(s.env.Now())
	every := o.HeartbeatEvery
	if every <= 0 {
		every = max(lease/3, 10*time.Millisecond)
	}
	lost := make(chan struct{})
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-tick.C:
				ans, err := s.Heartbeat(ctx, HeartbeatInput{Project: o.Project, Team: o.Team, Task: t.ID, Member: o.Member, Epoch: claim.Epoch})
				if err != nil || ans.Cancelled {
					if err != nil && app.KindOf(err) != app.KindConflict {
						continue // a transient failure: try again next tick
					}
					close(lost)
					cancel()
					return
				}
			}
		}
	}()
	var wr WorkResult
	var err error
	if o.Func != nil {
		wr, err = o.Func(wctx, t)
	} else {
		wr, err = s.runCommand(wctx, o, t, claim.Epoch)
	}
	cancel()
	<-hbDone
	select {
	case <-lost:
		return "dropped"
	default:
	}
	if ctx.Err() != nil {
		// The worker stops: give the lease back so another takes the task.
		_, _ = s.Release(context.WithoutCancel(ctx), ReleaseInput{Project: o.Project, Team: o.Team, Task: t.ID, Member: o.Member, Epoch: claim.Epoch})
		return "dropped"
	}
	in := ReportInput{Project: o.Project, Team: o.Team, Task: t.ID, Member: o.Member, Epoch: claim.Epoch,
		Status: team.StatusCompleted, Result: wr.Result, Usage: wr.Usage}
	if err != nil || wr.Failed {
		in.Status = team.StatusFailed
		in.Error = wr.Error
		if err != nil {
			in.Error = err.Error()
		}
	} else if t.Gate != "" {
		in.Gate = s.runGate(ctx, o, t)
	}
	rt, rerr := s.Report(ctx, in)
	if rerr != nil {
		return "dropped"
	}
	return string(rt.Status)
}

func taskEnv(o WorkerOptions, t team.Task, epoch int64) []string {
	return append(os.Environ(),
		"KAIZEN_PROJECT="+o.Project, "KAIZEN_TEAM="+o.Team, "KAIZEN_MEMBER="+o.Member,
		"KAIZEN_TASK_ID="+t.ID, "KAIZEN_TASK_SUBJECT="+t.Subject, "KAIZEN_TASK_EPOCH="+strconv.FormatInt(epoch, 10),
		"KAIZEN_RUN_ID="+t.RunID, "KAIZEN_RUN_KEY="+t.RunKey)
}

// runCommand runs the worker's command for one task in its own process
// group, killed on timeout or cancellation.
func (s *Service) runCommand(ctx context.Context, o WorkerOptions, t team.Task, epoch int64) (WorkResult, error) {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	stdin, _ := json.Marshal(t)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "sh", "-c", o.Command)
	cmd.Dir, cmd.Env = o.Dir, taskEnv(o, t, epoch)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(stdin), &limited{b: &stdout}, &limited{b: &stderr}
	groupKill(cmd, o.Grace)
	err := cmd.Run()
	killGroup(cmd)
	out := bytes.TrimSpace(stdout.Bytes())
	var result json.RawMessage
	if len(out) > 0 && json.Valid(out) && (out[0] == '{' || out[0] == '[') {
		result = out
	} else if len(out) > 0 {
		result, _ = json.Marshal(map[string]string{"output": string(out)})
	}
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return WorkResult{Result: result, Failed: true, Error: fmt.Sprintf("timed out after %s; stderr: %s", o.Timeout, tail(stderr.String()))}, nil
	}
	if err != nil {
		return WorkResult{Result: result, Failed: true, Error: fmt.Sprintf("%v; stderr: %s", err, tail(stderr.String()))}, nil
	}
	return WorkResult{Result: result}, nil
}

// runGate runs a task's gate command; its exit status decides completion.
func (s *Service) runGate(ctx context.Context, o WorkerOptions, t team.Task) *GateResult {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "sh", "-c", t.Gate)
	cmd.Dir, cmd.Env = o.Dir, taskEnv(o, t, t.Lease.Epoch)
	cmd.Stdout, cmd.Stderr = &limited{b: &out}, &limited{b: &out}
	groupKill(cmd, o.Grace)
	err := cmd.Run()
	killGroup(cmd)
	code := 0
	if err != nil {
		code = -1
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() > 0 {
			code = ee.ExitCode()
		}
	}
	return &GateResult{ExitCode: code, Output: tail(out.String())}
}

// limited keeps the first 1 MiB written to it.
type limited struct{ b *bytes.Buffer }

func (l *limited) Write(p []byte) (int, error) {
	if room := team.MaxResultLen/2 - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func tail(s string) string {
	const n = 2000
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}
