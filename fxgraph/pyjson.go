package fxgraph

import (
	"unicode/utf16"
	"unicode/utf8"
)

// pyPlain marks the ASCII bytes json.dumps writes as they are: printable
// characters other than '"' and '\\' (DEL is escaped).
var pyPlain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendPyJSONString appends s as Python's json.dumps quotes it (the
// writer of torch.export's JSON, ensure_ascii=True): the JSON escapes for
// '"', '\\' and \n \r \t \b \f, \u00XX for other control characters and
// DEL, \uXXXX for non-ASCII (a surrogate pair above U+FFFF; invalid UTF-8
// as \ufffd, as Go decodes it). Runs of plain bytes are copied at once.
func AppendPyJSONString[S string | []byte](b []byte, s S) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf && pyPlain[c] {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b = append(b, '\\', '"')
			case '\\':
				b = append(b, '\\', '\\')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default: // other control characters, DEL
				b = appendU4(b, rune(c))
			}
			i++
			start = i
			continue
		}
		r, size := decodeRune(s[i:])
		if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			b = appendU4(appendU4(b, r1), r2)
		} else {
			b = appendU4(b, r)
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// decodeRune is utf8.DecodeRune for a string or bytes.
func decodeRune[S string | []byte](s S) (rune, int) {
	switch x := any(s).(type) {
	case string:
		return utf8.DecodeRuneInString(x)
	case []byte:
		return utf8.DecodeRune(x)
	}
	return utf8.RuneError, 1
}

// appendU4 appends the escape \uXXXX of r (at most 0xFFFF), lower-case.
func appendU4(b []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}
