package pt2

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// ReadJSON decodes a bare ExportedProgram JSON document (the content of
// models/<name>.json). The program has no weights: its parameters,
// buffers and constants have no attribute in the graph.
func ReadJSON(data []byte, opts *Options) (*Program, error) {
	if err := checkJSONSize(len(data), opts); err != nil {
		return nil, fmt.Errorf("pt2: read json: %w", err)
	}
	p := newProgram(ContainerJSON)
	// The program keeps slices of the document (its pass-through
	// fields): they must not alias the caller's bytes.
	if err := p.decode(bytes.Clone(data), opts); err != nil {
		return nil, fmt.Errorf("pt2: read json: %w", err)
	}
	return p, nil
}

func newProgram(c Container) *Program {
	return &Program{Container: c, Tensors: map[string]TensorInfo{}, ModelName: "model", ArchiveRoot: "archive"}
}

// decode fills p from an ExportedProgram JSON document: in fast mode
// (see readpath.go) when the document is valid JSON, and, when that
// fails, again from p's original state in checked mode, whose error
// (with its field path) is returned.
func (p *Program) decode(data []byte, opts *Options) error {
	if ix, ok := validIndexed(data, true); ok {
		saved := *p
		if p.decodeAt(data, opts, fastPath, ix) == nil {
			return nil
		}
		*p = saved
	}
	return p.decodeAt(data, opts, "", nil)
}

// decodeAt decodes the document with root as the path of its top level:
// fastPath for fast mode, "" for checked mode; ix indexes the document's
// large containers in fast mode.
func (p *Program) decodeAt(data []byte, opts *Options, root string, ix bigIndex) error {
	top, err := decodeObjectIx(data, root, ix)
	if err != nil {
		return err
	}
	svRaw, err := top.req("schema_version")
	if err != nil {
		return err
	}
	if p.SchemaVersion, err = decodeVersion(svRaw, subPath(root, "schema_version")); err != nil {
		return err
	}
	if err := checkVersion(p.SchemaVersion, opts); err != nil {
		return pathErr(subPath(root, "schema_version"), err)
	}
	gmRaw, err := top.req("graph_module")
	if err != nil {
		return err
	}
	if p.OpsetVersion, err = top.req("opset_version"); err != nil {
		return err
	}
	if p.RangeConstraints, err = top.req("range_constraints"); err != nil {
		return err
	}
	if v := top.get("verifiers"); v != nil {
		if p.Verifiers, err = decodeStrings(v, subPath(root, "verifiers")); err != nil {
			return err
		}
	} else if v := top.get("dialect"); v != nil {
		d, err := decodeString(v, subPath(root, "dialect"))
		if err != nil {
			return err
		}
		p.Verifiers = []string{d}
	}
	p.TorchVersion = "<=2.4"
	if v := top.get("torch_version"); v != nil {
		if p.TorchVersion, err = decodeString(v, subPath(root, "torch_version")); err != nil {
			return err
		}
	}
	if v := top.get("guards_code"); v != nil {
		if p.GuardsCode, err = decodeStrings(v, subPath(root, "guards_code")); err != nil {
			return err
		}
	}
	gm, err := decodeObjectIx(gmRaw, subPath(root, "graph_module"), ix)
	if err != nil {
		return err
	}
	sigRaw, err := gm.req("signature")
	if err != nil {
		return err
	}
	graphRaw, err := gm.req("graph")
	if err != nil {
		return err
	}
	if p.ModuleCallGraph, err = gm.req("module_call_graph"); err != nil {
		return err
	}
	p.GraphModuleMetadata = gm.get("metadata")
	p.TreespecNamedtupleFields = gm.get("treespec_namedtuple_fields")
	if err := p.decodeSignature(sigRaw, gm.sub("signature"), ix); err != nil {
		return err
	}
	b := &builder{p: p, reg: opts.registry(), opaque: opts != nil && opts.AllowOpaque, g: fxgraph.New(),
		defined: map[string]*fxgraph.Node{}, metas: map[string]tensorMeta{}, syms: map[string]bool{}, ix: ix}
	if err := b.graph(graphRaw, gm.sub("graph")); err != nil {
		return err
	}
	p.Graph = b.g
	p.metas = b.metas
	return nil
}

func decodeVersion(raw json.RawMessage, path string) (Version, error) {
	var v Version
	if n, err := decodeInt(raw, path); err == nil { // very old: a plain int
		return Version{Major: n}, nil
	}
	o, err := decodeObject(raw, path)
	if err != nil {
		return v, err
	}
	mr, err := o.req("major")
	if err != nil {
		return v, err
	}
	if v.Major, err = decodeInt(mr, o.sub("major")); err != nil {
		return v, err
	}
	if m := o.get("minor"); m != nil {
		if v.Minor, err = decodeInt(m, o.sub("minor")); err != nil {
			return v, err
		}
	}
	return v, nil
}

// checkVersion accepts major 8 with any minor, and 0.0 as PyTorch does.
func checkVersion(v Version, opts *Options) error {
	if v.Major == WriteVersion.Major || (v.Major == 0 && v.Minor == 0) || (opts != nil && opts.SkipVersionCheck) {
		return nil
	}
	return fmt.Errorf("%w: serialized schema version %s does not match supported version %d.x (written as %s)",
		ErrSchemaVersion, v, WriteVersion.Major, WriteVersion)
}

func decodeStrings(raw json.RawMessage, path string) ([]string, error) {
	return decodeEach(raw, path, decodeString)
}

// decodeNameArg decodes a bare TensorArgument {"name": ...}.
func decodeNameArg(raw json.RawMessage, path string) (string, error) {
	if path == fastPath {
		if s, ok := fastNameArg(raw); ok {
			return string(s), nil
		}
	}
	o, err := decodeObject(raw, path)
	if err != nil {
		return "", err
	}
	return o.reqString("name")
}

