package fxgraph

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// PyFloat returns Python's repr of a float: the shortest digits that read
// back to v, laid out as CPython's float_repr does. Positional notation is
// used while the decimal exponent e (v = d.ddd × 10^e) lies in
// -5 < e < 16, with ".0" kept on integral values (1.0, 0.0001,
// 1000000000000000.0); otherwise exponent notation with at least two
// exponent digits (1e-05, 1.1920928955078125e-07, 1e+16). Non-finite
// values print as inf, -inf and nan; negative zero as -0.0.
func PyFloat(v float64) string { return pyFloat(v, true) }

// pyFloat lays out v as Python does; addDot0 is false for the parts of a
// complex repr, which drop the ".0" (repr(1+2j) == "(1+2j)").
func pyFloat(v float64, addDot0 bool) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(v, 'e', -1, 64) // "-1.2345e-07"
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	mant, expText, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	decpt := exp + 1 // v = 0.digits × 10^decpt
	switch {
	case decpt <= -4 || decpt > 16:
		b.WriteByte(digits[0])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if exp < 0 {
			b.WriteByte('-')
			exp = -exp
		} else {
			b.WriteByte('+')
		}
		if exp < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(exp))
	case decpt <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -decpt))
		b.WriteString(digits)
	case decpt >= len(digits):
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", decpt-len(digits)))
		if addDot0 {
			b.WriteString(".0")
		}
	default:
		b.WriteString(digits[:decpt])
		b.WriteByte('.')
		b.WriteString(digits[decpt:])
	}
	return b.String()
}

// PyComplex returns Python's repr of a complex number: "1j", "(1+2j)",
// "(-0-1j)", "(nan+infj)".
func PyComplex(c complex128) string {
	re, im := real(c), imag(c)
	imText := pyFloat(im, false)
	if re == 0 && !math.Signbit(re) {
		return imText + "j"
	}
	sign := "+"
	if strings.HasPrefix(imText, "-") {
		sign, imText = "-", imText[1:]
	}
	return "(" + pyFloat(re, false) + sign + imText + "j)"
}

// PyQuote returns Python's repr of a string: single quotes unless the
// string contains a single quote and no double quote; backslash, the quote
// character, \t, \n and \r escaped; other non-printable characters written
// \xNN, \uNNNN or \UNNNNNNNN. Invalid UTF-8 bytes are written \xNN (Python
// strings cannot hold them; this keeps the output printable).
func PyQuote(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
			i++
			continue
		}
		i += size
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x7f && r >= 0x20:
			b.WriteRune(r)
		case r >= 0x80 && unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// valueStyle selects one of the three argument notations the printers use.
type valueStyle uint8

const (
	// styleFX is torch.fx's _format_arg: nodes as %name, strings and dict
	// keys unquoted (when that reads back unambiguously), other leaves by
	// Python's str.
	styleFX valueStyle = iota
	// styleRepr is Python's repr with nodes written as their bare name, as
	// str() prints a container holding nodes (output lines, defaults,
	// slices inside FX arguments).
	styleRepr
	// styleListing is Python's repr with nodes written as %name: the
	// fixture listing's notation.
	styleListing
)

// deviceTypes are the torch device type names; a bare word that is one of
// them (optionally with ":index") reads as a Device in the FX notation.
var deviceTypes = map[string]bool{
	"cpu": true, "cuda": true, "meta": true, "mps": true, "xpu": true, "hpu": true, "xla": true, "lazy": true,
	"ipu": true, "mtia": true, "privateuseone": true, "vulkan": true, "ve": true, "ort": true, "mkldnn": true,
	"opengl": true, "opencl": true, "ideep": true, "hip": true, "fpga": true, "maia": true,
}

// reservedWords are bare words that never read as strings.
var reservedWords = map[string]bool{
	"None": true, "True": true, "False": true, "inf": true, "nan": true, "torch": true, "slice": true, "device": true,
	"infj": true, "nanj": true,
}

// isBareString reports whether s prints unquoted in the FX notation: a
// word [A-Za-z_][A-Za-z0-9_.]* that does not read back as anything else
// (None, True, False, inf, nan, a torch.* constant, a device type).
func isBareString(s string) bool {
	if !isWord(s) || reservedWords[s] || deviceTypes[s] || strings.HasPrefix(s, "torch.") {
		return false
	}
	return true
}

