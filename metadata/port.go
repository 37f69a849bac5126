package metadata

import (
	"context"
	"errors"
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// PassName is the name of [Pass].
const PassName = "port_node_meta_for_qdq"

// AnnotationKey is the fxgraph.Meta.Extra key under which quantizers store a
// node's annotation (torchao's Q_ANNOTATION_KEY).
const AnnotationKey = "quantization_annotation"

// Metadata keys that PortNodeMetaForQDQ copies (torchao's
// _METADATA_TO_PORT). stack_trace is fxgraph.Meta.StackTrace;
// quantization_tag is the Meta.Extra entry of that name.
const (
	KeyStackTrace      = "stack_trace"
	KeyQuantizationTag = "quantization_tag"
)

// PortedKeys lists every metadata key the pass copies, in copy order. It is
// the single statement of what is ported: nn_module_stack, from_node, custom
// and numeric_debug_handle are not.
var PortedKeys = []string{KeyStackTrace, KeyQuantizationTag}

// ErrNoChooseQParams is returned when a dynamically quantized input has no
// choose_qparams node downstream of it.
var ErrNoChooseQParams = errors.New("no choose_qparams node for a dynamic input")

// ErrStructure is returned when the nodes around a dynamic choose_qparams do
// not have the shape convert produces (two getitem users, one dequantize).
var ErrStructure = errors.New("unexpected dynamic quantization structure")

func packet(ns, name string) ops.Packet { return ops.Packet{NS: ns, Name: name} }

var (
	qd = func(name, ov string) ops.Overload { return packet("quantized_decomposed", name).Overload(ov) }
)

// viewOps are the view-like ops walked from a weight quantize back to its
// get_attr.
var viewOps = func() *ops.TargetSet {
	a := func(name, ov string) ops.Overload { return packet("aten", name).Overload(ov) }
	s := ops.NewTargetSet(a("flatten", "using_ints"), a("permute", "default"), a("permute_copy", "default"),
		a("slice_copy", "Tensor"), a("squeeze", "dim"), a("squeeze_copy", "dim"), a("transpose", "int"),
		packet("aten", "transpose_"), a("view_copy", "default"), a("view", "default"), packet("aten", "_mkldnn_transpose"))
	return s
}()

var symSizeOps = ops.NewTargetSet(packet("aten", "sym_size").Overload("int"), packet("aten", "sym_numel").Default(),
	packet("aten", "sym_size"), packet("aten", "sym_numel"))

// AnnotatedInput is one input_qspec_map entry with a non-nil spec: the
// input node and whether its spec is dynamic (is_dynamic set; a shared spec
// is not).
type AnnotatedInput struct {
	Node    *fxgraph.Node // the annotated input node
	Dynamic bool          // whether its spec is dynamic (is_dynamic set)
}

// AnnotationInfo is what the pass needs from an annotation: the inputs with
// a spec, in input_qspec_map order, and whether an output spec is set.
type AnnotationInfo struct {
	Inputs []AnnotatedInput // inputs with a spec, in input_qspec_map order
	Output bool             // whether output_qspec is set
}

// Options configures [PortNodeMetaForQDQ].
type Options struct {
	// Annotation returns n's annotation and true when n has a valid one
	// (an input spec entry or an output spec). nil means
	// [DefaultAnnotation].
	Annotation func(n *fxgraph.Node) (AnnotationInfo, bool)
}

// DefaultAnnotation reads Meta.Extra[AnnotationKey] when it holds an
// AnnotationInfo or *AnnotationInfo with at least one input or an output.
func DefaultAnnotation(n *fxgraph.Node) (AnnotationInfo, bool) {
	v, ok := n.Meta.Get(AnnotationKey)
	if !ok {
		return AnnotationInfo{}, false
	}
	var a AnnotationInfo
	switch x := v.(type) {
	case AnnotationInfo:
		a = x
	case *AnnotationInfo:
		if x == nil {
			return AnnotationInfo{}, false
		}
		a = *x
	default:
		return AnnotationInfo{}, false
	}
	return a, len(a.Inputs) > 0 || a.Output
}

// Pass returns [PortNodeMetaForQDQ] as a pipeline pass.
func Pass(opts Options) fxgraph.Pass {
	return fxgraph.Pass{Name: PassName, Run: func(ctx context.Context, g *fxgraph.Graph) (fxgraph.Result, error) {
		if err := ctx.Err(); err != nil {
			return fxgraph.Result{}, err
		}
		return PortNodeMetaForQDQ(g, opts)
	}}
}

type porter struct {
	q, dq, cq *ops.TargetSet
	res       fxgraph.Result
}

// PortNodeMetaForQDQ copies [PortedKeys] from each annotated node onto the
// quantize / dequantize / choose_qparams nodes that belong to it
// (torchao-pt2e.md 8), visiting nodes in program order:
//
//   - a dynamic input: the first choose_qparams found breadth-first from the
//     input's users, the quantize reached through its second getitem, and
//     that quantize's dequantize get the annotated node's keys;
//   - a static input: the first dequantize among the node's positional
//     arguments, then among its keyword arguments (upstream's kwargs loop
//     never finds one), that is connected to the input through q/dq ops gets
//     the annotated node's keys; its quantize, when present and fed through
//     view ops by a get_attr, gets the get_attr's keys, as do those views;
//   - the output: the quantize that is the node's last user gets its keys.
//
// Only the keys listed in PortedKeys move, and only when present on the
// source. Result.Changed is true when some metadata changed;
// Result.Stats["ported"] counts the nodes that changed, and Notes carries
// upstream's warnings (an output with several users, an output whose user
// is not a quantize). A dynamic input with no choose_qparams, or one whose
// choose_qparams does not have exactly two users, is an error naming the
// nodes; the graph may then be partly updated (run it in a Pipeline for an
// all-or-nothing edit).
func PortNodeMetaForQDQ(g *fxgraph.Graph, opts Options) (fxgraph.Result, error) {
	ann := opts.Annotation
	if ann == nil {
		ann = DefaultAnnotation
	}
	p := &porter{q: ops.QuantizeOps(), dq: ops.DequantizeOps(), cq: ops.ChooseQParamsOps(), res: fxgraph.Result{Stats: map[string]int{"ported": 0}}}
	for _, n := range g.Nodes() {
		a, ok := ann(n)
		if !ok {
			continue
		}
		for _, in := range a.Inputs {
			if in.Node == nil {
				continue
			}
			var err error
			if in.Dynamic {
				err = p.dynamicInput(in.Node, n)
			} else {
				p.staticInput(in.Node, n)
			}
			if err != nil {
				return p.res, fmt.Errorf("port metadata: node %q, input %q: %w", n.Name(), in.Node.Name(), err)
			}
		}
		if a.Output {
			p.output(n)
		}
	}
	return p.res, nil
}

func (p *porter) is(n *fxgraph.Node, s *ops.TargetSet) bool {
	return n != nil && n.Op() == fxgraph.CallFunction && s.Has(n.Target())
}

// nonSymUsers returns n's users other than sym_size / sym_numel calls.
func nonSymUsers(n *fxgraph.Node) []*fxgraph.Node {
	var out []*fxgraph.Node
	for _, u := range n.Users() {
		if u.Op() == fxgraph.CallFunction && symSizeOps.Has(u.Target()) {
			continue
		}
		out = append(out, u)
	}
	return out
}

func (p *porter) dynamicInput(input, node *fxgraph.Node) error {
	cq := p.findChooseQParams(input)
	if cq == nil {
		return fmt.Errorf("%w: searched the users of %q breadth-first", ErrNoChooseQParams, input.Name())
	}
	users := nonSymUsers(cq)
	if len(users) != 2 {
		return fmt.Errorf("%w: choose_qparams node %q: want 2 users (scale and zero point getitems), got %d", ErrStructure, cq.Name(), len(users))
	}
	last := users[len(users)-1]
	lu := last.Users()
	if len(lu) == 0 {
		return fmt.Errorf("%w: getitem node %q: want a quantize user, got none", ErrStructure, last.Name())
	}
	q := lu[0]
	qu := nonSymUsers(q)
	if len(qu) != 1 {
		return fmt.Errorf("%w: dynamic quantize node %q: want one dequantize user, got %d", ErrStructure, q.Name(), len(qu))
	}
	p.port(cq, node)
	p.port(q, node)
	p.port(qu[0], node)
	return nil
}

func (p *porter) findChooseQParams(input *fxgraph.Node) *fxgraph.Node {
	queue := append([]*fxgraph.Node(nil), input.Users()...)
	seen := map[*fxgraph.Node]bool{}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if seen[n] {
			continue
		}
		seen[n] = true
		if n.Op() == fxgraph.Output {
			continue
		}
		if p.is(n, p.cq) {
			return n
		}
		queue = append(queue, n.Users()...)
	}
	return nil
}