func (p *Program) decodeSignature(raw json.RawMessage, path string, ix bigIndex) error {
	o, err := decodeObjectIx(raw, path, ix)
	if err != nil {
		return err
	}
	inRaw, err := o.req("input_specs")
	if err != nil {
		return err
	}
	outRaw, err := o.req("output_specs")
	if err != nil {
		return err
	}
	ins, err := decodeEachIx(inRaw, o.sub("input_specs"), ix, decodeInputSpec)
	if err != nil {
		return err
	}
	p.Signature.Inputs = append(p.Signature.Inputs, ins...)
	outs, err := decodeEachIx(outRaw, o.sub("output_specs"), ix, decodeOutputSpec)
	if err != nil {
		return err
	}
	p.Signature.Outputs = append(p.Signature.Outputs, outs...)
	return nil
}

func decodeInputSpec(raw json.RawMessage, path string) (InputSpec, error) {
	var s InputSpec
	tag, o, err := taggedObject(raw, path)
	if err != nil {
		return s, err
	}
	path = o.path
	switch tag {
	case "user_input":
		s.Kind = UserInput
		atag, av, ap, err := userSpecArg(o)
		if err != nil {
			return s, err
		}
		switch atag {
		case "as_tensor", "as_sym_int", "as_sym_float", "as_sym_bool":
			if s.Name, err = decodeValueName(atag, av, ap); err != nil {
				return s, err
			}
		case "as_custom_obj":
			return s, pathErr(o.sub("arg"), fmt.Errorf("%w: custom object input", ErrUnsupported))
		default:
			c, err := decodeConstant(atag, av, ap)
			if err != nil {
				return s, err
			}
			s.Const, s.IsConst = c, true
		}
	case "parameter", "buffer", "tensor_constant":
		named := inputSpecTargets[tag]
		s.Kind = named.kind
		if s.Name, s.Target, err = specArgTarget(o, named.key); err != nil {
			return s, err
		}
		if tag == "buffer" {
			s.Persistent = true
			if r := o.get("persistent"); r != nil {
				if s.Persistent, err = decodeBool(r, o.sub("persistent")); err != nil {
					return s, err
				}
			}
		}
	case "constant_input":
		s.Kind = ConstantInput
		if s.Name, err = o.reqString("name"); err != nil {
			return s, err
		}
		r, err := o.req("value")
		if err != nil {
			return s, err
		}
		ctag, cv, err := union(r, o.sub("value"))
		if err != nil {
			return s, err
		}
		if s.Const, err = decodeConstant(ctag, cv, dotPath(o.sub("value"), ctag)); err != nil {
			return s, err
		}
		s.IsConst = true
	case "custom_obj", "token":
		return s, pathErr(path, fmt.Errorf("%w: %s input spec", ErrUnsupported, tag))
	default:
		return s, pathErrf(path, "unknown InputSpec tag %q", tag)
	}
	return s, nil
}

// taggedObject decodes a union whose value is an object, as the spec
// variants are; the object's path ends in the tag.
func taggedObject(raw json.RawMessage, path string) (string, *object, error) {
	tag, v, err := union(raw, path)
	if err != nil {
		return "", nil, err
	}
	o, err := decodeObject(v, dotPath(path, tag))
	if err != nil {
		return "", nil, err
	}
	return tag, o, nil
}

// userSpecArg decodes the "arg" Argument union of a user_input or
// user_output spec: its tag, its value and the value's path.
func userSpecArg(o *object) (tag string, v json.RawMessage, path string, err error) {
	r, err := o.req("arg")
	if err != nil {
		return "", nil, "", err
	}
	if tag, v, err = union(r, o.sub("arg")); err != nil {
		return "", nil, "", err
	}
	return tag, v, dotPath(o.sub("arg"), tag), nil
}

// inputSpecTargets holds, for each InputSpec tag that names a module
// attribute, its kind and the field holding the attribute's name.
var inputSpecTargets = map[string]struct {
	kind InputKind
	key  string
}{
	"parameter":       {Parameter, "parameter_name"},
	"buffer":          {Buffer, "buffer_name"},
	"tensor_constant": {TensorConstant, "tensor_constant_name"},
}

// outputSpecTargets holds, for each OutputSpec tag whose arg is a bare
// TensorArgument, its kind and the field naming what it mutates (empty
// for loss_output, which names nothing).
var outputSpecTargets = map[string]struct {
	kind OutputKind
	key  string
}{
	"buffer_mutation":     {BufferMutation, "buffer_name"},
	"user_input_mutation": {UserInputMutation, "user_input_name"},
	"parameter_mutation":  {ParameterMutation, "parameter_name"},
	"loss_output":         {LossOutput, ""},
}

// specArgTarget decodes a spec object's "arg", a bare TensorArgument, and
// then, when key is not empty, the string field key naming its target.
func specArgTarget(o *object, key string) (name, target string, err error) {
	r, err := o.req("arg")
	if err != nil {
		return "", "", err
	}
	if name, err = decodeNameArg(r, o.sub("arg")); err != nil || key == "" {
		return name, "", err
	}
	target, err = o.reqString(key)
	return name, target, err
}

// decodeValueName decodes the name of an as_tensor or as_sym_* argument
// whose union value is v; path ends in the tag.
func decodeValueName(tag string, v json.RawMessage, path string) (string, error) {
	if tag == "as_tensor" {
		return decodeNameArg(v, path)
	}
	return decodeSymName(v, path)
}

func decodeSymName(raw json.RawMessage, path string) (string, error) {
	tag, v, err := union(raw, path)
	if err != nil {
		return "", err
	}
	if tag != "as_name" {
		return "", pathErrf(path, "want a symbol name (as_name), got %q", tag)
	}
	return decodeString(v, dotPath(path, "as_name"))
}

