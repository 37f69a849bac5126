package pt2

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// tensorMeta is the serialized TensorMeta of one tensor.
type tensorMeta struct {
	DType         tensor.DType
	Sizes         []int64
	RequiresGrad  bool
	DeviceType    string
	DeviceIndex   *int64
	Strides       []int64
	StorageOffset int64
	Layout        int64
	// Sym holds the symbolic entries (sizes, strides and offset written as
	// expressions, whose places above hold ops.DynamicDim); nil when all
	// are ints.
	Sym *symMeta
}

func (m tensorMeta) typ() ops.TensorType {
	return ops.TensorType{Shape: append([]int64{}, m.Sizes...), Elem: ops.Scalar{DType: m.DType}, Syms: m.symTexts()}
}

// decodeSymInt reads a SymInt: an int, or an expression (for which it
// returns ops.DynamicDim and the expression).
func decodeSymInt(raw json.RawMessage, path string) (int64, *symInt, error) {
	tag, v, err := union(raw, path)
	if err != nil {
		return 0, nil, err
	}
	switch tag {
	case "as_int":
		n, err := decodeInt(v, dotPath(path, "as_int"))
		return n, nil, err
	case "as_expr":
		s, err := decodeSymExpr(v, dotPath(path, "as_expr"))
		if err != nil {
			return 0, nil, err
		}
		return ops.DynamicDim, &s, nil
	}
	return 0, nil, pathErrf(path, "unknown SymInt tag %q", tag)
}

// decodeSymInts reads a list of SymInts; the second result, nil when all
// are ints, holds the expressions by position.
func decodeSymInts(raw json.RawMessage, path string) ([]int64, []symInt, error) {
	items, err := decodeArray(raw, path)
	if err != nil {
		return nil, nil, err
	}
	out := make([]int64, len(items))
	var syms []symInt
	for i, it := range items {
		n, s, err := decodeSymInt(it, indexPath(path, i))
		if err != nil {
			return nil, nil, err
		}
		out[i] = n
		if s != nil {
			if syms == nil {
				syms = make([]symInt, len(items))
			}
			syms[i] = *s
		}
	}
	return out, syms, nil
}

// errNotPlainInt marks a storage offset given as an object (a SymInt).
var errNotPlainInt = errors.New("not a plain int")

