package pt2

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// weightEntry is one tensor the writer stores as a payload.
type weightEntry struct {
	FQN    string
	Tensor *tensor.Tensor
	Info   TensorInfo
	Const  bool // a constant (tensor_constant or non-persistent buffer)
}

// encoder serializes a Program; it never mutates the program or its graph.
type encoder struct {
	p   *Program
	reg *ops.Registry
	w   *pyWriter
	// names maps nodes to their serialized names (getitems to the name
	// of the result they extract; lifted get_attrs to their placeholder).
	names map[*fxgraph.Node]string
	// inputs is the signature written, with lifted get_attr buffers.
	inputs  []InputSpec
	phs     []*fxgraph.Node // graph inputs, parallel to inputs
	weights []weightEntry
	// tv holds the tensor_values entries, in definition order; tvSeen
	// their names.
	tv     pyWriter
	tvSeen map[string]struct{}
	// strides is scratch space for contiguous strides.
	strides []int64
	// needWeights makes a missing parameter/buffer/constant tensor an
	// error (archives need them; the bare JSON does not).
	needWeights bool
	// syms renders new symbolic sizes (made on first use).
	syms *symWriter
	// sites is the stack of places being written, for errors (site.go).
	sites []site
}

// EncodeJSON returns the program as an ExportedProgram JSON document, laid
// out as Python's json.dumps writes it. Weights are not needed. reg resolves schemas (nil means
// ops.Default()). It fails, naming the node, for anything the format cannot
// hold: call_module or call_method nodes, a node of an unknown operator
// with no recorded argument names, a tensor whose dtype has no ScalarType,
// or placeholders that do not match the signature.
func (p *Program) EncodeJSON(reg *ops.Registry) ([]byte, error) {
	e, err := p.encode(reg, false)
	if err != nil {
		return nil, err
	}
	return e.w.b, nil
}

func (p *Program) encode(reg *ops.Registry, needWeights bool) (*encoder, error) {
	if reg == nil {
		reg = ops.Default()
	}
	if p.Graph == nil {
		return nil, fmt.Errorf("pt2: write: program has no graph")
	}
	// One buffer per program, sized from the node count (a converted
	// program's model.json takes about 670 bytes per node, placeholders
	// included, its tensor_values about 230 per value).
	n := p.Graph.Len()
	e := &encoder{p: p, reg: reg, needWeights: needWeights,
		w:      &pyWriter{b: make([]byte, 0, 4096+704*n), first: make([]bool, 0, 16)},
		tv:     pyWriter{b: make([]byte, 0, 1024+240*n), first: []bool{true}},
		names:  make(map[*fxgraph.Node]string, n),
		tvSeen: make(map[string]struct{}, n),
	}
	if err := e.prepare(); err != nil {
		return nil, fmt.Errorf("pt2: write: %w", err)
	}
	if err := e.program(); err != nil {
		return nil, fmt.Errorf("pt2: write: %w", err)
	}
	return e, nil
}