// decodeConstant decodes a constant argument or ConstantValue.
func decodeConstant(tag string, v json.RawMessage, path string) (ops.Value, error) {
	switch tag {
	case "as_none":
		return nil, nil
	case "as_int":
		return decodeInt(v, path)
	case "as_float":
		return decodeFloat(v, path)
	case "as_bool":
		return decodeBool(v, path)
	case "as_string":
		return decodeString(v, path)
	}
	return nil, pathErrf(path, "want a constant (as_none, as_int, as_float, as_bool or as_string), got %q", tag)
}

func decodeOutputSpec(raw json.RawMessage, path string) (OutputSpec, error) {
	var s OutputSpec
	tag, o, err := taggedObject(raw, path)
	if err != nil {
		return s, err
	}
	path = o.path
	switch tag {
	case "user_output":
		s.Kind = UserOutput
		atag, av, ap, err := userSpecArg(o)
		if err != nil {
			return s, err
		}
		switch atag {
		case "as_tensor", "as_sym_int", "as_sym_float", "as_sym_bool":
			s.Name, err = decodeValueName(atag, av, ap)
		default:
			_, err = decodeConstant(atag, av, ap)
		}
		if err != nil {
			return s, err
		}
	case "buffer_mutation", "user_input_mutation", "parameter_mutation", "loss_output":
		named := outputSpecTargets[tag]
		s.Kind = named.kind
		if s.Name, s.Target, err = specArgTarget(o, named.key); err != nil {
			return s, err
		}
	case "gradient_to_parameter", "gradient_to_user_input", "token":
		return s, pathErr(path, fmt.Errorf("%w: %s output spec", ErrUnsupported, tag))
	default:
		return s, pathErrf(path, "unknown OutputSpec tag %q", tag)
	}
	return s, nil
}

// --- graph building --------------------------------------------------------

type builder struct {
	p       *Program
	reg     *ops.Registry
	opaque  bool
	g       *fxgraph.Graph
	defined map[string]*fxgraph.Node // serialized name -> node
	metas   map[string]tensorMeta
	syms    map[string]bool
	strs    map[string]string // interned strings (fast mode)
	ix      bigIndex          // the document's large containers (fast mode)
	targets map[string]parsedTarget
	nodeKV  []kv // the entries of the node being read (fast mode)
}

// parsedTarget is a node target string parsed: the operator, and whether
// it is a registered higher-order operator.
type parsedTarget struct {
	target ops.Overload
	hop    bool
}

// str is decodeString, interning a plain string in fast mode.
func (b *builder) str(raw json.RawMessage, path string) (string, error) {
	if path == fastPath {
		if bs, ok := (&cursor{b: raw}).str(); ok {
			return b.intern(bs), nil
		}
	}
	return decodeString(raw, path)
}

// opaqueInfo is what the writer needs to serialize a node whose operator
// has no schema: argument names (args then kwargs) and the tags of empty
// list arguments.
type opaqueArg struct {
	Name     string
	EmptyTag string
}

func (b *builder) graph(raw json.RawMessage, path string) error {
	o, err := decodeObjectIx(raw, path, b.ix)
	if err != nil {
		return err
	}
	for _, key := range []string{"inputs", "outputs", "nodes", "tensor_values", "sym_int_values", "sym_bool_values"} {
		if _, err := o.req(key); err != nil {
			return err
		}
	}
	// in fast mode the (many) tensor_values keys are checked for
	// duplicates by the metas table they fill, not by a set of their own
	var tvs []kv
	dupCheck := true
	if o.path == fastPath {
		if e, ok := splitObjectInto(o.get("tensor_values"), b.ix, nil, false); ok {
			tvs, dupCheck = e, false
		}
	}
	if dupCheck {
		if tvs, err = objectEntriesIx(o.get("tensor_values"), o.sub("tensor_values"), b.ix); err != nil {
			return err
		}
	}
	before := len(b.metas)
	var symbolic []namedMeta
	if len(b.metas) == 0 && len(b.defined) == 0 { // sized for the program
		b.metas = make(map[string]tensorMeta, len(tvs))
		b.defined = make(map[string]*fxgraph.Node, len(tvs))
	}
	for _, e := range tvs {
		m, err := decodeTensorMeta(e.Val, keyPath(o.sub("tensor_values"), e.Key))
		if err != nil {
			return err
		}
		b.metas[e.Key] = m
		if m.Sym != nil {
			symbolic = append(symbolic, namedMeta{e.Key, m})
		}
	}
	if !dupCheck && len(b.metas)-before != len(tvs) {
		return pathErr(o.path, errors.New("duplicate key in tensor_values"))
	}
	syms, err := decodeSymIntValues(o.get("sym_int_values"), o.sub("sym_int_values"))
	if err != nil {
		return err
	}
	for _, e := range syms {
		b.syms[e.Name] = true
	}
	if len(syms) > 0 {
		b.p.SymIntValues = o.get("sym_int_values")
	}
	if err := b.symbols(symbolic, syms); err != nil {
		return err
	}
	for _, key := range []string{"sym_bool_values", "sym_float_values", "custom_obj_values"} {
		if v := o.get(key); v != nil {
			e, err := objectEntries(v, o.sub(key))
			if err != nil {
				return err
			}
			if len(e) > 0 {
				return pathErr(o.sub(key), fmt.Errorf("%w: %d entries (symbolic bools/floats and custom objects)", ErrUnsupported, len(e)))
			}
		}
	}
	single := false
	if v := o.get("is_single_tensor_return"); v != nil {
		if single, err = decodeBool(v, o.sub("is_single_tensor_return")); err != nil {
			return err
		}
	}
	if err := b.inputs(o.get("inputs"), o.sub("inputs")); err != nil {
		return err
	}
	nodes, err := decodeArrayIx(o.get("nodes"), o.sub("nodes"), b.ix)
	if err != nil {
		return err
	}
	for i, nr := range nodes {
		if err := b.node(nr, indexPath(o.sub("nodes"), i)); err != nil {
			return err
		}
	}
	if err := b.outputs(o.get("outputs"), o.sub("outputs"), single); err != nil {
		return err
	}
	b.canonicalNames()
	return nil
}