func decodeTensorMeta(raw json.RawMessage, path string) (tensorMeta, error) {
	if path == fastPath {
		if m, ok := fastTensorMeta(raw); ok {
			return m, nil
		}
	}
	var m tensorMeta
	o, err := decodeObject(raw, path)
	if err != nil {
		return m, err
	}
	if v := o.get("meta"); v != nil && o.get("dtype") == nil { // very old {"meta": TensorMeta}
		return decodeTensorMeta(v, o.sub("meta"))
	}
	dt, err := o.req("dtype")
	if err != nil {
		return m, err
	}
	code, err := decodeInt(dt, o.sub("dtype"))
	if err != nil {
		return m, err
	}
	d, ok := tensor.DTypeFromSerde(int(code))
	if !ok || int64(int(code)) != code {
		return m, pathErrf(o.sub("dtype"), "unknown ScalarType %d", code)
	}
	m.DType = d
	sz, err := o.req("sizes")
	if err != nil {
		return m, err
	}
	var symSizes, symStrides []symInt
	if m.Sizes, symSizes, err = decodeSymInts(sz, o.sub("sizes")); err != nil {
		return m, err
	}
	for i, s := range m.Sizes {
		if s < 0 && (symSizes == nil || symSizes[i].Expr == nil) {
			return m, pathErrf(indexPath(o.sub("sizes"), i), "negative size %d", s)
		}
	}
	static := m.Sizes
	if symSizes != nil { // a symbolic size counts as 1: its bound is its range's
		static = slices.Clone(m.Sizes)
		for i := range static {
			if symSizes[i].Expr != nil {
				static[i] = 1
			}
		}
	}
	if _, err := tensor.ShapeInts(static); err != nil { // element count overflows
		return m, pathErr(o.sub("sizes"), err)
	}
	if v := o.get("requires_grad"); v != nil {
		if m.RequiresGrad, err = decodeBool(v, o.sub("requires_grad")); err != nil {
			return m, err
		}
	}
	m.DeviceType = "cpu"
	if v := o.get("device"); v != nil {
		if m.DeviceType, m.DeviceIndex, err = decodeDevice(v, o.sub("device")); err != nil {
			return m, err
		}
	}
	// strides is required, as every TensorMeta field is (pt2-json.md 3.7):
	// torch's deserializer builds TensorMeta(**data), which raises on a
	// missing field, and one stride per size is what the writer emits, so
	// an accepted meta writes back as it was read.
	st, err := o.req("strides")
	if err != nil {
		return m, err
	}
	if m.Strides, symStrides, err = decodeSymInts(st, o.sub("strides")); err != nil {
		return m, err
	}
	if symSizes != nil || symStrides != nil {
		m.Sym = &symMeta{Sizes: symSizes, Strides: symStrides}
	}
	if len(m.Strides) != len(m.Sizes) {
		return m, pathErrf(o.sub("strides"), "want one stride per size (%d), got %d", len(m.Sizes), len(m.Strides))
	}
	if v := o.get("storage_offset"); v != nil {
		// a plain int in very old schemas, a SymInt since; an object (the
		// usual case) skips decodeInt and the error it would build
		var n int64
		err := errNotPlainInt
		if b := trimJSONSpace(v); len(b) == 0 || b[0] != '{' {
			n, err = decodeInt(v, "")
		}
		if err == nil {
			m.StorageOffset = n
		} else {
			var so *symInt
			if m.StorageOffset, so, err = decodeSymInt(v, o.sub("storage_offset")); err != nil {
				return m, err
			}
			if so != nil {
				if m.Sym == nil {
					m.Sym = &symMeta{}
				}
				m.Sym.Offset = so
			}
		}
	}
	m.Layout = int64(ops.LayoutStrided)
	if v := o.get("layout"); v != nil {
		if m.Layout, err = decodeInt(v, o.sub("layout")); err != nil {
			return m, err
		}
		if m.Layout < 0 || m.Layout > int64(ops.LayoutStrided) {
			return m, pathErrf(o.sub("layout"), "unknown Layout %d", m.Layout)
		}
		if m.Layout != int64(ops.LayoutStrided) {
			return m, pathErr(o.sub("layout"), fmt.Errorf("%w: layout %s (only torch.strided)", ErrUnsupported, ops.Layout(m.Layout)))
		}
	}
	return m, nil
}

func decodeDevice(raw json.RawMessage, path string) (string, *int64, error) {
	o, err := decodeObject(raw, path)
	if err != nil {
		return "", nil, err
	}
	tv, err := o.req("type")
	if err != nil {
		return "", nil, err
	}
	typ, err := decodeString(tv, o.sub("type"))
	if err != nil {
		return "", nil, err
	}
	var idx *int64
	if v := o.get("index"); v != nil {
		n, err := decodeInt(v, o.sub("index"))
		if err != nil {
			return "", nil, err
		}
		idx = &n
	}
	return typ, idx, nil
}

func deviceValue(typ string, idx *int64) ops.Device {
	if idx == nil {
		return ops.Device(typ)
	}
	return ops.Device(typ + ":" + strconv.FormatInt(*idx, 10))
}

func splitDevice(d ops.Device) (string, *int64) {
	typ, idx, ok := strings.Cut(string(d), ":")
	if !ok {
		return typ, nil
	}
	n, err := strconv.ParseInt(idx, 10, 64)
	if err != nil {
		return string(d), nil
	}
	return typ, &n
}

func (w *pyWriter) tensorMeta(m tensorMeta) {
	if m.Sym == nil {
		w.staticMeta(m.DType, m.Sizes, m.Strides, m.StorageOffset, m.RequiresGrad, m.DeviceType, m.DeviceIndex, m.Layout)
		return
	}
	w.beginObject()
	w.keyLit("dtype")
	w.int(int64(m.DType.SerdeCode()))
	w.keyLit("sizes")
	w.symInts(m.Sizes, m.Sym.Sizes)
	w.keyLit("requires_grad")
	w.bool(m.RequiresGrad)
	w.keyLit("device")
	w.device(m.DeviceType, m.DeviceIndex)
	w.keyLit("strides")
	w.symInts(m.Strides, m.Sym.Strides)
	w.keyLit("storage_offset")
	w.writeSymInt(m.Sym.Offset, m.StorageOffset)
	w.keyLit("layout")
	w.int(m.Layout)
	w.endObject()
}