// prepare matches placeholders with the signature, gives every node its
// serialized name, lifts get_attr tensors (and the unused attributes
// LiftSpecs lists) into graph inputs, names getitem results and collects
// the weights.
func (e *encoder) prepare() error {
	g := e.p.Graph
	phs := g.Placeholders()
	specs := e.p.Signature.Inputs
	if len(phs) != len(specs) {
		return fmt.Errorf("graph has %d placeholders but the signature lists %d inputs", len(phs), len(specs))
	}
	for i, ph := range phs {
		if ph.Name() != specs[i].Name {
			return fmt.Errorf("placeholder %d %q does not match input spec %q (%s)", i, ph.Name(), specs[i].Name, specs[i].Kind)
		}
	}
	// Serialized names: the name the program had when read (fxgraph's
	// namespace renames Python builtins such as "input" to "input_1"),
	// unless another node already carries it.
	taken := make(map[string]bool, g.Len()+len(specs)+len(e.p.LiftSpecs))
	for n := range g.All() {
		taken[n.Name()] = true
	}
	for n := range g.All() {
		ser, ok := e.p.serialNames[n.Name()]
		if ok && !taken[ser] {
			taken[ser] = true
			e.names[n] = ser
		} else {
			e.names[n] = n.Name()
		}
	}
	e.inputs = make([]InputSpec, len(specs))
	copy(e.inputs, specs)
	e.phs = slices.Clone(phs)
	attrs := g.AttrNames()
	byTarget := make(map[string]string, len(attrs)+len(specs)) // lifted attribute -> input name
	for i, s := range e.inputs {
		e.inputs[i].Name = e.names[phs[i]]
		if s.Kind == Parameter || s.Kind == Buffer || s.Kind == TensorConstant {
			byTarget[s.Target] = e.inputs[i].Name
		}
	}
	for _, s := range specs {
		taken[s.Target] = true
	}
	// Lift: a get_attr becomes a graph input of the kind LiftSpecs gives
	// its attribute, by default a persistent buffer "b_<attr>" (what
	// torch.export makes of the attributes convert registers with
	// register_buffer); LiftSpecs attributes no node reads are lifted too,
	// as torch.export keeps unused parameters and buffers.
	var lifted []InputSpec
	var liftedNodes []*fxgraph.Node
	lift := func(fqn string, n *fxgraph.Node) (string, error) {
		if name, ok := byTarget[fqn]; ok {
			return name, nil
		}
		v, ok := g.Attr(fqn)
		if !ok {
			return "", fmt.Errorf("get_attr of %q, which the graph does not hold", fqn)
		}
		if _, ok := v.(*tensor.Tensor); !ok {
			return "", fmt.Errorf("get_attr of %q holds %T, not a tensor", fqn, v)
		}
		spec, ok := e.p.LiftSpecs[fqn]
		if !ok {
			spec = InputSpec{Kind: Buffer, Persistent: true}
		}
		if spec.Kind != Parameter && spec.Kind != Buffer && spec.Kind != TensorConstant {
			return "", fmt.Errorf("attribute %q: LiftSpecs kind %s, want parameter, buffer or tensor_constant", fqn, spec.Kind)
		}
		spec.Target = fqn
		if spec.Name == "" || taken[spec.Name] {
			spec.Name = liftedName(spec.Kind, fqn, taken)
		}
		taken[spec.Name] = true
		byTarget[fqn] = spec.Name
		lifted = append(lifted, spec)
		liftedNodes = append(liftedNodes, n)
		return spec.Name, nil
	}
	for n := range g.All() {
		if n.Op() != fxgraph.GetAttr {
			continue
		}
		name, err := lift(n.TargetName(), n)
		if err != nil {
			return fmt.Errorf("node %q: %w", n.Name(), err)
		}
		e.names[n] = name
	}
	for _, fqn := range attrs {
		if _, ok := e.p.LiftSpecs[fqn]; !ok {
			continue
		}
		if _, ok := byTarget[fqn]; ok {
			continue
		}
		if v, _ := g.Attr(fqn); !isTensorValue(v) {
			continue
		}
		if _, err := lift(fqn, nil); err != nil {
			return err
		}
	}
	// Lifted inputs come first, parameters then buffers then constants
	// (torch.export's order), each kind in attribute registration order;
	// user inputs keep their place at the end.
	at := len(specs)
	for i, s := range specs {
		if s.Kind == UserInput || s.Kind == ConstantInput {
			at = i
			break
		}
	}
	order := make(map[string]int, len(attrs))
	for i, a := range attrs {
		order[a] = i
	}
	idx := make([]int, len(lifted))
	for i := range idx {
		idx[i] = i
	}
	rank := map[InputKind]int{Parameter: 0, Buffer: 1, TensorConstant: 2}
	slices.SortStableFunc(idx, func(a, b int) int {
		if r := rank[lifted[a].Kind] - rank[lifted[b].Kind]; r != 0 {
			return r
		}
		return order[lifted[a].Target] - order[lifted[b].Target]
	})
	head := append(make([]InputSpec, 0, at+len(idx)), e.inputs[:at]...)
	headNodes := append(make([]*fxgraph.Node, 0, at+len(idx)), e.phs[:at]...)
	for _, i := range idx {
		head = append(head, lifted[i])
		headNodes = append(headNodes, liftedNodes[i])
	}
	perm := make([]int, len(head))
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int { return rank[head[a].Kind] - rank[head[b].Kind] })
	ins := make([]InputSpec, 0, len(perm)+len(e.inputs)-at)
	insNodes := make([]*fxgraph.Node, 0, len(perm)+len(e.phs)-at)
	for _, i := range perm {
		ins = append(ins, head[i])
		insNodes = append(insNodes, headNodes[i])
	}
	e.inputs = append(ins, e.inputs[at:]...)
	e.phs = append(insNodes, e.phs[at:]...)
	// getitem nodes take the serialized name of the result they extract;
	// duplicates fold onto the first.
	for n := range g.All() {
		if n.Op() != fxgraph.CallFunction || n.Target() == ops.GetItem {
			continue
		}
		if n.NumUsers() < 2 {
			continue // no two getitems to fold
		}
		seen := map[int64]string{}
		for _, u := range n.Users() {
			if u.Op() != fxgraph.CallFunction || u.Target() != ops.GetItem || len(u.Args()) != 2 || u.Arg(0) != n {
				continue
			}
			idx, ok := u.Arg(1).(int64)
			if !ok {
				continue
			}
			if first, dup := seen[idx]; dup {
				e.names[u] = first
			} else {
				seen[idx] = e.names[u]
			}
		}
	}
	// weights, in signature order
	e.weights = make([]weightEntry, 0, len(e.inputs))
	for _, s := range e.inputs {
		var info TensorInfo
		var isConst bool
		switch s.Kind {
		case Parameter:
			info = TensorInfo{IsParam: true, RequiresGrad: true, Device: "cpu"}
		case Buffer:
			info = TensorInfo{Device: "cpu"}
			isConst = !s.Persistent
		case TensorConstant:
			info = TensorInfo{Device: "cpu"}
			isConst = true
		default:
			continue
		}
		if ti, ok := e.p.Tensors[s.Target]; ok {
			info = ti
		}
		v, ok := e.p.Graph.Attr(s.Target)
		if !ok && !e.needWeights {
			continue
		}
		if !ok {
			return fmt.Errorf("%s %q (input %q) has no tensor: the graph holds no attribute %q", s.Kind, s.Target, s.Name, s.Target)
		}
		t, ok := v.(*tensor.Tensor)
		if !ok {
			return fmt.Errorf("%s %q holds %T, not a tensor", s.Kind, s.Target, v)
		}
		if t.DType().SerdeCode() == 0 {
			return fmt.Errorf("%s %q: dtype %s has no ScalarType in the export format", s.Kind, s.Target, t.DType())
		}
		e.weights = append(e.weights, weightEntry{FQN: s.Target, Tensor: t, Info: info, Const: isConst})
	}
	return nil
}