// canonicalNames rewrites signature names and the tensor-meta table from
// serialized names to node names, which differ when FX's namespace had to
// rename a value (a tensor called "input" becomes node "input_1"), and
// records the serialized names for the writer.
func (b *builder) canonicalNames() {
	for ser, n := range b.defined {
		if n.Name() != ser {
			if b.p.serialNames == nil {
				b.p.serialNames = map[string]string{}
			}
			b.p.serialNames[n.Name()] = ser
		}
	}
	for i, s := range b.p.Signature.Inputs {
		if n, ok := b.defined[s.Name]; ok {
			b.p.Signature.Inputs[i].Name = n.Name()
		}
	}
	for i, s := range b.p.Signature.Outputs {
		if n, ok := b.defined[s.Name]; ok {
			b.p.Signature.Outputs[i].Name = n.Name()
		}
	}
	if b.p.symVals != nil {
		b.p.symVals = byNodeName(b.p.symVals, b.defined)
	}
	if b.p.serialNames != nil || !allDefined(b.metas, b.defined) {
		b.metas = byNodeName(b.metas, b.defined)
	} // else byNodeName would copy b.metas as it is
}

// allDefined reports whether every key of m names a defined node.
func allDefined[V any](m map[string]V, defined map[string]*fxgraph.Node) bool {
	for name := range m {
		if _, ok := defined[name]; !ok {
			return false
		}
	}
	return true
}

// byNodeName re-keys m, keyed by serialized names, by the names of the
// nodes defined under them; entries of no defined node are dropped.
func byNodeName[V any](m map[string]V, defined map[string]*fxgraph.Node) map[string]V {
	out := make(map[string]V, len(m))
	for name, v := range m {
		if n, ok := defined[name]; ok {
			out[n.Name()] = v
		}
	}
	return out
}

func (b *builder) define(name string, n *fxgraph.Node, path string) error {
	if _, dup := b.defined[name]; dup {
		return pathErrf(path, "name %q is defined twice", name)
	}
	b.defined[name] = n
	return nil
}

// symTypeNames maps each symbolic scalar tag to its Python type name.
var symTypeNames = map[string]string{"as_sym_int": "SymInt", "as_sym_bool": "SymBool", "as_sym_float": "SymFloat"}

// namedValue decodes the name of an as_tensor or as_sym_* value v (path
// ends in the tag) and gives its type: the tensor_values entry for a
// tensor, the symbolic scalar type otherwise.
func (b *builder) namedValue(tag string, v json.RawMessage, path string) (string, ops.Type, error) {
	name, err := decodeValueName(tag, v, path)
	if err != nil {
		return "", nil, err
	}
	if tag != "as_tensor" {
		return name, ops.PyType{Name: symTypeNames[tag]}, nil
	}
	tt, err := b.tensorType(name, path)
	if err != nil {
		return "", nil, err
	}
	return name, tt, nil
}

// tensorType returns the type recorded in tensor_values for name.
func (b *builder) tensorType(name, path string) (ops.TensorType, error) {
	m, ok := b.metas[name]
	if !ok {
		return ops.TensorType{}, pathErr(path, fmt.Errorf("%w: tensor %q has no entry in graph.tensor_values", ErrDangling, name))
	}
	return m.typ(), nil
}

func (b *builder) inputs(raw json.RawMessage, path string) error {
	items, err := decodeArray(raw, path)
	if err != nil {
		return err
	}
	specs := b.p.Signature.Inputs
	if len(items) != len(specs) {
		return pathErrf(path, "%d graph inputs but %d input specs in graph_module.signature.input_specs", len(items), len(specs))
	}
	for i, r := range items {
		ip := indexPath(path, i)
		tag, v, err := union(r, ip)
		if err != nil {
			return err
		}
		ip = dotPath(ip, tag)
		spec := specs[i]
		var name string
		var typ ops.Type
		switch tag {
		case "as_tensor", "as_sym_int":
			if name, typ, err = b.namedValue(tag, v, ip); err != nil {
				return err
			}
		case "as_custom_obj", "as_token":
			return pathErr(ip, fmt.Errorf("%w: %s graph input", ErrUnsupported, tag))
		default:
			c, err := decodeConstant(tag, v, ip)
			if err != nil {
				return err
			}
			if !spec.IsConst {
				return pathErrf(ip, "constant graph input but input spec %d is %s %q", i, spec.Kind, spec.Name)
			}
			if !ops.LiteralEqual(c, spec.Const) {
				return pathErrf(ip, "constant %v differs from its input spec's %v", c, spec.Const)
			}
			name = spec.Name
			if name == "" {
				name = fmt.Sprintf("arg%d", i)
				specs[i].Name = name
			}
			typ = ops.PyType{Name: pyTypeName(c)}
		}
		if spec.Name != name {
			return pathErrf(ip, "graph input %q does not match input spec %d (%s %q)", name, i, spec.Kind, spec.Name)
		}
		n := b.g.Placeholder(name, typ)
		if err := b.define(name, n, ip); err != nil {
			return err
		}
	}
	return nil
}

func pyTypeName(v ops.Value) string {
	switch v.(type) {
	case nil:
		return "None"
	case int64:
		return "int"
	case float64:
		return "float"
	case bool:
		return "bool"
	case string:
		return "str"
	}
	return "object"
}

