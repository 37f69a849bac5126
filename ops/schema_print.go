package ops

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/ops/tensor"
)

// This file prints schemas back to text exactly as PyTorch's
// str(FunctionSchema) does (c10/core/function_schema.h operator<<), and
// holds the c10 enum numbers that schema defaults use ("ScalarType
// dtype=6", "MemoryFormat memory_format=0").

// c10ScalarTypes maps c10::ScalarType numbers to DTypes (only those fxquant
// has; the quantized and bit types have none).
var c10ScalarTypes = map[int64]tensor.DType{
	0: tensor.UInt8, 1: tensor.Int8, 2: tensor.Int16, 3: tensor.Int32, 4: tensor.Int64,
	5: tensor.Float16, 6: tensor.Float32, 7: tensor.Float64, 8: tensor.Complex32,
	9: tensor.Complex64, 10: tensor.Complex128, 11: tensor.Bool, 15: tensor.BFloat16,
	23: tensor.Float8E5M2, 24: tensor.Float8E4M3FN, 25: tensor.Float8E5M2FNUZ,
	26: tensor.Float8E4M3FNUZ, 27: tensor.UInt16, 28: tensor.UInt32, 29: tensor.UInt64,
	33: tensor.UInt4, 40: tensor.Int4, 44: tensor.Float8E8M0FNU,
}

// c10MemoryFormats and c10Layouts are the c10::MemoryFormat and c10::Layout
// numbers.
var (
	c10MemoryFormats = map[int64]MemoryFormat{0: ContiguousFormat, 1: PreserveFormat, 2: ChannelsLast, 3: ChannelsLast3d}
	c10Layouts       = map[int64]Layout{0: LayoutStrided, 1: LayoutSparseCoo, 2: LayoutSparseCsr, 3: LayoutMkldnn, 4: LayoutSparseCsc, 5: LayoutSparseBsr, 6: LayoutSparseBsc}
)

// c10Code returns the c10 number of an enum value, as PyTorch prints it in
// a schema default.
func c10Code(v Value) (int64, bool) {
	switch x := v.(type) {
	case tensor.DType:
		for k, d := range c10ScalarTypes {
			if d == x {
				return k, true
			}
		}
	case MemoryFormat:
		for k, m := range c10MemoryFormats {
			if m == x {
				return k, true
			}
		}
	case Layout:
		for k, l := range c10Layouts {
			if l == x {
				return k, true
			}
		}
	}
	return 0, false
}

// String prints the schema without its namespace exactly as PyTorch's
// str(FunctionSchema) does: "add.Tensor(Tensor self, Tensor other, *,
// Scalar alpha=1) -> Tensor". Defaults print in PyTorch's normal form (a
// float with 17 significant digits, "1." for a whole float, enum values as
// their c10 numbers, an int list of equal elements as one int), so two
// spellings of one schema print alike.
func (s *Schema) String() string {
	var b strings.Builder
	b.WriteString(s.Name)
	if s.Overload != "default" {
		b.WriteString("." + s.Overload)
	}
	b.WriteString("(")
	kw := false
	for i, a := range s.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		if a.KwargOnly && !kw {
			b.WriteString("*, ")
			kw = true
		}
		writeArgument(&b, a)
	}
	if s.VarArgs {
		if len(s.Args) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("...")
	}
	b.WriteString(") -> ")
	// A lone return is bare unless its type prints with a leading "(" (a
	// tuple, or a list of tuples), which would read as a return list.
	paren := !(len(s.Returns) == 1 && !s.VarRets && s.Returns[0].Type.Base != TupleBase)
	if paren {
		b.WriteString("(")
	}
	for i, r := range s.Returns {
		if i > 0 {
			b.WriteString(", ")
		}
		writeArgument(&b, r)
	}
	if s.VarRets {
		if len(s.Returns) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("...")
	}
	if paren {
		b.WriteString(")")
	}
	return b.String()
}