func isTensorValue(v any) bool {
	_, ok := v.(*tensor.Tensor)
	return ok
}

func (e *encoder) name(n *fxgraph.Node) string {
	if s, ok := e.names[n]; ok {
		return s
	}
	return n.Name()
}

// defineTensor records a tensor value for tensor_values under its
// serialized name; goName is the node's name in the graph, which keys the
// tensor metadata kept from reading ("" for none).
func (e *encoder) defineTensor(name, goName string, typ ops.Type, requiresGrad bool, where siteID) error {
	tt, ok := typ.(ops.TensorType)
	if !ok {
		return fmt.Errorf("%s: tensor %q has type %v, want a tensor type", e.loc(where), name, typ)
	}
	if _, dup := e.tvSeen[name]; dup {
		return nil
	}
	m, ok := e.p.metas[goName]
	switch {
	case goName != "" && ok && m.DType == tt.DType() && m.sameShape(tt):
		e.tv.key(name)
		e.tv.tensorMeta(m)
	case !tt.Static():
		m, err := e.symbolic().meta(tt, requiresGrad)
		if err != nil {
			return fmt.Errorf("%s: tensor %q: %w", e.loc(where), name, err)
		}
		e.tv.key(name)
		e.tv.tensorMeta(m)
	default:
		// a static type: contiguous strides, offset 0, on the CPU
		if tt.DType().SerdeCode() == 0 {
			return fmt.Errorf("%s: tensor %q: dtype %s has no ScalarType in the export format", e.loc(where), name, tt.DType())
		}
		e.strides = contiguousStrides(e.strides[:0], tt.Shape)
		e.tv.key(name)
		e.tv.staticMeta(tt.DType(), tt.Shape, e.strides, 0, requiresGrad, "cpu", nil, int64(ops.LayoutStrided))
	}
	e.tvSeen[name] = struct{}{}
	return nil
}

func (e *encoder) program() error {
	w := e.w
	w.beginObject()
	w.keyLit("graph_module")
	w.beginObject()
	w.keyLit("graph")
	if err := e.graph(); err != nil {
		return err
	}
	w.keyLit("signature")
	if err := e.signature(); err != nil {
		return err
	}
	w.keyLit("module_call_graph")
	if err := e.rawOr(e.p.ModuleCallGraph, e.defaultModuleCallGraph); err != nil {
		return fmt.Errorf("module_call_graph: %w", err)
	}
	w.keyLit("metadata")
	if err := e.rawOr(e.p.GraphModuleMetadata, func() { w.beginObject(); w.endObject() }); err != nil {
		return err
	}
	w.keyLit("treespec_namedtuple_fields")
	if err := e.rawOr(e.p.TreespecNamedtupleFields, func() { w.beginObject(); w.endObject() }); err != nil {
		return err
	}
	w.endObject()
	w.keyLit("opset_version")
	if err := e.rawOr(e.p.OpsetVersion, func() { w.beginObject(); w.keyLit("aten"); w.int(10); w.endObject() }); err != nil {
		return err
	}
	w.keyLit("range_constraints")
	if syms := e.p.Graph.Symbols(); len(syms) > 0 {
		w.rangeConstraints(syms)
	} else if err := e.rawOr(e.p.RangeConstraints, func() { w.beginObject(); w.endObject() }); err != nil {
		return err
	}
	w.keyLit("schema_version")
	w.beginObject()
	w.keyLit("major")
	w.int(WriteVersion.Major)
	w.keyLit("minor")
	w.int(WriteVersion.Minor)
	w.endObject()
	w.keyLit("verifiers")
	w.beginArray()
	for _, v := range e.p.Verifiers {
		w.str(v)
	}
	w.endArray()
	w.keyLit("torch_version")
	tv := e.p.TorchVersion
	if tv == "" {
		tv = "2.14.1"
	}
	w.str(tv)
	w.keyLit("guards_code")
	w.beginArray()
	for _, s := range e.p.GuardsCode {
		w.str(s)
	}
	w.endArray()
	w.endObject()
	return nil
}

func (e *encoder) rawOr(raw []byte, def func()) error {
	if isNull(raw) {
		def()
		return nil
	}
	return e.w.raw(raw)
}

// defaultModuleCallGraph writes the root entry for a program that was not
// read from a file: positional user inputs, a flat tuple of outputs.
func (e *encoder) defaultModuleCallGraph() {
	w := e.w
	var users []string
	for _, s := range e.inputs {
		if s.Kind == UserInput && !s.IsConst {
			users = append(users, s.Name)
		}
	}
	leaf := `{"type": null, "context": null, "children_spec": []}`
	leaves := make([]string, len(users))
	for i := range leaves {
		leaves[i] = leaf
	}
	inSpec := `[1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": "builtins.tuple", "context": "null", "children_spec": [` +
		strings.Join(leaves, ", ") + `]}, {"type": "builtins.dict", "context": "[]", "children_spec": []}]}]`
	nOut := 0
	for _, s := range e.p.Signature.Outputs {
		if s.Kind == UserOutput {
			nOut++
		}
	}
	outLeaves := make([]string, nOut)
	for i := range outLeaves {
		outLeaves[i] = leaf
	}
	outSpec := `[1, {"type": "builtins.tuple", "context": "null", "children_spec": [` + strings.Join(outLeaves, ", ") + `]}]`
	w.beginArray()
	w.beginObject()
	w.keyLit("fqn")
	w.str("")
	w.keyLit("signature")
	w.beginObject()
	w.keyLit("inputs")
	w.beginArray()
	w.endArray()
	w.keyLit("outputs")
	w.beginArray()
	w.endArray()
	w.keyLit("in_spec")
	w.str(inSpec)
	w.keyLit("out_spec")
	w.str(outSpec)
	w.keyLit("forward_arg_names")
	w.beginArray()
	for _, u := range users {
		w.str(u)
	}
	w.endArray()
	w.endObject()
	w.endObject()
	w.endArray()
}