// hopOverload maps a higher-order operator's serialized name,
// torch.ops.higher_order.<name> (a HigherOrderOperator has no overloads),
// to the registry's higher_order.<name>.default, when reg knows it.
func hopOverload(s string, reg *ops.Registry) (ops.Overload, bool) {
	name, ok := strings.CutPrefix(s, "torch.ops.higher_order.")
	if !ok || reg == nil {
		return ops.Overload{}, false
	}
	t, err := ops.ParseTarget("higher_order." + name + ".default")
	if err != nil {
		return ops.Overload{}, false
	}
	o, ok := t.(ops.Overload)
	if !ok {
		return ops.Overload{}, false
	}
	_, known := reg.Schema(o)
	return o, known
}

// isHOP reports whether o is a higher-order operator (higher_order.*),
// whose inputs PyTorch serializes without a schema: positionals with an
// empty name, keywords by name.
func isHOP(o ops.Overload) bool { return o.Packet.NS == "higher_order" }

// operatorArg decodes an as_operator argument, an operator passed as a
// value (out_dtype's op), written as GraphModuleSerializer.serialize_operator
// writes it: torch.ops.<ns>.<op>.<overload> for an OpOverload, or
// torch.ops.higher_order.<name> for a registered higher-order operator.
func (b *builder) operatorArg(raw json.RawMessage, path string) (ops.Value, error) {
	s, err := decodeString(raw, path)
	if err != nil {
		return nil, err
	}
	if o, ok := hopOverload(s, b.reg); ok {
		return o, nil
	}
	if !strings.HasPrefix(s, "torch.ops.") || strings.HasPrefix(s, "torch.ops.higher_order.") {
		return nil, pathErrf(path, "operator %q: want torch.ops.<ns>.<op>.<overload>", s)
	}
	t, err := ops.ParseTarget(s)
	if err != nil {
		return nil, pathErrf(path, "bad operator %q: want torch.ops.<ns>.<op>.<overload>", s)
	}
	o, ok := t.(ops.Overload)
	if !ok {
		return nil, pathErrf(path, "operator %q has no overload segment (want e.g. %q)", s, s+".default")
	}
	return o, nil
}

// parseTarget turns a serialized target string into an overload.
func parseTarget(s, path string) (ops.Overload, error) {
	switch {
	case strings.HasPrefix(s, "torch.ops.higher_order."):
		return ops.Overload{}, pathErr(path, fmt.Errorf("%w: higher-order operator %q (control flow)", ErrUnsupported, s))
	case strings.HasPrefix(s, "#"):
		return ops.Overload{}, pathErr(path, fmt.Errorf("%w: extension operator %q", ErrUnsupported, s))
	case !strings.HasPrefix(s, "torch.ops."):
		return ops.Overload{}, pathErr(path, fmt.Errorf("%w: target %q is not a torch.ops operator (symbolic-scalar ops are not supported)", ErrUnsupported, s))
	}
	t, err := ops.ParseTarget(s)
	if err != nil {
		return ops.Overload{}, pathErrf(path, "bad target %q: want torch.ops.<ns>.<op>.<overload>", s)
	}
	switch v := t.(type) {
	case ops.Overload:
		return v, nil
	case ops.Packet:
		return ops.Overload{}, pathErrf(path, "target %q has no overload segment (want e.g. %q)", s, s+".default")
	}
	return ops.Overload{}, pathErrf(path, "bad target %q", s)
}

type namedInput struct {
	name string
	val  ops.Value
	kind int64 // 0 when absent
	tag  string
}

func (b *builder) node(raw json.RawMessage, path string) error {
	var o *object
	var err error
	if path == fastPath {
		// the node's object lives while the node is read: its entries
		// reuse one buffer
		if e, ok := splitObjectInto(raw, b.ix, b.nodeKV[:0], true); ok {
			b.nodeKV = e
			o = &object{path: path, entries: e}
		}
	}
	if o == nil {
		if o, err = decodeObjectIx(raw, path, b.ix); err != nil {
			return err
		}
	}
	tr, err := o.req("target")
	if err != nil {
		return err
	}
	ts, err := b.str(tr, o.sub("target"))
	if err != nil {
		return err
	}
	if op, ok := strings.CutPrefix(ts, "_operator."); ok {
		return b.symScalarNode(o, op)
	}
	pt, ok := b.targets[ts] // targets repeat: parse each once
	if !ok {
		pt.target, pt.hop = hopOverload(ts, b.reg)
		if !pt.hop {
			if pt.target, err = parseTarget(ts, o.sub("target")); err != nil {
				return err
			}
		}
		if b.targets == nil {
			b.targets = map[string]parsedTarget{}
		}
		b.targets[ts] = pt
	}
	target, hop := pt.target, pt.hop
	schema, known := b.reg.Schema(target)
	if !known && !b.opaque {
		return pathErr(o.sub("target"), fmt.Errorf("%w: %s is not in the op registry", ErrUnknownOp, target))
	}
	items, err := b.reqArray(o, "inputs")
	if err != nil {
		return err
	}
	ins := make([]namedInput, 0, len(items))
	for i, r := range items {
		ip := indexPath(o.sub("inputs"), i)
		if ip == fastPath {
			// the usual input object, read in one pass; the checks
			// below are the general code's
			if name, ar, kind, ok := b.fastInput(r); ok {
				in := namedInput{name: name, kind: kind}
				for _, prev := range ins {
					if prev.name == in.name && !(hop && in.name == "") {
						return pathErrf(ip, "argument %q given twice", in.name)
					}
				}
				if in.tag, in.val, err = b.argument(ar, ip); err != nil {
					return err
				}
				if in.kind < 0 || in.kind > 2 {
					return pathErrf(ip, "unknown ArgumentKind %d", in.kind)
				}
				ins = append(ins, in)
				continue
			}
		}
		io, err := decodeObject(r, ip)
		if err != nil {
			return err
		}
		var in namedInput
		if in.name, err = io.reqString("name"); err != nil {
			return err
		}
		for _, prev := range ins {
			if prev.name == in.name && !(hop && in.name == "") {
				return pathErrf(io.sub("name"), "argument %q given twice", in.name)
			}
		}
		ar, err := io.req("arg")
		if err != nil {
			return err
		}
		if in.tag, in.val, err = b.argument(ar, io.sub("arg")); err != nil {
			return err
		}
		if k := io.get("kind"); k != nil {
			if in.kind, err = decodeInt(k, io.sub("kind")); err != nil {
				return err
			}
			if in.kind < 0 || in.kind > 2 {
				return pathErrf(io.sub("kind"), "unknown ArgumentKind %d", in.kind)
			}
		}
		ins = append(ins, in)
	}
	var args []ops.Value
	var kwargs []ops.Kwarg
	var opaque []opaqueArg
	if hop {
		// deserialize_hoo_inputs: a named input is a keyword argument,
		// an unnamed one the next positional argument.
		args, kwargs = splitInputs(ins, func(in namedInput) bool { return in.name != "" })
	} else if known {
		if args, kwargs, err = bindSchema(schema, ins, o.sub("inputs")); err != nil {
			return err
		}
	} else {
		isKwarg := func(in namedInput) bool { return in.kind == 2 }
		args, kwargs = splitInputs(ins, isKwarg)
		// args first, then kwargs, as the node holds them
		for _, kw := range []bool{false, true} {
			for _, in := range ins {
				if isKwarg(in) == kw {
					opaque = append(opaque, opaqueArg{Name: in.name, EmptyTag: emptyTag(in)})
				}
			}
		}
	}
	meta, err := nodeMeta(o)
	if err != nil {
		return err
	}
	var nodeName string
	if v := o.get("name"); v != nil {
		if nodeName, err = decodeString(v, o.sub("name")); err != nil {
			return err
		}
	}
	outs, err := b.reqArray(o, "outputs")
	if err != nil {
		return err
	}
	return b.createNode(target, schema, args, kwargs, opaque, meta, nodeName, outs, o.sub("outputs"))
}

