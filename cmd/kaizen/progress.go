package main

import (
	"os"

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