func (e *encoder) graph() error {
	w := e.w
	g := e.p.Graph
	w.beginObject()
	w.keyLit("inputs")
	w.beginArray()
	for i, s := range e.inputs {
		n := e.phs[i]
		switch {
		case s.IsConst:
			writeConstant(w, s.Const)
		case n != nil && isSym(n.Type()):
			writeSymName(w, "as_sym_int", s.Name)
		default:
			goName := ""
			var typ ops.Type
			if n != nil && n.Op() == fxgraph.Placeholder {
				goName, typ = n.Name(), n.Type()
			} else {
				v, _ := g.Attr(s.Target)
				t := v.(*tensor.Tensor)
				typ = ops.TensorType{Shape: ops.ShapeInts(t.Shape()), Elem: ops.Scalar{DType: t.DType()}}
			}
			if err := e.defineTensor(s.Name, goName, typ, s.Kind == Parameter, e.root(site{kind: siteInput, text: s.Name})); err != nil {
				return err
			}
			writeTensorArg(w, "as_tensor", s.Name)
		}
	}
	w.endArray()
	out, ok := g.OutputNode()
	if !ok {
		return fmt.Errorf("graph has no output node")
	}
	// The outputs come before the nodes in the document, but an error in
	// the nodes is the one reported when both have one (the nodes are
	// checked first).
	results, isSeq := ops.Sequence(out.Arg(0))
	single := !isSeq
	if single {
		results = []ops.Value{out.Arg(0)}
	}
	var outErr error
	w.keyLit("outputs")
	w.beginArray()
	depth := len(w.first)
	if len(results) != len(e.p.Signature.Outputs) {
		outErr = fmt.Errorf("output node returns %d values but the signature lists %d outputs", len(results), len(e.p.Signature.Outputs))
	} else {
		for i, r := range results {
			if outErr = e.value(r, nil, e.root(site{kind: siteOutput, i: i})); outErr != nil {
				w.first = w.first[:depth]
				break
			}
		}
	}
	w.endArray()
	w.keyLit("nodes")
	w.beginArray()
	for n := range g.All() {
		switch n.Op() {
		case fxgraph.Placeholder, fxgraph.GetAttr, fxgraph.Output:
			continue
		case fxgraph.CallFunction:
			if n.Target() == ops.GetItem {
				if err := e.checkGetItem(n); err != nil {
					return err
				}
				continue
			}
			if err := e.node(n); err != nil {
				return err
			}
		default:
			return fmt.Errorf("node %q: %s nodes cannot be serialized; inline or remove them first", n.Name(), n.Op())
		}
	}
	w.endArray()
	if outErr != nil {
		return outErr
	}
	w.keyLit("tensor_values")
	w.beginObject()
	w.b = append(w.b, e.tv.b...)
	w.first[len(w.first)-1] = len(e.tv.b) == 0
	w.endObject()
	w.keyLit("sym_int_values")
	if err := e.symIntValues(); err != nil {
		return err
	}
	w.keyLit("sym_bool_values")
	w.beginObject()
	w.endObject()
	w.keyLit("is_single_tensor_return")
	w.bool(single)
	w.keyLit("custom_obj_values")
	w.beginObject()
	w.endObject()
	w.keyLit("sym_float_values")
	w.beginObject()
	w.endObject()
	w.endObject()
	return nil
}

func isSym(t ops.Type) bool {
	p, ok := t.(ops.PyType)
	return ok && strings.HasPrefix(p.Name, "Sym")
}

func (e *encoder) checkGetItem(n *fxgraph.Node) error {
	src, ok := n.Arg(0).(*fxgraph.Node)
	if !ok || len(n.Args()) != 2 {
		return fmt.Errorf("node %q: getitem must take (node, index)", n.Name())
	}
	if _, ok := n.Arg(1).(int64); !ok {
		return fmt.Errorf("node %q: getitem index must be an int, got %T", n.Name(), n.Arg(1))
	}
	if src.Op() != fxgraph.CallFunction {
		return fmt.Errorf("node %q: getitem of %s node %q cannot be serialized", n.Name(), src.Op(), src.Name())
	}
	return nil
}

// writeTensorArg writes the union {tag: {"name": name}}, a TensorArgument.
func writeTensorArg(w *pyWriter, tag, name string) {
	w.twoKeyStr(tag, "name", name)
}

// writeNodeMeta writes n's "metadata" entry: its meta as torch.export
// serializes it.
func writeNodeMeta(w *pyWriter, n *fxgraph.Node) {
	w.keyLit("metadata")
	w.beginObject()
	writeMetaEntries(w, n.Meta)
	w.endObject()
}

// writeSymName writes the union {tag: {"as_name": name}}, a symbolic
// scalar argument (as_sym_int...) that refers to a named value.
func writeSymName(w *pyWriter, tag, name string) {
	w.twoKeyStr(tag, "as_name", name)
}