// reqArray is o.reqArray, splitting with b.ix in fast mode.
func (b *builder) reqArray(o *object, key string) ([]json.RawMessage, error) {
	r, err := o.req(key)
	if err != nil {
		return nil, err
	}
	return decodeArrayIx(r, o.sub(key), b.ix)
}

// nodeMeta reads a node's optional "metadata" entries.
func nodeMeta(o *object) (fxgraph.Meta, error) {
	mr := o.get("metadata")
	if mr == nil {
		return fxgraph.Meta{}, nil
	}
	entries, err := objectEntries(mr, o.sub("metadata"))
	if err != nil {
		return fxgraph.Meta{}, err
	}
	return metaFromSerialized(entries, o.sub("metadata"))
}

// splitInputs splits ins, in order, into positional arguments and the
// keyword arguments for which isKwarg holds.
func splitInputs(ins []namedInput, isKwarg func(namedInput) bool) ([]ops.Value, []ops.Kwarg) {
	var args []ops.Value
	var kwargs []ops.Kwarg
	for _, in := range ins {
		if isKwarg(in) {
			kwargs = append(kwargs, ops.Kwarg{Name: in.name, Value: in.val})
		} else {
			args = append(args, in.val)
		}
	}
	return args, kwargs
}

func emptyTag(in namedInput) string {
	if l, ok := in.val.(ops.List); ok && len(l) == 0 {
		return in.tag
	}
	return ""
}

// bindSchema follows torch.export's deserialize_inputs: schema order, the
// serialized kind decides positional vs keyword, and without a kind an
// argument is positional iff it has no default and is not kwarg-only.
func bindSchema(s *ops.Schema, ins []namedInput, path string) ([]ops.Value, []ops.Kwarg, error) {
	byName := map[string]namedInput{}
	for i, in := range ins {
		if s.ArgIndex(in.name) < 0 {
			return nil, nil, pathErrf(fmt.Sprintf("%s[%d].name", path, i), "operator %s has no argument %q", s.Name, in.name)
		}
		byName[in.name] = in
	}
	var args []ops.Value
	var kwargs []ops.Kwarg
	for _, a := range s.Args {
		in, ok := byName[a.Name]
		if ok && in.kind == 1 {
			args = append(args, in.val)
			continue
		}
		if ok && in.kind == 2 && !pyKeywords[a.Name] {
			kwargs = append(kwargs, ops.Kwarg{Name: a.Name, Value: in.val})
			continue
		}
		switch {
		case !a.HasDefault && !a.KwargOnly:
			if !ok {
				return nil, nil, pathErrf(path, "missing required argument %q of %s", a.Name, s.Name)
			}
			args = append(args, in.val)
		case ok:
			kwargs = append(kwargs, ops.Kwarg{Name: a.Name, Value: in.val})
		}
	}
	return args, kwargs, nil
}

var pyKeywords = map[string]bool{"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true, "import": true,
	"in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true, "pass": true, "raise": true,
	"return": true, "try": true, "while": true, "with": true, "yield": true}

