package ops

import (
	"fmt"

	"github.com/fxquant/fxquant/ops/tensor"
)

// Value is an argument value, as in torch.fx's Argument. The allowed dynamic
// types are:
//
//   - nil (None), bool, int64, float64, string, complex128;
//   - tensor.DType (a ScalarType), Device, Layout, MemoryFormat;
//   - an operator passed as an argument ([Overload], [Packet] or
//     [Callable]), as torch.fx holds the OpOverload object in
//     higher_order.out_dtype(aten.linear.default, torch.int32, ...);
//   - List, Tuple, Dict and Slice, nesting Values;
//   - Node-like references supplied by higher layers: a graph node
//     (*fxgraph.Node), a run-time tensor (*tensor.Tensor) or a static type
//     (Type), depending on who evaluates the arguments.
//
// [CheckLiteral] tells literal values from references.
type Value = any

// List is a Python list of values.
type List []Value

// Tuple is a Python tuple of values.
type Tuple []Value

// Sequence returns the elements of a List or Tuple and true; for any
// other value it returns nil and false. The slice is v's own.
func Sequence(v Value) ([]Value, bool) {
	switch x := v.(type) {
	case List:
		return x, true
	case Tuple:
		return x, true
	}
	return nil, false
}

// AsSequence is [Sequence] for values that may also stand alone, as an
// output node's argument does: a List or Tuple gives its elements, any
// other value the one-element slice holding it.
func AsSequence(v Value) []Value {
	if s, ok := Sequence(v); ok {
		return s
	}
	return []Value{v}
}

// Dict is a Python dict with string keys, kept in insertion order.
type Dict struct {
	Keys   []string
	Values []Value
}

// Get returns the value stored under key.
func (d Dict) Get(key string) (Value, bool) {
	for i, k := range d.Keys {
		if k == key {
			return d.Values[i], true
		}
	}
	return nil, false
}

// Kwarg is one keyword argument: a name and its value.
type Kwarg struct {
	Name  string
	Value Value
}

// Slice is a Python slice(start, stop, step); each part may be None.
type Slice struct {
	Start, Stop, Step Value
}

// Device is a torch device such as "cpu" or "cuda:0".
type Device string

// Layout is a torch layout, numbered as in the export schema (7 = strided).
type Layout int

// Layouts of the export schema.
const (
	LayoutUnknown Layout = iota
	LayoutSparseCoo
	LayoutSparseCsr
	LayoutSparseCsc
	LayoutSparseBsr
	LayoutSparseBsc
	LayoutMkldnn
	LayoutStrided
)

var layoutNames = []string{"torch.unknown_layout", "torch.sparse_coo", "torch.sparse_csr", "torch.sparse_csc", "torch.sparse_bsr", "torch.sparse_bsc", "torch._mkldnn", "torch.strided"}

// String returns the torch name, e.g. "torch.strided".
func (l Layout) String() string {
	if int(l) >= 0 && int(l) < len(layoutNames) {
		return layoutNames[l]
	}
	return fmt.Sprintf("torch.layout(%d)", int(l))
}

// MemoryFormat is a torch memory format, numbered as in the export schema.
type MemoryFormat int

// Memory formats of the export schema.
const (
	MemoryFormatUnknown MemoryFormat = iota
	ContiguousFormat
	ChannelsLast
	ChannelsLast3d
	PreserveFormat
)

var memoryFormatNames = []string{"torch.unknown_memory_format", "torch.contiguous_format", "torch.channels_last", "torch.channels_last_3d", "torch.preserve_format"}

// String returns the torch name, e.g. "torch.contiguous_format".
func (m MemoryFormat) String() string {
	if int(m) >= 0 && int(m) < len(memoryFormatNames) {
		return memoryFormatNames[m]
	}
	return fmt.Sprintf("torch.memory_format(%d)", int(m))
}

// CheckLiteral reports an error if v (recursively) holds anything but the
// literal kinds of [Value]; operator values ([Overload], [Packet],
// [Callable]) are literals. References (nodes, tensors, types) are passed to
// ref, which returns an error for kinds the caller does not allow; a nil ref
// rejects every non-literal.
func CheckLiteral(v Value, ref func(Value) error) error {
	switch x := v.(type) {
	case nil, bool, int64, float64, string, complex128, tensor.DType, Device, Layout, MemoryFormat,
		Overload, Packet, Callable:
		return nil
	case List:
		for i, e := range x {
			if err := CheckLiteral(e, ref); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	case Tuple:
		for i, e := range x {
			if err := CheckLiteral(e, ref); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	case Dict:
		if len(x.Keys) != len(x.Values) {
			return fmt.Errorf("dict has %d keys but %d values", len(x.Keys), len(x.Values))
		}
		for i, e := range x.Values {
			if err := CheckLiteral(e, ref); err != nil {
				return fmt.Errorf("[%q]: %w", x.Keys[i], err)
			}
		}
		return nil
	case Slice:
		for _, e := range []Value{x.Start, x.Stop, x.Step} {
			if err := CheckLiteral(e, ref); err != nil {
				return fmt.Errorf("slice: %w", err)
			}
		}
		return nil
	}
	if ref != nil {
		return ref(v)
	}
	return fmt.Errorf("value of Go type %T is not an argument literal", v)
}

// mapElems is MapValue over the elements of a List or Tuple, rebuilt as
// the same kind of sequence.
func mapElems[S ~[]Value](x S, f func(Value) (Value, error)) (Value, error) {
	out := make(S, len(x))
	for i, e := range x {
		m, err := MapValue(e, f)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// MapValue rebuilds v with every non-literal leaf (node, tensor, type)
// replaced by f's result; literals and containers are rebuilt around them.
// Containers without references are returned as they are.
func MapValue(v Value, f func(Value) (Value, error)) (Value, error) {
	switch x := v.(type) {
	case nil, bool, int64, float64, string, complex128, tensor.DType, Device, Layout, MemoryFormat,
		Overload, Packet, Callable:
		return v, nil
	case List:
		return mapElems(x, f)
	case Tuple:
		return mapElems(x, f)
	case Dict:
		out := Dict{Keys: append([]string(nil), x.Keys...), Values: make([]Value, len(x.Values))}
		for i, e := range x.Values {
			m, err := MapValue(e, f)
			if err != nil {
				return nil, err
			}
			out.Values[i] = m
		}
		return out, nil
	case Slice:
		var out Slice
		var err error
		if out.Start, err = MapValue(x.Start, f); err != nil {
			return nil, err
		}
		if out.Stop, err = MapValue(x.Stop, f); err != nil {
			return nil, err
		}
		if out.Step, err = MapValue(x.Step, f); err != nil {
			return nil, err
		}
		return out, nil
	}
	return f(v)
}
