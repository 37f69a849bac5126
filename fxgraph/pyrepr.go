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
	var buf [32]byte
	return string(appendPyFloat(buf[:0], v, addDot0))
}

// appendPyFloat appends pyFloat(v, addDot0) to dst.
func appendPyFloat(dst []byte, v float64, addDot0 bool) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, "nan"...)
	case math.IsInf(v, 1):
		return append(dst, "inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-inf"...)
	}
	var num [32]byte
	s := strconv.AppendFloat(num[:0], v, 'e', -1, 64) // "-1.2345e-07"
	if s[0] == '-' {
		dst = append(dst, '-')
		s = s[1:]
	}
	e := 0
	for s[e] != 'e' {
		e++
	}
	// The significant digits without the point, and the exponent.
	var digitBuf [24]byte
	digits := append(digitBuf[:0], s[0])
	if e > 1 {
		digits = append(digits, s[2:e]...)
	}
	exp := 0
	for _, c := range s[e+2:] {
		exp = 10*exp + int(c-'0')
	}
	if s[e+1] == '-' {
		exp = -exp
	}
	decpt := exp + 1 // v = 0.digits × 10^decpt
	switch {
	case decpt <= -4 || decpt > 16:
		dst = append(dst, digits[0])
		if len(digits) > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		dst = strconv.AppendInt(dst, int64(exp), 10)
	case decpt <= 0:
		dst = append(dst, "0."...)
		for range -decpt {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	case decpt >= len(digits):
		dst = append(dst, digits...)
		for range decpt - len(digits) {
			dst = append(dst, '0')
		}
		if addDot0 {
			dst = append(dst, ".0"...)
		}
	default:
		dst = append(dst, digits[:decpt]...)
		dst = append(dst, '.')
		dst = append(dst, digits[decpt:]...)
	}
	return dst
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
func PyQuote(s string) string { return string(appendPyQuote(nil, s)) }

// appendPyQuote appends PyQuote(s) to dst.
func appendPyQuote(dst []byte, s string) []byte {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	dst = append(dst, q)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = fmt.Appendf(dst, `\x%02x`, s[i])
			i++
			continue
		}
		i += size
		switch {
		case r == rune(q) || r == '\\':
			dst = append(dst, '\\')
			dst = utf8.AppendRune(dst, r)
		case r == '\t':
			dst = append(dst, `\t`...)
		case r == '\n':
			dst = append(dst, `\n`...)
		case r == '\r':
			dst = append(dst, `\r`...)
		case r < 0x7f && r >= 0x20:
			dst = utf8.AppendRune(dst, r)
		case r >= 0x80 && unicode.IsPrint(r):
			dst = utf8.AppendRune(dst, r)
		case r < 0x100:
			dst = fmt.Appendf(dst, `\x%02x`, r)
		case r < 0x10000:
			dst = fmt.Appendf(dst, `\u%04x`, r)
		default:
			dst = fmt.Appendf(dst, `\U%08x`, r)
		}
	}
	return append(dst, q)
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

// The printers below append to a byte slice that the caller keeps in a
// local variable: appending through a *strings.Builder stores the buffer
// back into the builder on every write, and each such pointer store costs
// a GC write barrier while a collection is marking. The write* forms wrap
// them for callers that hold a builder.

// writeValue appends v in the given notation to b; see [appendValue].
func writeValue(b *strings.Builder, v ops.Value, st valueStyle) {
	var buf [256]byte
	b.Write(appendValue(buf[:0], v, st))
}

