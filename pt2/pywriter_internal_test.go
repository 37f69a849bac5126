package pt2

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/fxquant/fxquant/fxgraph"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fxquant/fxquant/ops"
)

// refPyString is the writer's former quoting, rune by rune through
// fmt: the reference fxgraph.AppendPyJSONString must match byte for byte.
func refPyString(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20 || r == 0x7f:
				fmt.Fprintf(&b, `\u%04x`, r)
			case r < utf8.RuneSelf:
				b.WriteRune(r)
			case r > 0xFFFF:
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			default:
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// refPyFloatRepr is the writer's former float formatting, through strings
// and fmt.
func refPyFloatRepr(v float64) string {
	s := strconv.FormatFloat(v, 'e', -1, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	var out string
	if exp >= -4 && exp < 16 {
		if exp >= 0 {
			intPart := digits
			frac := ""
			if len(digits) > exp+1 {
				intPart, frac = digits[:exp+1], digits[exp+1:]
			} else {
				intPart += strings.Repeat("0", exp+1-len(digits))
			}
			if frac == "" {
				frac = "0"
			}
			out = intPart + "." + frac
		} else {
			out = "0." + strings.Repeat("0", -exp-1) + digits
		}
	} else {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign = "-"
			exp = -exp
		}
		out = fmt.Sprintf("%se%s%02d", m, sign, exp)
	}
	if neg {
		out = "-" + out
	}
	return out
}

func TestAppendPyStringMatchesReference(t *testing.T) {
	cases := []string{"", "x", `a"b\c`, "\n\r\t\b\f\x00\x1f\x7f", "é", "€ and 😀", "\xff\xfe", "a\xc3", "\u2028",
		"\ufffd", "mixed \"quotes\" and \\ and \x01 and ü and 𝄞 end"}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune{'a', 'Z', '0', ' ', '"', '\\', '\n', 0, 0x1f, 0x7f, 0x80, 0xe9, 0x7ff, 0x800, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x10ffff}
	for range 2000 {
		var sb strings.Builder
		for range rng.IntN(20) {
			switch rng.IntN(6) {
			case 0:
				sb.WriteByte(byte(rng.IntN(256))) // often invalid UTF-8
			default:
				sb.WriteRune(alphabet[rng.IntN(len(alphabet))])
			}
		}
		cases = append(cases, sb.String())
	}
	for _, s := range cases {
		if got, want := string(fxgraph.AppendPyJSONString(nil, s)), refPyString(s); got != want {
			t.Fatalf("fxgraph.AppendPyJSONString(%q) = %s, want %s", s, got, want)
		}
		if got, want := string(fxgraph.AppendPyJSONString(nil, []byte(s))), refPyString(s); got != want {
			t.Fatalf("fxgraph.AppendPyJSONString([]byte(%q)) = %s, want %s", s, got, want)
		}
	}
}

func TestAppendPyFloatReprMatchesReference(t *testing.T) {
	cases := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 0.02, 1e-4, 9.999e-5, 1e-5, 1e15, 9999999999999998, 1e16, 1e17, 123456789012345678,
		1.1920928955078125e-07, math.MaxFloat64, math.SmallestNonzeroFloat64, -math.MaxFloat32, 1e100, 1e-100, 12345.678, 0.5, 3}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var v float64
		switch rng.IntN(3) {
		case 0:
			v = math.Float64frombits(rng.Uint64())
		case 1:
			v = float64(math.Float32frombits(rng.Uint32()))
		default:
			v = (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(44)-22))
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		cases = append(cases, v)
	}
	for _, v := range cases {
		if got, want := string(appendPyFloatRepr(nil, v)), refPyFloatRepr(v); got != want {
			t.Fatalf("appendPyFloatRepr(%v) = %s, want %s", v, got, want)
		}
	}
}

// TestPlainCustomHandleMatchesDecoder checks the decoder-free reading of
// {"numeric_debug_handle": N} against the JSON decoder's on the texts it
// accepts and on near misses it must leave to the decoder.
func TestPlainCustomHandleMatchesDecoder(t *testing.T) {
	cases := []string{`{"numeric_debug_handle": 7}`, `{"numeric_debug_handle": 123456789012345678}`,
		`{"numeric_debug_handle": 1234567890123456789}`, `{"numeric_debug_handle": 07}`, `{"numeric_debug_handle": 0}`,
		`{"numeric_debug_handle": -3}`, `{"numeric_debug_handle": 3 }`, `{"numeric_debug_handle":3}`, `{"numeric_debug_handle": }`,
		`{"numeric_debug_handle": 3}}`, `{"numeric_debug_handle": 3, "a": 1}`, `{"numeric_debug_handle": 1e3}`}
	for i := range 200 {
		cases = append(cases, `{"numeric_debug_handle": `+strconv.Itoa(i*7919+1)+`}`)
	}
	accepted := 0
	for _, s := range cases {
		h, ok := plainCustomHandle(s)
		if !ok {
			continue
		}
		accepted++
		if want := decodedCustomHandle(s); h != want {
			t.Errorf("%s: plain reading %d, decoder %d", s, h, want)
		}
	}
	if accepted < 202 {
		t.Errorf("the plain reading accepted %d texts, want at least 202", accepted)
	}
}