// connected is _is_connected: walk args[0] of dest through q/dq/choose ops
// and report whether the walk ends at source.
func (p *porter) connected(source, dest *fxgraph.Node) bool {
	for steps := 0; p.is(dest, p.q) || p.is(dest, p.dq) || p.is(dest, p.cq); steps++ {
		next, ok := dest.Arg(0).(*fxgraph.Node)
		if !ok || steps > 1<<20 {
			return false
		}
		dest = next
	}
	return dest == source
}

func (p *porter) staticInput(input, node *fxgraph.Node) {
	var dq *fxgraph.Node
	for _, a := range node.Args() {
		if d, ok := a.(*fxgraph.Node); ok && p.is(d, p.dq) && p.connected(input, d) {
			dq = d
			break
		}
	}
	if dq == nil {
		for _, kw := range node.Kwargs() {
			if d, ok := kw.Value.(*fxgraph.Node); ok && p.is(d, p.dq) && p.connected(input, d) {
				dq = d
				break
			}
		}
	}
	if dq == nil {
		return
	}
	if q, ok := dq.Arg(0).(*fxgraph.Node); ok && p.is(q, p.q) {
		chain := []*fxgraph.Node{q}
		in, _ := q.Arg(0).(*fxgraph.Node)
		for p.is(in, viewOps) {
			chain = append(chain, in)
			in, _ = in.Arg(0).(*fxgraph.Node)
		}
		if in != nil && in.Op() == fxgraph.GetAttr {
			for _, c := range chain {
				p.port(c, in)
			}
		}
	}
	p.port(dq, node)
}

