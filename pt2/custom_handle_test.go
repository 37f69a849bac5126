package pt2

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCustomHandle reads torchao's numeric debug handle out of the custom
// metadata text torch.export writes (json.dumps of node.meta["custom"]).
func TestCustomHandle(t *testing.T) {
	for s, want := range map[string]int{
		``:                            0,
		`{"numeric_debug_handle": 7}`: 7,
		`{"quantize": true, "numeric_debug_handle": 12}`: 12,
		`{"numeric_debug_handle": "7"}`:                  0, // not an int
		`{"numeric_debug_handle": -1}`:                   0,
		`{"numeric_debug_handle": 1.5}`:                  0,
		`["numeric_debug_handle", 3]`:                    0, // not an object
		`{"numeric_debug_handle": 7} trailing`:           0,
		`{"a": {"numeric_debug_handle": 4}}`:             0, // nested, not torchao's key
	} {
		assert.Equal(t, want, customHandle(s), "%s", s)
	}
}

// TestWithCustomHandle writes a handle into custom metadata text as
// Python's json.dumps writes the dict torchao leaves: unchanged text keeps
// its bytes, an existing entry keeps its place, a new one goes last, and an
// object left empty is no entry.
func TestWithCustomHandle(t *testing.T) {
	cases := []struct {
		in   string
		h    int
		want string
	}{
		{``, 0, ``},
		{``, 3, `{"numeric_debug_handle": 3}`},
		{`{"numeric_debug_handle":3}`, 3, `{"numeric_debug_handle":3}`}, // already says 3: bytes kept
		{`{"numeric_debug_handle": 3}`, 4, `{"numeric_debug_handle": 4}`},
		{`{"quantize": true}`, 5, `{"quantize": true, "numeric_debug_handle": 5}`},
		{`{"numeric_debug_handle": 2, "k": [1, 2]}`, 9, `{"numeric_debug_handle": 9, "k": [1, 2]}`},
		{`{"k": "\u00e9", "numeric_debug_handle": 2}`, 0, `{"k": "\u00e9"}`},
		{`{"numeric_debug_handle": 2}`, 0, ``},
		{`{"quantize": true}`, 0, `{"quantize": true}`},
		{`[1, 2]`, 5, `[1, 2]`}, // not a dict: torchao could not store a handle there either
		{`{"é": 1}`, 2, `{"\u00e9": 1, "numeric_debug_handle": 2}`},
		// json.dumps("a\x7fb\U0001F600") is "a\u007fb\ud83d\ude00": DEL is escaped, and
		// a rune above U+FFFF is a surrogate pair.
		{`{"a\u007fb\ud83d\ude00": 1}`, 2, `{"a\u007fb\ud83d\ude00": 1, "numeric_debug_handle": 2}`},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, withCustomHandle(c.in, c.h), "%s with handle %d", c.in, c.h)
	}
}

// TestCustomHandleShortcutAgrees: customHandle's shortcut for the usual
// text gives the JSON decoder's answer.
func TestCustomHandleShortcutAgrees(t *testing.T) {
	for _, s := range []string{
		``, `{"numeric_debug_handle": 7}`, `{"numeric_debug_handle": 123456789012345678}`,
		`{"numeric_debug_handle": 1234567890123456789012}`, `{"numeric_debug_handle": 0}`,
		`{"numeric_debug_handle": 007}`, `{"numeric_debug_handle": -1}`, `{"numeric_debug_handle": 1e3}`,
		`{"numeric_debug_handle": 7}}`, `{"numeric_debug_handle": }`, `{"numeric_debug_handle": 7 }`,
		`{"quantize": true, "numeric_debug_handle": 12}`, `{"numeric_debug_handle":7}`,
	} {
		assert.Equal(t, decodedCustomHandle(s), customHandle(s), "%s", s)
	}
	assert.Equal(t, 7, customHandle(`{"numeric_debug_handle": 7}`))
}