// staticMeta writes a TensorMeta whose sizes, strides and offset are all
// ints, as tensorMeta writes it.
func (w *pyWriter) staticMeta(d tensor.DType, sizes, strides []int64, offset int64, requiresGrad bool, devType string, devIdx *int64, layout int64) {
	// the keys are plain ASCII: appended as literals
	w.valuePrefix()
	b := append(w.b, `{"dtype": `...)
	b = strconv.AppendInt(b, int64(d.SerdeCode()), 10)
	b = appendAsInts(append(b, `, "sizes": `...), sizes)
	b = strconv.AppendBool(append(b, `, "requires_grad": `...), requiresGrad)
	b = appendDevice(append(b, `, "device": `...), devType, devIdx)
	b = appendAsInts(append(b, `, "strides": `...), strides)
	b = append(strconv.AppendInt(append(b, `, "storage_offset": {"as_int": `...), offset, 10), '}')
	b = append(strconv.AppendInt(append(b, `, "layout": `...), layout, 10), '}')
	w.b = b
}

// appendAsInts appends the list [{"as_int": v0}, {"as_int": v1}, ...].
func appendAsInts(b []byte, v []int64) []byte {
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(strconv.AppendInt(append(b, `{"as_int": `...), x, 10), '}')
	}
	return append(b, ']')
}

// contiguousStrides sets dst to the contiguous strides of shape (a size
// below 1 counting as 1), reusing its storage.
func contiguousStrides(dst, shape []int64) []int64 {
	dst = slices.Grow(dst[:0], len(shape))[:len(shape)]
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		dst[i] = acc
		acc *= max(shape[i], 1)
	}
	return dst
}

// device writes the Device {"type": typ, "index": idx}.
func (w *pyWriter) device(typ string, idx *int64) {
	w.valuePrefix()
	w.b = appendDevice(w.b, typ, idx)
}

// appendDevice appends the Device {"type": typ, "index": idx}.
func appendDevice(b []byte, typ string, idx *int64) []byte {
	b = fxgraph.AppendPyJSONString(append(b, `{"type": `...), typ)
	if idx == nil {
		return append(b, `, "index": null}`...)
	}
	return append(strconv.AppendInt(append(b, `, "index": `...), *idx, 10), '}')
}

// symInts writes a list of SymInts: v's ints, or the expressions of syms
// (by position) where it has one.
func (w *pyWriter) symInts(v []int64, syms []symInt) {
	w.beginArray()
	for i, s := range v {
		if i < len(syms) && syms[i].Expr != nil {
			w.writeSymInt(&syms[i], 0)
		} else {
			w.writeSymInt(nil, s)
		}
	}
	w.endArray()
}

// --- node metadata --------------------------------------------------------

// extraPrefix marks Meta.Extra entries that hold serialized metadata keys
// fxquant gives no meaning to; the writer emits them back.
const extraPrefix = "pt2.metadata."

