package ops

import (
	"strconv"
	"strings"
)

// textCursor is the position in a text that the schema, type and symbolic
// expression parsers share. Its space, accept and ident skip spaces only;
// the schema parser, which also skips tabs and newlines, has its own.
type textCursor struct {
	src string
	pos int
}

// found describes what stands at the cursor, for "want X, found Y" errors:
// "end of text" or the next (at most 12) characters, quoted.
func (c *textCursor) found() string {
	if c.pos >= len(c.src) {
		return "end of text"
	}
	r := c.src[c.pos:]
	if len(r) > 12 {
		r = r[:12] + "..."
	}
	return strconv.Quote(r)
}

// space skips spaces.
func (c *textCursor) space() {
	for c.pos < len(c.src) && c.src[c.pos] == ' ' {
		c.pos++
	}
}

// accept consumes s, after spaces, if the text continues with it.
func (c *textCursor) accept(s string) bool {
	c.space()
	if strings.HasPrefix(c.src[c.pos:], s) {
		c.pos += len(s)
		return true
	}
	return false
}

// ident reads an identifier after spaces; it returns "" (and consumes
// nothing but the spaces) if none.
func (c *textCursor) ident() string {
	c.space()
	start := c.pos
	for c.pos < len(c.src) && isIdentByte(c.src[c.pos], c.pos == start) {
		c.pos++
	}
	return c.src[start:c.pos]
}