func (b *builder) createNode(target ops.Overload, schema *ops.Schema, args []ops.Value, kwargs []ops.Kwarg,
	opaque []opaqueArg, meta fxgraph.Meta, nodeName string, outs []json.RawMessage, path string) error {
	// Single-result forms: one as_tensor (or symbolic name) output whose
	// schema, when known, returns exactly one non-list value.
	singleSchema := schema == nil || (len(schema.Returns) == 1 && !schema.Returns[0].Type.List)
	var n *fxgraph.Node
	if len(outs) == 1 && singleSchema {
		tag, v, err := union(outs[0], catPath(path, "[0]"))
		if err != nil {
			return err
		}
		switch tag {
		case "as_tensor", "as_sym_int", "as_sym_bool", "as_sym_float":
			name, typ, err := b.namedValue(tag, v, catPath(path, "[0]."+tag))
			if err != nil {
				return err
			}
			n = b.g.CreateNode(fxgraph.CallFunction, target, "", args, kwargs, name, typ)
			*n.Meta = meta
			if opaque != nil {
				b.p.setOpaque(n, opaque)
			}
			return b.define(name, n, catPath(path, "[0]"))
		}
	}
	n = b.g.CreateNode(fxgraph.CallFunction, target, "", args, kwargs, nodeName, nil)
	*n.Meta = meta
	if opaque != nil {
		b.p.setOpaque(n, opaque)
	}
	if len(outs) == 0 {
		return nil
	}
	if len(outs) == 1 {
		if tag, v, err := union(outs[0], catPath(path, "[0]")); err == nil && tag == "as_tensors" {
			// a Tensor[] return: one getitem per element
			elems, err := decodeArray(v, catPath(path, "[0].as_tensors"))
			if err != nil {
				return err
			}
			typ, err := b.getitems(n, elems, catPath(path, "[0].as_tensors"), meta, true)
			if err != nil {
				return err
			}
			n.SetType(typ)
			if opaque != nil {
				b.p.opaque[n].out = "list"
			}
			return nil
		}
	}
	typ, err := b.getitems(n, outs, path, meta, false)
	if err != nil {
		return err
	}
	n.SetType(typ)
	return nil
}

// getitems creates operator.getitem nodes for the results of n, as
// torch.export's deserializer does, and returns n's tuple type.
func (b *builder) getitems(n *fxgraph.Node, outs []json.RawMessage, path string, meta fxgraph.Meta, bare bool) (ops.Type, error) {
	var elems []ops.Type
	for i, r := range outs {
		ip := indexPath(path, i)
		var tag string
		var v json.RawMessage
		var err error
		if bare { // elements of as_tensors are bare TensorArguments
			tag, v = "as_tensor", r
		} else if tag, v, err = union(r, ip); err != nil {
			return nil, err
		}
		switch tag {
		case "as_tensor":
			name, err := decodeNameArg(v, ip)
			if err != nil {
				return nil, err
			}
			tt, err := b.tensorType(name, ip)
			if err != nil {
				return nil, err
			}
			gi := b.g.CreateNode(fxgraph.CallFunction, ops.GetItem, "", []ops.Value{n, int64(i)}, nil, name, tt)
			*gi.Meta = meta.Clone()
			if err := b.define(name, gi, ip); err != nil {
				return nil, err
			}
			elems = append(elems, tt)
		case "as_none":
			elems = append(elems, nil)
		case "as_tensors":
			items, err := decodeArray(v, dotPath(ip, "as_tensors"))
			if err != nil {
				return nil, err
			}
			gi := b.g.CreateNode(fxgraph.CallFunction, ops.GetItem, "", []ops.Value{n, int64(i)}, nil, "", nil)
			*gi.Meta = meta.Clone()
			t, err := b.getitems(gi, items, dotPath(ip, "as_tensors"), meta, true)
			if err != nil {
				return nil, err
			}
			gi.SetType(t)
			elems = append(elems, t)
		default:
			return nil, pathErr(ip, fmt.Errorf("%w: %s result", ErrUnsupported, tag))
		}
	}
	return ops.TupleType{Elems: elems}, nil
}

func (b *builder) ref(name, path string) (*fxgraph.Node, error) {
	n, ok := b.defined[name]
	if !ok {
		return nil, pathErr(path, fmt.Errorf("%w: unknown tensor %q", ErrDangling, name))
	}
	return n, nil
}

func (b *builder) symRef(raw json.RawMessage, path string, constTag string) (ops.Value, error) {
	tag, v, err := union(raw, path)
	if err != nil {
		return nil, err
	}
	switch tag {
	case "as_name":
		name, err := decodeString(v, dotPath(path, "as_name"))
		if err != nil {
			return nil, err
		}
		n, ok := b.defined[name]
		if !ok {
			return nil, pathErr(path, fmt.Errorf("%w: unknown symbol %q", ErrDangling, name))
		}
		return n, nil
	case constTag:
		return decodeConstant(constTag, v, dotPath(path, tag))
	}
	return nil, pathErrf(path, "want as_name or %s, got %q", constTag, tag)
}

// symConstTags maps each symbolic scalar argument tag to the tag of the
// constant PyTorch writes in its place when the value is not symbolic.
var symConstTags = map[string]string{"as_sym_int": "as_int", "as_sym_bool": "as_bool", "as_sym_float": "as_float"}

// asValue adapts a typed scalar decoder to one that yields an ops.Value.
func asValue[T any](dec func(json.RawMessage, string) (T, error)) func(json.RawMessage, string) (ops.Value, error) {
	return func(r json.RawMessage, path string) (ops.Value, error) { return dec(r, path) }
}

// decodeEnumCode decodes an integer enum code, which must lie in
// [0, highest]; what names the enum in the error.
func decodeEnumCode(raw json.RawMessage, path string, highest int64, what string) (int64, error) {
	code, err := decodeInt(raw, path)
	if err == nil && (code < 0 || code > highest) {
		err = pathErrf(path, "unknown %s %d", what, code)
	}
	return code, err
}