func isWordStart(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isWordByte(c byte) bool  { return isWordStart(c) || (c >= '0' && c <= '9') || c == '.' }
func isIdentByte(c byte) bool { return isWordStart(c) || (c >= '0' && c <= '9') }

// isWord matches [A-Za-z_][A-Za-z0-9_.]* with no trailing dot.
func isWord(s string) bool {
	if s == "" || !isWordStart(s[0]) || s[len(s)-1] == '.' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isWordByte(s[i]) {
			return false
		}
	}
	return true
}

// refName returns the name of a node reference, or false for other values.
func refName(v ops.Value) (string, bool) {
	switch x := v.(type) {
	case *Node:
		if x == nil {
			return "", false
		}
		return x.name, true
	case Ref:
		return x.Name, true
	}
	return "", false
}

// writeValue appends v in the given notation. It never fails: a value of a
// kind the notations do not cover prints as <Go type> (such text does not
// parse back).
func writeValue(b *strings.Builder, v ops.Value, st valueStyle) {
	if name, ok := refName(v); ok {
		if st != styleRepr {
			b.WriteByte('%')
		}
		b.WriteString(name)
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(PyFloat(x))
	case complex128:
		b.WriteString(PyComplex(x))
	case string:
		if st == styleFX && isBareString(x) {
			b.WriteString(x)
		} else {
			b.WriteString(PyQuote(x))
		}
	case tensor.DType:
		b.WriteString(x.TorchName())
	case ops.Layout:
		b.WriteString(x.String())
	case ops.MemoryFormat:
		b.WriteString(x.String())
	case ops.Device:
		writeDevice(b, x, st)
	case ops.List:
		b.WriteByte('[')
		writeSeq(b, x, st)
		b.WriteByte(']')
	case ops.Tuple:
		b.WriteByte('(')
		writeSeq(b, x, st)
		if len(x) == 1 {
			b.WriteByte(',')
		}
		b.WriteByte(')')
	case ops.Dict:
		writeDict(b, x, st)
	case ops.Slice:
		inner := st
		if st == styleFX {
			inner = styleRepr // FX prints str(slice), which reprs its parts
		}
		b.WriteString("slice(")
		writeValue(b, x.Start, inner)
		b.WriteString(", ")
		writeValue(b, x.Stop, inner)
		b.WriteString(", ")
		writeValue(b, x.Step, inner)
		b.WriteByte(')')
	case dotEllipsis:
		b.WriteString("...[total_len=" + strconv.Itoa(x.total) + "]")
	case ops.Overload, ops.Packet, ops.Callable:
		writeOperator(b, x, st)
	default:
		fmt.Fprintf(b, "<%T>", v)
	}
}

func writeSeq(b *strings.Builder, xs []ops.Value, st valueStyle) {
	for i, e := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		writeValue(b, e, st)
	}
}

func writeDict(b *strings.Builder, d ops.Dict, st valueStyle) {
	b.WriteByte('{')
	for i, k := range d.Keys {
		if i > 0 {
			b.WriteString(", ")
		}
		writeKey(b, k, st)
		b.WriteString(": ")
		var v ops.Value
		if i < len(d.Values) {
			v = d.Values[i]
		}
		writeValue(b, v, st)
	}
	b.WriteByte('}')
}

// writeKey writes a dict key: bare in the FX notation when it is an
// identifier, quoted otherwise.
func writeKey(b *strings.Builder, k string, st valueStyle) {
	if st == styleFX && ops.IsIdentifier(k) {
		b.WriteString(k)
		return
	}
	b.WriteString(PyQuote(k))
}

// writeDevice writes str(device) ("cpu", "cuda:0") in the FX notation and
// repr(device) (device(type='cuda', index=0)) otherwise.
func writeDevice(b *strings.Builder, d ops.Device, st valueStyle) {
	typ, idx, hasIdx := strings.Cut(string(d), ":")
	if st == styleFX {
		if deviceTypes[typ] && (!hasIdx || isDigits(idx)) {
			b.WriteString(string(d))
			return
		}
	}
	b.WriteString("device(type=")
	b.WriteString(PyQuote(typ))
	if hasIdx {
		b.WriteString(", index=")
		if isDigits(idx) {
			b.WriteString(idx)
		} else {
			b.WriteString(PyQuote(idx))
		}
	}
	b.WriteByte(')')
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// formatValue returns v in the given notation.
func formatValue(v ops.Value, st valueStyle) string {
	var b strings.Builder
	writeValue(&b, v, st)
	return b.String()
}