func writeConstant(w *pyWriter, v ops.Value) {
	w.beginObject()
	switch x := v.(type) {
	case nil:
		w.keyLit("as_none")
		w.bool(true)
	case int64:
		w.keyLit("as_int")
		w.int(x)
	case float64:
		w.keyLit("as_float")
		w.float(x)
	case bool:
		w.keyLit("as_bool")
		w.bool(x)
	case string:
		w.keyLit("as_string")
		w.str(x)
	}
	w.endObject()
}

// returnForm says how n's results are serialized: "none", "single",
// "tuple" or "list".
func (e *encoder) returnForm(n *fxgraph.Node, schema *ops.Schema) string {
	if info, ok := e.p.opaque[n]; ok && info.out != "" {
		return info.out
	}
	if schema != nil {
		switch {
		case len(schema.Returns) == 0:
			return "none"
		case len(schema.Returns) == 1 && schema.Returns[0].Type.List:
			return "list"
		case len(schema.Returns) == 1:
			return "single"
		}
		return "tuple"
	}
	switch n.Type().(type) {
	case ops.TupleType:
		return "tuple"
	case nil:
		return "none"
	}
	return "single"
}

func (e *encoder) node(n *fxgraph.Node) error {
	w := e.w
	if c, ok := n.Target().(ops.Callable); ok {
		if _, sym := ops.SymScalarArity(c); sym {
			return e.symScalarNode(n, c)
		}
	}
	ov, ok := n.Target().(ops.Overload)
	if !ok {
		if pk, isPacket := n.Target().(ops.Packet); isPacket {
			ov = pk.Default() // PyTorch serializes only overloads
		} else {
			return fmt.Errorf("node %q: target %v cannot be serialized (want an operator overload)", n.Name(), n.Target())
		}
	}
	schema, _ := e.reg.Schema(ov)
	where := e.root(site{kind: siteNode, node: n, ov: ov})
	w.beginObject()
	w.keyLit("target")
	w.operatorName(ov)
	w.keyLit("inputs")
	w.beginArray()
	if isHOP(ov) {
		if err := e.hopInputs(n, where); err != nil {
			return err
		}
	} else if err := e.inputsOf(n, schema, where); err != nil {
		return err
	}
	w.endArray()
	w.keyLit("outputs")
	w.beginArray()
	form := e.returnForm(n, schema)
	switch form {
	case "single":
		if isSym(n.Type()) {
			writeSymName(w, "as_sym_int", e.name(n))
		} else {
			name := e.name(n)
			if err := e.defineTensor(name, n.Name(), n.Type(), false, where); err != nil {
				return err
			}
			writeTensorArg(w, "as_tensor", name)
		}
	case "tuple", "list":
		if err := e.results(n, form == "list", where); err != nil {
			return err
		}
	}
	w.endArray()
	writeNodeMeta(w, n)
	w.keyLit("is_hop_single_tensor_return")
	if isHOP(ov) {
		// True when the HOP's result (meta "val") is one tensor.
		_, single := n.Type().(ops.TensorType)
		w.bool(single)
	} else {
		w.null()
	}
	w.keyLit("name")
	w.str(e.name(n))
	w.endObject()
	return nil
}

// results writes the outputs of a multi-result node from its getitem
// users: unused tensor results are named "<node>_unused_<i>", None results
// are as_none.
func (e *encoder) results(n *fxgraph.Node, list bool, where siteID) error {
	w := e.w
	var elems []ops.Type
	if tt, ok := n.Type().(ops.TupleType); ok {
		elems = tt.Elems
	}
	byIdx := map[int64]*fxgraph.Node{}
	maxIdx := int64(len(elems)) - 1
	for _, u := range n.Users() {
		if u.Op() == fxgraph.CallFunction && u.Target() == ops.GetItem {
			if idx, ok := u.Arg(1).(int64); ok {
				if _, dup := byIdx[idx]; !dup {
					byIdx[idx] = u
				}
				maxIdx = max(maxIdx, idx)
			}
		}
	}
	if list {
		w.beginObject()
		w.keyLit("as_tensors")
		w.beginArray()
	}
	for i := int64(0); i <= maxIdx; i++ {
		var typ ops.Type
		if int(i) < len(elems) {
			typ = elems[i]
		}
		name, goName := "", ""
		if u, ok := byIdx[i]; ok {
			name, goName = e.name(u), u.Name()
			if u.Type() != nil {
				typ = u.Type()
			}
		} else if typ != nil {
			name = fmt.Sprintf("%s_unused_%d", e.name(n), i)
		}
		if name == "" {
			if list {
				return fmt.Errorf("%s: result %d of a Tensor[] return has no value", e.loc(where), i)
			}
			writeConstant(w, nil)
			continue
		}
		if _, ok := typ.(ops.TupleType); ok {
			return fmt.Errorf("%s: nested result %d cannot be serialized", e.loc(where), i)
		}
		if err := e.defineTensor(name, goName, typ, false, where); err != nil {
			return err
		}
		if list {
			w.oneKey("name", func() { w.str(name) })
		} else {
			writeTensorArg(w, "as_tensor", name)
		}
	}
	if list {
		w.endArray()
		w.endObject()
	}
	return nil
}