func writeArgument(b *strings.Builder, a Argument) {
	b.WriteString(a.Type.String())
	if a.Name != "" {
		b.WriteString(" " + a.Name)
	}
	if a.HasDefault {
		b.WriteString("=")
		writeDefault(b, a.Type, a.Default)
	}
}

// writeDefault prints a default as PyTorch's Argument printer does.
func writeDefault(b *strings.Builder, t ArgType, v Value) {
	if l, ok := v.(List); ok && t.List && !t.Optional && t.Base == "int" && len(l) > 1 {
		same := true
		for _, e := range l[1:] {
			if e != l[0] {
				same = false
			}
		}
		if same {
			writeIValue(b, l[0])
			return
		}
	}
	writeIValue(b, v)
}

// writeIValue prints a literal as c10's IValue printer does.
func writeIValue(b *strings.Builder, v Value) {
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
		b.WriteString(formatIValueFloat(x))
	case string:
		writeQuoted(b, x)
	case List:
		b.WriteString("[")
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeIValue(b, e)
		}
		b.WriteString("]")
	default:
		if c, ok := c10Code(v); ok {
			b.WriteString(strconv.FormatInt(c, 10))
			return
		}
		fmt.Fprint(b, v)
	}
}

// formatIValueFloat prints a double as c10's IValue printer: a whole
// number below 1e10 as "3." ("-0." for negative zero), anything else with
// 17 significant digits; inf and nan as C++ streams print them.
func formatIValueFloat(d float64) string {
	switch {
	case math.IsInf(d, 1):
		return "inf"
	case math.IsInf(d, -1):
		return "-inf"
	case math.IsNaN(d):
		return "nan"
	}
	if math.Abs(d) < 1e10 && (d == 0 || math.Abs(d) >= 0x1p-1022) && d == math.Trunc(d) {
		if d == 0 && math.Signbit(d) {
			return "-0."
		}
		return strconv.FormatInt(int64(d), 10) + "."
	}
	return strconv.FormatFloat(d, 'g', 17, 64)
}

// writeQuoted prints a string default as c10's printQuotedString does.
func writeQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '"':
			b.WriteString(`\"`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
			} else {
				b.WriteString(`\` + strconv.FormatInt(int64(c>>6), 8) + strconv.FormatInt(int64(c>>3&7), 8) + strconv.FormatInt(int64(c&7), 8))
			}
		}
	}
	b.WriteByte('"')
}

// String prints the type as PyTorch's schema printer does: "Tensor(a!)",
// "int[2]", "Tensor?[]", "int[1]?", "Tensor(a -> *)[]", "Tensor[](a!)",
// "Dict(str, Tensor)", "(Tensor, t)[]".
func (t ArgType) String() string {
	var b strings.Builder
	switch {
	case t.Base == TupleBase && t.Elems != nil:
		writeTypeList(&b, t.Elems)
	case t.Elems != nil:
		b.WriteString(t.Base)
		writeTypeList(&b, t.Elems)
	default:
		b.WriteString(t.Base)
	}
	if t.List {
		if t.ElemOptional {
			b.WriteString("?")
		}
		if !t.AliasOnList {
			t.writeAlias(&b)
		}
		b.WriteString("[")
		if t.ListLen > 0 {
			b.WriteString(strconv.Itoa(t.ListLen))
		}
		b.WriteString("]")
		if t.AliasOnList {
			t.writeAlias(&b)
		}
	} else {
		t.writeAlias(&b)
	}
	if t.Optional {
		b.WriteString("?")
	}
	return b.String()
}

func writeTypeList(b *strings.Builder, ts []ArgType) {
	b.WriteString("(")
	for i, e := range ts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.String())
	}
	b.WriteString(")")
}

func (t ArgType) writeAlias(b *strings.Builder) {
	if t.Alias == "" && t.AliasAfter == "" && !t.Write {
		return
	}
	b.WriteString("(" + t.Alias)
	if t.Write {
		b.WriteString("!")
	}
	if t.AliasAfter != "" {
		b.WriteString(" -> " + t.AliasAfter)
	}
	b.WriteString(")")
}