// argument decodes one Argument union into a Value, resolving names.
func (b *builder) argument(raw json.RawMessage, path string) (string, ops.Value, error) {
	tag, v, err := union(raw, path)
	if err != nil {
		return "", nil, err
	}
	p := dotPath(path, tag)
	list := func(each func(json.RawMessage, string) (ops.Value, error)) (ops.Value, error) {
		out, err := decodeEach(v, p, each)
		if err != nil {
			return nil, err
		}
		return ops.List(out), nil
	}
	tensorRef := func(r json.RawMessage, ip string) (ops.Value, error) {
		if ip == fastPath {
			if s, ok := fastNameArg(r); ok {
				if n, ok := b.defined[string(s)]; ok {
					return n, nil
				}
			}
		}
		name, err := decodeNameArg(r, ip)
		if err != nil {
			return nil, err
		}
		return b.ref(name, ip)
	}
	optTensor := func(r json.RawMessage, ip string) (ops.Value, error) {
		t, ov, err := union(r, ip)
		if err != nil {
			return nil, err
		}
		switch t {
		case "as_none":
			return nil, nil
		case "as_tensor":
			return tensorRef(ov, dotPath(ip, "as_tensor"))
		}
		return nil, pathErrf(ip, "want as_tensor or as_none, got %q", t)
	}
	var val ops.Value
	switch tag {
	case "as_none":
		val = nil
	case "as_tensor":
		val, err = tensorRef(v, p)
	case "as_tensors":
		val, err = list(tensorRef)
	case "as_optional_tensors":
		val, err = list(optTensor)
	case "as_optional_tensor":
		val, err = optTensor(v, p)
	case "as_nested_tensors":
		val, err = list(func(r json.RawMessage, ip string) (ops.Value, error) {
			out, err := decodeEach(r, ip, tensorRef)
			if err != nil {
				return nil, err
			}
			return ops.List(out), nil
		})
	case "as_int", "as_float", "as_bool", "as_string":
		val, err = decodeConstant(tag, v, p)
	case "as_ints":
		val, err = list(asValue(decodeInt))
	case "as_floats":
		val, err = list(asValue(decodeFloat))
	case "as_bools":
		val, err = list(asValue(decodeBool))
	case "as_strings":
		val, err = list(asValue(decodeString))
	case "as_int_lists", "as_float_lists":
		inner := "as_ints"
		if tag == "as_float_lists" {
			inner = "as_floats"
		}
		val, err = list(func(r json.RawMessage, ip string) (ops.Value, error) {
			wrapped, _ := json.Marshal(map[string]json.RawMessage{inner: r})
			_, x, err := b.argument(wrapped, ip)
			return x, err
		})
	case "as_sym_int", "as_sym_bool", "as_sym_float":
		val, err = b.symRef(v, p, symConstTags[tag])
	case "as_sym_ints", "as_sym_bools", "as_sym_floats":
		constTag := symConstTags[strings.TrimSuffix(tag, "s")]
		val, err = list(func(r json.RawMessage, ip string) (ops.Value, error) { return b.symRef(r, ip, constTag) })
	case "as_scalar_type":
		var code int64
		if code, err = decodeInt(v, p); err == nil {
			d, ok := tensor.DTypeFromSerde(int(code))
			if !ok || int64(int(code)) != code {
				err = pathErrf(p, "unknown ScalarType %d", code)
			}
			val = d
		}
	case "as_memory_format":
		var code int64
		code, err = decodeEnumCode(v, p, int64(ops.PreserveFormat), "MemoryFormat")
		val = ops.MemoryFormat(code)
	case "as_layout":
		var code int64
		code, err = decodeEnumCode(v, p, int64(ops.LayoutStrided), "Layout")
		val = ops.Layout(code)
	case "as_device":
		var typ string
		var idx *int64
		if typ, idx, err = decodeDevice(v, p); err == nil {
			val = deviceValue(typ, idx)
		}
	case "as_complex":
		var o *object
		if o, err = decodeObject(v, p); err == nil {
			var re, im float64
			rr, e1 := o.req("real")
			ir, e2 := o.req("imag")
			if err = errors.Join(e1, e2); err == nil {
				if re, err = decodeFloat(rr, o.sub("real")); err == nil {
					im, err = decodeFloat(ir, o.sub("imag"))
				}
			}
			val = complex(re, im)
		}
	case "as_string_to_argument":
		var entries []kv
		if entries, err = objectEntries(v, p); err == nil {
			d := ops.Dict{}
			for _, e := range entries {
				_, x, err2 := b.argument(e.Val, keyPath(p, e.Key))
				if err2 != nil {
					return "", nil, err2
				}
				d.Keys = append(d.Keys, e.Key)
				d.Values = append(d.Values, x)
			}
			val = d
		}
	case "as_operator":
		val, err = b.operatorArg(v, p)
	case "as_graph", "as_custom_obj":
		err = pathErr(p, fmt.Errorf("%w: %s argument", ErrUnsupported, tag))
	default:
		err = pathErrf(path, "unknown argument tag %q", tag)
	}
	if err != nil {
		return "", nil, err
	}
	return tag, val, nil
}

func (b *builder) outputs(raw json.RawMessage, path string, single bool) error {
	items, err := decodeArray(raw, path)
	if err != nil {
		return err
	}
	specs := b.p.Signature.Outputs
	if len(items) != len(specs) {
		return pathErrf(path, "%d graph outputs but %d output specs in graph_module.signature.output_specs", len(items), len(specs))
	}
	res := make(ops.Tuple, len(items))
	for i, r := range items {
		ip := indexPath(path, i)
		tag, v, err := b.argument(r, ip)
		if err != nil {
			return err
		}
		res[i] = v
		if n, ok := v.(*fxgraph.Node); ok {
			if specs[i].Name != "" && b.defined[specs[i].Name] != n {
				return pathErrf(ip, "output %q does not match output spec %d (%s %q)", n.Name(), i, specs[i].Kind, specs[i].Name)
			}
		} else if tag != "as_none" && tag != "as_int" && tag != "as_float" && tag != "as_bool" && tag != "as_string" {
			return pathErr(ip, fmt.Errorf("%w: %s graph output", ErrUnsupported, tag))
		}
	}
	if single && len(res) == 1 {
		b.g.SetOutput(res[0])
	} else {
		b.g.SetOutput(res)
	}
	return nil
}
