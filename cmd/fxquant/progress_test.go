package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	// Not a terminal: no bar, and updating a nil bar is a no-op.
	bar := newProgressBar(&buf, "calibrating", true)
	assert.Nil(t, bar)
	bar.update(0, 2)
	assert.Empty(t, buf.String())

	// Drawn in place, the last batch ends the line.
	bar = &progressBar{w: &buf, label: "cal"}
	bar.update(0, 2)
	bar.update(1, 2)
	assert.Equal(t, "\rcal [###############               ] 1/2"+
		"\rcal [##############################] 2/2\n", buf.String())
}