// inputsOf writes a node's NamedArguments, following torch.export's
// serialize_inputs: schema order, kwargs by name (kind 2), args by
// position (kind 1), omitted arguments left out.
func (e *encoder) inputsOf(n *fxgraph.Node, schema *ops.Schema, where siteID) error {
	w := e.w
	named := func(name string, v ops.Value, kind int64, at *ops.ArgType, emptyTag string) error {
		w.beginObject()
		w.keyLit("name")
		w.str(name)
		w.keyLit("arg")
		arg := e.child(where, site{kind: siteArg, text: name})
		if err := e.value(v, at, arg, emptyTag); err != nil {
			return err
		}
		e.drop(arg)
		w.keyLit("kind")
		w.int(kind)
		w.endObject()
		return nil
	}
	if schema != nil {
		for _, kw := range n.Kwargs() {
			if schema.ArgIndex(kw.Name) < 0 {
				return fmt.Errorf("%s: schema has no argument %q", e.loc(where), kw.Name)
			}
		}
		if len(n.Args()) > schema.NumPositional() && !schema.VarArgs {
			return fmt.Errorf("%s: %d positional arguments, schema takes %d", e.loc(where), len(n.Args()), schema.NumPositional())
		}
		pos := 0
		for i, a := range schema.Args {
			at := schema.Args[i].Type
			if v, ok := n.Kwarg(a.Name); ok {
				if err := named(a.Name, v, 2, &at, ""); err != nil {
					return err
				}
			} else if !a.KwargOnly && pos < len(n.Args()) {
				if err := named(a.Name, n.Args()[pos], 1, &at, ""); err != nil {
					return err
				}
			}
			if !a.KwargOnly {
				pos++
			}
		}
		return nil
	}
	info, ok := e.p.opaque[n]
	if !ok || len(info.args) != len(n.Args())+len(n.Kwargs()) {
		return fmt.Errorf("%s: %w: no schema and no recorded argument names", e.loc(where), ErrUnknownOp)
	}
	for i, v := range n.Args() {
		if err := named(info.args[i].Name, v, 1, nil, info.args[i].EmptyTag); err != nil {
			return err
		}
	}
	for j, kw := range n.Kwargs() {
		a := info.args[len(n.Args())+j]
		if err := named(kw.Name, kw.Value, 2, nil, a.EmptyTag); err != nil {
			return err
		}
	}
	return nil
}

// operatorName is GraphModuleSerializer.serialize_operator's spelling:
// torch.ops.<ns>.<op>.<overload> for an OpOverload and
// torch.ops.higher_order.<name> for a higher-order operator, which has no
// overloads.
func operatorName(o ops.Overload) string {
	if isHOP(o) {
		return "torch.ops.higher_order." + o.Packet.Name
	}
	return o.Pretty()
}

// operatorName writes operatorName(o) as a string, spelled in scratch
// space.
func (w *pyWriter) operatorName(o ops.Overload) {
	w.scratch = append(w.scratch[:0], "torch.ops."...)
	if isHOP(o) {
		w.scratch = append(append(w.scratch, "higher_order."...), o.Packet.Name...)
	} else {
		w.scratch = append(append(append(append(append(w.scratch, o.Packet.NS...), '.'), o.Packet.Name...), '.'), o.Name...)
	}
	w.strBytes(w.scratch)
}

// hopInputs writes a higher-order operator's inputs as
// serialize_hoo_inputs does (HOPs have no schema): each positional
// argument with an empty name and kind 1, then each keyword argument by
// name with kind 2.
func (e *encoder) hopInputs(n *fxgraph.Node, where siteID) error {
	w := e.w
	named := func(name string, v ops.Value, kind int64, at siteID) error {
		w.beginObject()
		w.keyLit("name")
		w.str(name)
		w.keyLit("arg")
		if err := e.value(v, nil, at); err != nil {
			return err
		}
		e.drop(at)
		w.keyLit("kind")
		w.int(kind)
		w.endObject()
		return nil
	}
	for i, v := range n.Args() {
		if err := named("", v, 1, e.child(where, site{kind: sitePositional, i: i})); err != nil {
			return err
		}
	}
	for _, kw := range n.Kwargs() {
		if err := named(kw.Name, kw.Value, 2, e.child(where, site{kind: siteArg, text: kw.Name})); err != nil {
			return err
		}
	}
	return nil
}

// value writes one Argument union for v. at is the schema type when
// known; emptyTag is the tag recorded for an empty list of an opaque op.
func (e *encoder) value(v ops.Value, at *ops.ArgType, where siteID, emptyTag ...string) error {
	w := e.w
	switch x := v.(type) {
	case nil, int64, bool, string:
		writeConstant(w, x)
		return nil
	case float64:
		writeConstant(w, x)
		return nil
	case *fxgraph.Node:
		return e.nodeRef(x, where)
	case tensor.DType:
		if x.SerdeCode() == 0 {
			return fmt.Errorf("%s: dtype %s has no ScalarType in the export format", e.loc(where), x)
		}
		w.oneKey("as_scalar_type", func() { w.int(int64(x.SerdeCode())) })
		return nil
	case ops.MemoryFormat:
		w.oneKey("as_memory_format", func() { w.int(int64(x)) })
		return nil
	case ops.Layout:
		w.oneKey("as_layout", func() { w.int(int64(x)) })
		return nil
	case ops.Device:
		typ, idx := splitDevice(x)
		w.oneKey("as_device", func() { w.device(typ, idx) })
		return nil
	case complex128:
		w.beginObject()
		w.keyLit("as_complex")
		w.beginObject()
		w.keyLit("real")
		w.float(real(x))
		w.keyLit("imag")
		w.float(imag(x))
		w.endObject()
		w.endObject()
		return nil
	case ops.Overload:
		// An operator passed as a value (out_dtype's op): as_operator
		// with serialize_operator's name.
		w.oneKey("as_operator", func() { w.str(operatorName(x)) })
		return nil
	case ops.Packet:
		return fmt.Errorf("%s: operator %s is a packet: PyTorch serializes only an OpOverload (want e.g. %s)", e.loc(where), x, x.Default())
	case ops.Callable:
		return fmt.Errorf("%s: function %s cannot be serialized as an operator argument (want an OpOverload)", e.loc(where), x)
	case ops.List:
		return e.list(x, at, where, emptyTag...)
	case ops.Tuple:
		return e.list(ops.List(x), at, where, emptyTag...)
	case ops.Dict:
		w.beginObject()
		w.keyLit("as_string_to_argument")
		w.beginObject()
		for i, k := range x.Keys {
			w.key(k)
			at := e.child(where, site{kind: siteKey, text: k})
			if err := e.value(x.Values[i], nil, at); err != nil {
				return err
			}
			e.drop(at)
		}
		w.endObject()
		w.endObject()
		return nil
	}
	return fmt.Errorf("%s: value of Go type %T cannot be serialized", e.loc(where), v)
}

