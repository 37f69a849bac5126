package tensor

import (
	"fmt"
	"strings"
)

// DType is a tensor element type: every ScalarType of PyTorch's serialized
// export format, plus the logical sub-byte integer types Int4 and UInt4,
// which are stored one value per Int8/UInt8 element.
//
// A DType that no kernel handles (complex, float8) is still representable:
// reading, printing and verifying a graph that uses it works, and running a
// kernel on it is an error at run time.
type DType uint8

// The element types. The zero value is Unknown.
const (
	Unknown DType = iota
	Float32
	Float64
	Float16
	BFloat16
	Float8E4M3FN
	Float8E5M2
	Float8E4M3FNUZ
	Float8E5M2FNUZ
	Float8E8M0FNU
	Int8
	UInt8
	Int16
	UInt16
	Int32
	UInt32
	Int64
	UInt64
	Bool
	Complex32
	Complex64
	Complex128
	Int4
	UInt4
	numDTypes
)

type dtypeInfo struct {
	name   string // torch name without the "torch." prefix
	abbrev string // FX's dtype abbreviation, as in "f32[4, 8]"
	size   int    // bytes per stored element
	serde  int    // ScalarType number of the export format; 0 for none
	kind   byte   // 'f' float, 'i' signed int, 'u' unsigned int, 'b' bool, 'c' complex
}

var dtypeInfos = [numDTypes]dtypeInfo{
	Unknown:        {"unknown", "?", 0, 0, 0},
	Float32:        {"float32", "f32", 4, 7, 'f'},
	Float64:        {"float64", "f64", 8, 8, 'f'},
	Float16:        {"float16", "f16", 2, 6, 'f'},
	BFloat16:       {"bfloat16", "bf16", 2, 13, 'f'},
	Float8E4M3FN:   {"float8_e4m3fn", "f8e4m3fn", 1, 29, 'f'},
	Float8E5M2:     {"float8_e5m2", "f8e5m2", 1, 30, 'f'},
	Float8E4M3FNUZ: {"float8_e4m3fnuz", "f8e4m3fnuz", 1, 31, 'f'},
	Float8E5M2FNUZ: {"float8_e5m2fnuz", "f8e5m2fnuz", 1, 32, 'f'},
	Float8E8M0FNU:  {"float8_e8m0fnu", "f8e8m0fnu", 1, 33, 'f'},
	Int8:           {"int8", "i8", 1, 2, 'i'},
	UInt8:          {"uint8", "u8", 1, 1, 'u'},
	Int16:          {"int16", "i16", 2, 3, 'i'},
	UInt16:         {"uint16", "u16", 2, 28, 'u'},
	Int32:          {"int32", "i32", 4, 4, 'i'},
	UInt32:         {"uint32", "u32", 4, 34, 'u'},
	Int64:          {"int64", "i64", 8, 5, 'i'},
	UInt64:         {"uint64", "u64", 8, 35, 'u'},
	Bool:           {"bool", "b8", 1, 12, 'b'},
	Complex32:      {"complex32", "c32", 4, 9, 'c'},
	Complex64:      {"complex64", "c64", 8, 10, 'c'},
	Complex128:     {"complex128", "c128", 16, 11, 'c'},
	Int4:           {"int4", "i4", 1, 0, 'i'},
	UInt4:          {"uint4", "u4", 1, 0, 'u'},
}

// AllDTypes lists every known DType except Unknown, in declaration order.
func AllDTypes() []DType {
	out := make([]DType, 0, numDTypes-1)
	for d := Float32; d < numDTypes; d++ {
		out = append(out, d)
	}
	return out
}

func (d DType) info() dtypeInfo {
	if d >= numDTypes {
		return dtypeInfo{name: fmt.Sprintf("dtype(%d)", uint8(d)), abbrev: "?"}
	}
	return dtypeInfos[d]
}

