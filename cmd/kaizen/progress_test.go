package main

import (
	"bytes"
	"fmt"
	"testing"
)

// TestProgressQuietWhenPiped: a progress bar is drawn only on a terminal,
// never on a pipe or a buffer, nor with --json; its line counter counts
// lines written in pieces.
func TestProgressQuietWhenPiped(t *testing.T) {
	var stderr bytes.Buffer
	for _, json := range []bool{false, true} {
		a := &app{stderr: &stderr, json: json}
		if a.interactive() {
			t.Errorf("a buffer (json %v) is taken for a terminal", json)
		}
		p := a.newProgress("working", 10)
		p.set(5, 10)
		w := p.lines(3)
		fmt.Fprintf(w, "run 1\nrun")
		fmt.Fprintf(w, " 2\n")
		if n := w.(*lineCounter).n; n != 2 {
			t.Errorf("lines counted: %d, want 2", n)
		}
		p.done()
	}
	if stderr.Len() != 0 {
		t.Errorf("progress wrote to a non-terminal: %q", stderr.String())
	}
}