func (e *encoder) nodeRef(n *fxgraph.Node, where siteID) error {
	w := e.w
	if n.Erased() || n.Graph() != e.p.Graph {
		return fmt.Errorf("%s: reference to a node outside the graph (%s)", e.loc(where), n)
	}
	if isSym(n.Type()) {
		tag := map[string]string{"SymInt": "as_sym_int", "SymBool": "as_sym_bool", "SymFloat": "as_sym_float"}[n.Type().(ops.PyType).Name]
		if tag == "" {
			tag = "as_sym_int"
		}
		writeSymName(w, tag, e.name(n))
		return nil
	}
	if _, ok := n.Type().(ops.TensorType); !ok && n.Op() != fxgraph.GetAttr {
		return fmt.Errorf("%s: %s has type %v, want a tensor", e.loc(where), n, n.Type())
	}
	writeTensorArg(w, "as_tensor", e.name(n))
	return nil
}

func (e *encoder) list(l ops.List, at *ops.ArgType, where siteID, emptyTag ...string) error {
	w := e.w
	tag := listTag(l, at)
	if len(l) == 0 && len(emptyTag) > 0 && emptyTag[0] != "" {
		tag = emptyTag[0]
	}
	if tag == "" {
		return fmt.Errorf("%s: list %v mixes kinds the format cannot hold", e.loc(where), l)
	}
	w.beginObject()
	w.key(tag)
	w.beginArray()
	for i, v := range l {
		switch tag {
		case "as_ints", "as_floats", "as_bools", "as_strings":
			w.valueScalar(v)
		case "as_tensors":
			n := v.(*fxgraph.Node)
			w.oneKey("name", func() { w.str(e.name(n)) })
		case "as_optional_tensors":
			if v == nil {
				writeConstant(w, nil)
				break
			}
			ip := e.child(where, site{kind: siteIndex, i: i})
			if err := e.nodeRef(v.(*fxgraph.Node), ip); err != nil {
				return err
			}
			e.drop(ip)
		case "as_sym_ints", "as_sym_floats", "as_sym_bools":
			if n, ok := v.(*fxgraph.Node); ok {
				w.oneKey("as_name", func() { w.str(e.name(n)) })
			} else {
				w.oneKey(map[string]string{"as_sym_ints": "as_int", "as_sym_floats": "as_float", "as_sym_bools": "as_bool"}[tag], func() { w.valueScalar(v) })
			}
		case "as_int_lists", "as_float_lists":
			w.beginArray()
			for _, x := range asSeq(v) {
				w.valueScalar(x)
			}
			w.endArray()
		case "as_nested_tensors":
			w.beginArray()
			for _, x := range asSeq(v) {
				w.oneKey("name", func() { w.str(e.name(x.(*fxgraph.Node))) })
			}
			w.endArray()
		}
	}
	w.endArray()
	w.endObject()
	return nil
}

func asSeq(v ops.Value) []ops.Value {
	switch x := v.(type) {
	case ops.List:
		return x
	case ops.Tuple:
		return x
	}
	return nil
}

func (w *pyWriter) valueScalar(v ops.Value) {
	switch x := v.(type) {
	case int64:
		w.int(x)
	case float64:
		w.float(x)
	case bool:
		w.bool(x)
	case string:
		w.str(x)
	default:
		w.null()
	}
}