// splitTopLevel splits s on sep at bracket depth 0 ( "()[]{}<>" are not
// all brackets in PyTorch's splitter: only () and [] count).
func splitTopLevel(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			if depth > 0 {
				depth--
			}
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func parseModuleStack(s string) ([]fxgraph.ModuleStackEntry, bool) {
	var out []fxgraph.ModuleStackEntry
	for _, item := range strings.Split(s, ";") {
		p := splitTopLevel(item, ',')
		if len(p) != 3 {
			return nil, false
		}
		out = append(out, fxgraph.ModuleStackEntry{Key: p[0], Path: p[1], Type: p[2]})
	}
	// the text must be the one the writer gives back
	return out, string(appendModuleStack(make([]byte, 0, len(s)), out)) == s
}

// appendModuleStack appends the nn_module_stack text of st:
// "key,path,type" entries joined by ';'.
func appendModuleStack(b []byte, st []fxgraph.ModuleStackEntry) []byte {
	for i, e := range st {
		if i > 0 {
			b = append(b, ';')
		}
		b = append(append(append(append(append(b, e.Key...), ','), e.Path...), ','), e.Type...)
	}
	return b
}

func parseSourceFnStack(s string) ([]fxgraph.SourceFn, bool) {
	var out []fxgraph.SourceFn
	for _, item := range strings.Split(s, ";") {
		p := splitTopLevel(item, ',')
		if len(p) != 2 {
			return nil, false
		}
		out = append(out, fxgraph.SourceFn{Name: p[0], Target: p[1]})
	}
	// the text must be the one the writer gives back
	return out, string(appendSourceFnStack(make([]byte, 0, len(s)), out)) == s
}

// appendSourceFnStack appends the source_fn_stack text of st:
// "name,target" entries joined by ';'.
func appendSourceFnStack(b []byte, st []fxgraph.SourceFn) []byte {
	for i, e := range st {
		if i > 0 {
			b = append(b, ';')
		}
		b = append(append(append(b, e.Name...), ','), e.Target...)
	}
	return b
}

// metaFromSerialized turns a node's metadata strings into fxgraph.Meta.
// Keys that do not parse, and unknown keys, are kept verbatim in Extra
// under "pt2.metadata.<key>".
func metaFromSerialized(entries []kv, path string) (fxgraph.Meta, error) {
	var m fxgraph.Meta
	for _, e := range entries {
		s, err := decodeString(e.Val, keyPath(path, e.Key))
		if err != nil {
			return m, err
		}
		ok := true
		switch e.Key {
		case "stack_trace":
			m.StackTrace = s
		case "nn_module_stack":
			m.NNModuleStack, ok = parseModuleStack(s)
		case "source_fn_stack":
			m.SourceFnStack, ok = parseSourceFnStack(s)
		case "torch_fn":
			m.TorchFn = strings.Split(s, ";")
			ok = len(m.TorchFn) == 2
		case "custom":
			m.Custom = s
			m.NumericDebugHandle = customHandle(s)
		case "from_node":
			m.FromNode = s
		default:
			ok = false
		}
		if !ok {
			switch e.Key {
			case "nn_module_stack":
				m.NNModuleStack = nil
			case "source_fn_stack":
				m.SourceFnStack = nil
			case "torch_fn":
				m.TorchFn = nil
			}
			m.Set(extraPrefix+e.Key, s)
		}
	}
	return m, nil
}

// writeMetaEntries writes the metadata entries of m as torch.export
// serializes them, in PyTorch's order, each a key and a string: the known
// fields (from Meta.Extra's "pt2.metadata.<key>" text where a field did
// not parse), then the other kept keys in sorted order. Stacks are
// formatted in the writer's scratch space.
func writeMetaEntries(w *pyWriter, m *fxgraph.Meta) {
	add := func(k, v string) {
		if v != "" {
			w.key(k)
			w.str(v)
		}
	}
	extra := func(k string) string {
		if v, ok := m.Extra[extraPrefix+k].(string); ok {
			return v
		}
		return ""
	}
	add("stack_trace", m.StackTrace)
	if len(m.NNModuleStack) > 0 {
		w.scratch = appendModuleStack(w.scratch[:0], m.NNModuleStack)
		w.keyLit("nn_module_stack")
		w.strBytes(w.scratch)
	} else if len(m.Extra) > 0 {
		add("nn_module_stack", extra("nn_module_stack"))
	}
	if len(m.SourceFnStack) > 0 {
		w.scratch = appendSourceFnStack(w.scratch[:0], m.SourceFnStack)
		w.keyLit("source_fn_stack")
		w.strBytes(w.scratch)
	} else if len(m.Extra) > 0 {
		add("source_fn_stack", extra("source_fn_stack"))
	}
	if len(m.TorchFn) > 0 {
		add("torch_fn", strings.Join(m.TorchFn, ";"))
	} else if len(m.Extra) > 0 {
		add("torch_fn", extra("torch_fn"))
	}
	add("custom", withCustomHandle(m.Custom, m.NumericDebugHandle))
	add("from_node", m.FromNode)
	if len(m.Extra) == 0 {
		return
	}
	for _, k := range m.ExtraKeys() {
		name, ok := strings.CutPrefix(k, extraPrefix)
		if !ok {
			continue
		}
		switch name {
		case "stack_trace", "nn_module_stack", "source_fn_stack", "torch_fn", "custom", "from_node":
			continue
		}
		if v, ok := m.Extra[k].(string); ok {
			w.key(name)
			w.str(v)
		}
	}
}
