package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// progressBar draws "calibrating [#####     ] 3/6" on a terminal, redrawn
// in place with \r. It is nil (drawing nothing) when w is not a terminal.
type progressBar struct {
	w     io.Writer
	label string
}

// newProgressBar returns a bar drawing on w when w is a terminal and
// enabled is true, and nil otherwise.
func newProgressBar(w io.Writer, label string, enabled bool) *progressBar {
	if !enabled || !isTerminal(w) {
		return nil
	}
	return &progressBar{w: w, label: label}
}

// update draws the bar after batch i (0-based) of n; the last batch ends
// the line.
func (p *progressBar) update(i, n int) {
	if p == nil || n <= 0 {
		return
	}
	const width = 30
	done := (i + 1) * width / n
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d", p.label, strings.Repeat("#", done), strings.Repeat(" ", width-done), i+1, n)
	if i+1 == n {
		fmt.Fprintln(p.w)
	}
}

// isTerminal reports whether w is a character device (a terminal), without
// a dependency on x/term: a file whose mode has os.ModeCharDevice set.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil {
		return false
	}
	return st.Mode()&os.ModeCharDevice != 0
}