// Valid reports whether d is a known element type other than Unknown.
func (d DType) Valid() bool { return d > Unknown && d < numDTypes }

// String returns the torch name without its module: "float32", "int8".
func (d DType) String() string { return d.info().name }

// TorchName returns the name Python prints: "torch.float32".
func (d DType) TorchName() string { return "torch." + d.info().name }

// Abbrev returns FX's abbreviation used in printed types: "f32", "i8", "b8".
func (d DType) Abbrev() string { return d.info().abbrev }

// Size returns the bytes one stored element takes (1 for Int4 and UInt4).
func (d DType) Size() int { return d.info().size }

// SerdeCode returns the ScalarType number of PyTorch's export schema, or 0
// when the format has none (Int4, UInt4).
func (d DType) SerdeCode() int { return d.info().serde }

// IsFloat reports whether d is a real floating-point type (float8 included).
func (d DType) IsFloat() bool { return d.info().kind == 'f' }

// IsInteger reports whether d is a signed or unsigned integer type (not bool).
func (d DType) IsInteger() bool { k := d.info().kind; return k == 'i' || k == 'u' }

// IsSigned reports whether d is a signed integer or floating-point type.
func (d DType) IsSigned() bool { k := d.info().kind; return k == 'i' || k == 'f' || k == 'c' }

// IsComplex reports whether d is a complex type.
func (d DType) IsComplex() bool { return d.info().kind == 'c' }

// Storage returns the type that holds d's values in memory: Int8 for Int4,
// UInt8 for UInt4, and d itself otherwise.
func (d DType) Storage() DType {
	switch d {
	case Int4:
		return Int8
	case UInt4:
		return UInt8
	}
	return d
}

// IntRange returns the smallest and largest value of an integer type (Int4:
// -8..7, UInt4: 0..15) and false for any other type.
func (d DType) IntRange() (lo, hi int64, ok bool) {
	switch d {
	case Int4:
		return -8, 7, true
	case UInt4:
		return 0, 15, true
	case Int8:
		return -128, 127, true
	case UInt8:
		return 0, 255, true
	case Int16:
		return -1 << 15, 1<<15 - 1, true
	case UInt16:
		return 0, 1<<16 - 1, true
	case Int32:
		return -1 << 31, 1<<31 - 1, true
	case UInt32:
		return 0, 1<<32 - 1, true
	case Int64:
		return -1 << 63, 1<<63 - 1, true
	case Bool:
		return 0, 1, true
	}
	return 0, 0, false
}

// DTypeFromSerde maps a ScalarType number of the export schema to a DType.
// It returns false for 0 (UNKNOWN) and numbers the schema does not define.
func DTypeFromSerde(code int) (DType, bool) {
	if code == 0 {
		return Unknown, false
	}
	for d := Float32; d < numDTypes; d++ {
		if dtypeInfos[d].serde == code {
			return d, true
		}
	}
	return Unknown, false
}

// ParseDType parses a dtype name as Python or FX writes it: "torch.float32",
// "float32", "float", "f32", "torch.int8", "i8". Python aliases (torch.float,
// torch.double, torch.half, torch.long, torch.int, torch.short, torch.cfloat)
// are accepted.
func ParseDType(s string) (DType, error) {
	name := strings.TrimPrefix(s, "torch.")
	switch name {
	case "float":
		return Float32, nil
	case "double":
		return Float64, nil
	case "half":
		return Float16, nil
	case "long":
		return Int64, nil
	case "int":
		return Int32, nil
	case "short":
		return Int16, nil
	case "cfloat":
		return Complex64, nil
	case "cdouble":
		return Complex128, nil
	case "chalf":
		return Complex32, nil
	}
	for d := Float32; d < numDTypes; d++ {
		if dtypeInfos[d].name == name || dtypeInfos[d].abbrev == name {
			return d, nil
		}
	}
	return Unknown, fmt.Errorf("tensor: unknown dtype %q", s)
}