// appendValue appends v in the given notation. It never fails: a value of
// a kind the notations do not cover prints as <Go type> (such text does
// not parse back).
func appendValue(dst []byte, v ops.Value, st valueStyle) []byte {
	if name, ok := refName(v); ok {
		if st != styleRepr {
			dst = append(dst, '%')
		}
		return append(dst, name...)
	}
	switch x := v.(type) {
	case nil:
		dst = append(dst, "None"...)
	case bool:
		if x {
			dst = append(dst, "True"...)
		} else {
			dst = append(dst, "False"...)
		}
	case int64:
		dst = strconv.AppendInt(dst, x, 10)
	case float64:
		dst = appendPyFloat(dst, x, true)
	case complex128:
		dst = append(dst, PyComplex(x)...)
	case string:
		if st == styleFX && isBareString(x) {
			dst = append(dst, x...)
		} else {
			dst = appendPyQuote(dst, x)
		}
	case tensor.DType:
		dst = append(dst, "torch."...) // x.TorchName(), without building it
		dst = append(dst, x.String()...)
	case ops.Layout:
		dst = append(dst, x.String()...)
	case ops.MemoryFormat:
		dst = append(dst, x.String()...)
	case ops.Device:
		dst = appendDevice(dst, x, st)
	case ops.List:
		dst = append(dst, '[')
		dst = appendSeq(dst, x, st)
		dst = append(dst, ']')
	case ops.Tuple:
		dst = appendTuple(dst, x, st)
	case ops.Dict:
		dst = appendDict(dst, x, st)
	case ops.Slice:
		inner := st
		if st == styleFX {
			inner = styleRepr // FX prints str(slice), which reprs its parts
		}
		dst = append(dst, "slice("...)
		dst = appendValue(dst, x.Start, inner)
		dst = append(dst, ", "...)
		dst = appendValue(dst, x.Stop, inner)
		dst = append(dst, ", "...)
		dst = appendValue(dst, x.Step, inner)
		dst = append(dst, ')')
	case dotEllipsis:
		dst = append(dst, "...[total_len="...)
		dst = strconv.AppendInt(dst, int64(x.total), 10)
		dst = append(dst, ']')
	case ops.Overload, ops.Packet, ops.Callable:
		var b strings.Builder
		writeOperator(&b, x, st)
		dst = append(dst, b.String()...)
	default:
		dst = fmt.Appendf(dst, "<%T>", v)
	}
	return dst
}

// appendTuple appends a tuple: (a, b), (a,) or ().
func appendTuple(dst []byte, xs []ops.Value, st valueStyle) []byte {
	dst = append(dst, '(')
	dst = appendSeq(dst, xs, st)
	if len(xs) == 1 {
		dst = append(dst, ',')
	}
	return append(dst, ')')
}

func appendSeq(dst []byte, xs []ops.Value, st valueStyle) []byte {
	for i, e := range xs {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = appendValue(dst, e, st)
	}
	return dst
}

func appendDict(dst []byte, d ops.Dict, st valueStyle) []byte {
	dst = append(dst, '{')
	for i, k := range d.Keys {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = appendKey(dst, k, st)
		dst = append(dst, ": "...)
		var v ops.Value
		if i < len(d.Values) {
			v = d.Values[i]
		}
		dst = appendValue(dst, v, st)
	}
	return append(dst, '}')
}

// appendKey appends a dict key: bare in the FX notation when it is an
// identifier, quoted otherwise.
func appendKey(dst []byte, k string, st valueStyle) []byte {
	if st == styleFX && ops.IsIdentifier(k) {
		return append(dst, k...)
	}
	return appendPyQuote(dst, k)
}

// appendDevice appends str(device) ("cpu", "cuda:0") in the FX notation
// and repr(device) (device(type='cuda', index=0)) otherwise.
func appendDevice(dst []byte, d ops.Device, st valueStyle) []byte {
	typ, idx, hasIdx := strings.Cut(string(d), ":")
	if st == styleFX {
		if deviceTypes[typ] && (!hasIdx || isDigits(idx)) {
			return append(dst, d...)
		}
	}
	dst = append(dst, "device(type="...)
	dst = appendPyQuote(dst, typ)
	if hasIdx {
		dst = append(dst, ", index="...)
		if isDigits(idx) {
			dst = append(dst, idx...)
		} else {
			dst = appendPyQuote(dst, idx)
		}
	}
	return append(dst, ')')
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
	var buf [256]byte
	return string(appendValue(buf[:0], v, st))
}