func (p *porter) output(node *fxgraph.Node) {
	if len(node.Users()) == 0 {
		return
	}
	users := nonSymUsers(node)
	if len(users) != 1 {
		p.res.Notes = append(p.res.Notes, fmt.Sprintf("node %q: expected one user for the output quantize, got %d; using the last", node.Name(), len(users)))
	}
	if len(users) == 0 {
		return
	}
	q := users[len(users)-1]
	if !p.is(q, p.q) {
		p.res.Notes = append(p.res.Notes, fmt.Sprintf("node %q: expected a quantize as its output user, got %q (%s)", node.Name(), q.Name(), q.TargetName()))
		return
	}
	p.port(q, node)
}

// port copies PortedKeys from src onto dst, counting dst when it changed.
func (p *porter) port(dst, src *fxgraph.Node) {
	if CopyPorted(dst, src) {
		p.res.Changed = true
		p.res.Stats["ported"]++
	}
}

// CopyPorted copies the keys of [PortedKeys] that src has onto dst and
// reports whether dst's metadata changed.
func CopyPorted(dst, src *fxgraph.Node) bool {
	changed := false
	if src.Meta.StackTrace != "" && dst.Meta.StackTrace != src.Meta.StackTrace {
		dst.Meta.StackTrace = src.Meta.StackTrace
		changed = true
	}
	if v, ok := src.Meta.Get(KeyQuantizationTag); ok {
		if old, had := dst.Meta.Get(KeyQuantizationTag); !had || !sameValue(old, v) {
			dst.Meta.Set(KeyQuantizationTag, v)
			changed = true
		}
	}
	return changed
}

func sameValue(a, b any) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return a == b
}
