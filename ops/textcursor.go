package ops

import "strconv"

// textCursor is the position in a text that the schema and type parsers
// share.
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