// listTag picks the Argument tag of a list, as serialize_input does: by
// element kinds, and by the schema type for empty lists.
func listTag(l ops.List, at *ops.ArgType) string {
	if len(l) == 0 {
		if at == nil {
			return "as_tensors"
		}
		switch at.Base {
		case "int", "SymInt":
			return "as_ints"
		case "float":
			return "as_floats"
		case "bool":
			return "as_bools"
		case "str":
			return "as_strings"
		case "Tensor":
			if at.ElemOptional {
				return "as_optional_tensors"
			}
		}
		return "as_tensors"
	}
	all := func(f func(ops.Value) bool) bool {
		for _, v := range l {
			if !f(v) {
				return false
			}
		}
		return true
	}
	isTensor := func(v ops.Value) bool { n, ok := v.(*fxgraph.Node); return ok && !isSym(n.Type()) }
	isSymNode := func(v ops.Value) bool { n, ok := v.(*fxgraph.Node); return ok && isSym(n.Type()) }
	is := func(v ops.Value, kind string) bool {
		switch v.(type) {
		case int64:
			return kind == "int"
		case float64:
			return kind == "float"
		case bool:
			return kind == "bool"
		case string:
			return kind == "str"
		}
		return false
	}
	switch {
	case all(func(v ops.Value) bool { return is(v, "bool") }):
		return "as_bools"
	case all(func(v ops.Value) bool { return is(v, "int") }):
		return "as_ints"
	case all(func(v ops.Value) bool { return is(v, "float") }):
		return "as_floats"
	case all(func(v ops.Value) bool { return is(v, "str") }):
		return "as_strings"
	case all(isTensor):
		if at != nil && at.ElemOptional {
			return "as_optional_tensors"
		}
		return "as_tensors"
	case all(func(v ops.Value) bool { return v == nil || isTensor(v) }):
		return "as_optional_tensors"
	case all(func(v ops.Value) bool { return is(v, "int") || isSymNode(v) }):
		return "as_sym_ints"
	case all(func(v ops.Value) bool {
		s := asSeq(v)
		return s != nil && len(s) > 0 && ops.List(s) != nil && listTag(ops.List(s), nil) == "as_ints"
	}):
		return "as_int_lists"
	case all(func(v ops.Value) bool {
		s := asSeq(v)
		return s != nil && len(s) > 0 && listTag(ops.List(s), nil) == "as_floats"
	}):
		return "as_float_lists"
	case all(func(v ops.Value) bool {
		s := asSeq(v)
		return s != nil && len(s) > 0 && listTag(ops.List(s), nil) == "as_tensors"
	}):
		return "as_nested_tensors"
	}
	return ""
}

func (e *encoder) signature() error {
	w := e.w
	w.beginObject()
	w.keyLit("input_specs")
	w.beginArray()
	for i, s := range e.inputs {
		w.beginObject()
		w.key(s.Kind.String())
		w.beginObject()
		switch s.Kind {
		case UserInput:
			w.keyLit("arg")
			switch {
			case s.IsConst:
				writeConstant(w, s.Const)
			default:
				n := e.phs[i]
				if n != nil && isSym(n.Type()) {
					writeSymName(w, "as_sym_int", s.Name)
				} else {
					writeTensorArg(w, "as_tensor", s.Name)
				}
			}
		case Parameter, Buffer, TensorConstant:
			w.keyLit("arg")
			w.oneKey("name", func() { w.str(s.Name) })
			w.key(map[InputKind]string{Parameter: "parameter_name", Buffer: "buffer_name", TensorConstant: "tensor_constant_name"}[s.Kind])
			w.str(s.Target)
			if s.Kind == Buffer {
				w.keyLit("persistent")
				w.bool(s.Persistent)
			}
		case ConstantInput:
			w.keyLit("name")
			w.str(s.Name)
			w.keyLit("value")
			writeConstant(w, s.Const)
		default:
			return fmt.Errorf("input %q: unknown input kind %d", s.Name, s.Kind)
		}
		w.endObject()
		w.endObject()
	}
	w.endArray()
	w.keyLit("output_specs")
	w.beginArray()
	out, _ := e.p.Graph.OutputNode()
	results := ops.AsSequence(out.Arg(0))
	for i, s := range e.p.Signature.Outputs {
		var name string
		if n, ok := results[i].(*fxgraph.Node); ok {
			name = e.name(n)
		}
		w.beginObject()
		w.key(s.Kind.String())
		w.beginObject()
		w.keyLit("arg")
		if s.Kind == UserOutput {
			if err := e.value(results[i], nil, e.root(site{kind: siteOutput, i: i})); err != nil {
				return err
			}
		} else {
			w.oneKey("name", func() { w.str(name) })
		}
		switch s.Kind {
		case BufferMutation:
			w.keyLit("buffer_name")
			w.str(s.Target)
		case UserInputMutation:
			w.keyLit("user_input_name")
			w.str(s.Target)
		case ParameterMutation:
			w.keyLit("parameter_name")
			w.str(s.Target)
		}
		w.endObject()
		w.endObject()
	}
	w.endArray()
	w.endObject()
	return nil
}

// liftedName is the placeholder name torch.export gives a lifted
// parameter, buffer or constant (torch._export.utils.placeholder_naming_pass):
// "p_", "b_" or "c_" and the target with a leading "L__self___" or "self_"
// removed, lower-cased, every character other than an ASCII letter or digit
// replaced by "_" (module "block1-0" gives "block1_0": a name Python can
// read back); a name already taken gets the suffix "_1", "_2", ... as
// _rename_without_collisions gives placeholders.
func liftedName(kind InputKind, fqn string, taken map[string]bool) string {
	base := fqn
	if b, ok := strings.CutPrefix(base, "L__self___"); ok {
		base = b
	} else if b, ok := strings.CutPrefix(base, "self_"); ok {
		base = b
	}
	base = strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			return r
		case 'A' <= r && r <= 'Z':
			return r + ('a' - 'A')
		}
		return '_'
	}, base)
	name := map[InputKind]string{Parameter: "p_", Buffer: "b_", TensorConstant: "c_"}[kind] + base
	if !taken[name] {
		return name
	}
	for i := 1; ; i++ {
		if n := fmt.Sprintf("%s_%d", name, i); !taken[n] {
			return n
		}
	}
}
