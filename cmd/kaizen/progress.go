package main

import (
	"bytes"
	"io"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress is a progress bar on the terminal for a long command; it is
// silent when standard error is not a terminal or the output is --json, so
// scripts and pipes see nothing of it.
type progress struct {
	bar *progressbar.ProgressBar
}

// newProgress starts a bar; total -1 means unknown (a spinner with a count).
func (a *app) newProgress(desc string, total int) *progress {
	f, ok := a.stderr.(*os.File)
	if a.json || !ok || !term.IsTerminal(int(f.Fd())) {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions(total, progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(desc), progressbar.OptionShowCount(), progressbar.OptionThrottle(100e6),
		progressbar.OptionClearOnFinish(), progressbar.OptionSetPredictTime(total > 0))}
}

// set moves the bar to done of total (total <= 0 keeps the total).
func (p *progress) set(done, total int) {
	if p.bar == nil {
		return
	}
	if total > 0 && int64(total) != p.bar.GetMax64() {
		p.bar.ChangeMax(total)
	}
	_ = p.bar.Set(done)
}

// done finishes and clears the bar.
func (p *progress) done() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// interactive reports whether progress is shown: standard error is a
// terminal and the output is not --json.
func (a *app) interactive() bool {
	f, ok := a.stderr.(*os.File)
	return !a.json && ok && term.IsTerminal(int(f.Fd()))
}

// lines returns a writer that moves the bar one step per line written
// (for reporters that print a line per finished unit, such as kaizen
// sim's runs), of total lines.
func (p *progress) lines(total int) io.Writer {
	return &lineCounter{p: p, total: total}
}

type lineCounter struct {
	mu    sync.Mutex // writers may run concurrently
	p     *progress
	n     int
	total int
}

func (l *lineCounter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n += bytes.Count(b, []byte("\n"))
	l.p.set(l.n, l.total)
	return len(b), nil
}