// TestWriterOperatorName checks the operator name spelled in scratch
// space against operatorName for an overload and a higher-order operator.
func TestWriterOperatorName(t *testing.T) {
	for _, o := range []ops.Overload{ops.MustOverload("aten.linear.default"), ops.MustOverload("quantized_decomposed.quantize_per_tensor.tensor"),
		{Packet: ops.Packet{NS: "higher_order", Name: "cond"}, Name: "default"}} {
		var w pyWriter
		w.operatorName(o)
		if want := string(fxgraph.AppendPyJSONString(nil, operatorName(o))); string(w.b) != want {
			t.Errorf("%v: wrote %s, want %s", o, w.b, want)
		}
	}
}

// randomJSON writes a random JSON value with random spacing: nested
// objects and arrays, strings with escapes and non-ASCII text, numbers in
// every JSON form, literals.
func randomJSON(rng *rand.Rand, b *strings.Builder, depth int) {
	sp := func() {
		for range rng.IntN(3) {
			b.WriteByte(" \t\n\r"[rng.IntN(4)])
		}
	}
	sp()
	strs := []string{`"a"`, `""`, `"x y"`, `"\"q\" \\ \/ \b\f\n\r\t"`, `"\u00e9\u20ac\ud83d\ude00"`, `"é€😀"`, `"\u0000\u001f\u007f"`,
		"\"\x7f\"", `"\ud800"`, `"pt2.metadata.k"`}
	nums := []string{"0", "-0", "12", "-3.5", "1e5", "1E+2", "2.5e-3", "123456789012345678901234567890", "0.1000"}
	k := rng.IntN(10)
	if depth > 4 {
		k = 2 + rng.IntN(8)
	}
	switch {
	case k == 0:
		b.WriteByte('{')
		sp()
		for i := range rng.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
				sp()
			}
			b.WriteString(strs[rng.IntN(len(strs))])
			sp()
			b.WriteByte(':')
			randomJSON(rng, b, depth+1)
		}
		b.WriteByte('}')
	case k == 1:
		b.WriteByte('[')
		sp()
		for i := range rng.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			randomJSON(rng, b, depth+1)
		}
		b.WriteByte(']')
	case k < 5:
		b.WriteString(strs[rng.IntN(len(strs))])
	case k < 8:
		b.WriteString(nums[rng.IntN(len(nums))])
	default:
		b.WriteString([]string{"true", "false", "null"}[rng.IntN(3)])
	}
	sp()
}

// TestRawMatchesDecoder checks that raw re-emits well-formed values from
// their bytes exactly as the encoding/json token path does, and that
// malformed ones still get the decoder's error.
func TestRawMatchesDecoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 3000 {
		var sb strings.Builder
		for sb.Len() == 0 || !json.Valid([]byte(sb.String())) {
			sb.Reset()
			randomJSON(rng, &sb, 0)
		}
		doc := []byte(sb.String())
		var fast, slow pyWriter
		fast.beginArray()
		slow.beginArray()
		if err := fast.raw(doc); err != nil {
			t.Fatalf("raw(%s): %v", doc, err)
		}
		if err := slow.rawDecoded(doc); err != nil {
			t.Fatalf("rawDecoded(%s): %v", doc, err)
		}
		fast.raw([]byte(`[1]`))
		slow.rawDecoded([]byte(`[1]`))
		if !bytes.Equal(fast.b, slow.b) {
			t.Fatalf("raw(%s)\n = %s\nwant %s", doc, fast.b, slow.b)
		}
	}
	for _, bad := range []string{`{"a": 1`, `[1, 2] 3`, `{"a" 1}`, `[1,]`, `"\x01"`} {
		var fast, slow pyWriter
		errFast, errSlow := fast.raw([]byte(bad)), slow.rawDecoded([]byte(bad))
		if errFast == nil || errSlow == nil || errFast.Error() != errSlow.Error() {
			t.Errorf("raw(%s): error %v, want %v", bad, errFast, errSlow)
		}
	}
}
