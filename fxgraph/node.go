package fxgraph

import (
	"fmt"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/fxquant/fxquant/ops"
)

// OpKind is a node's opcode, as torch.fx's node.op.
type OpKind uint8

// The node kinds of torch.fx.
const (
	Placeholder OpKind = iota + 1
	GetAttr
	CallFunction
	CallMethod
	CallModule
	Output
)

var opKindNames = [...]string{"", "placeholder", "get_attr", "call_function", "call_method", "call_module", "output"}

// String returns FX's opcode name, e.g. "call_function".
func (k OpKind) String() string {
	if int(k) < len(opKindNames) && k > 0 {
		return opKindNames[k]
	}
	return fmt.Sprintf("opkind(%d)", uint8(k))
}

// ParseOpKind parses an FX opcode name.
func ParseOpKind(s string) (OpKind, error) {
	for i := 1; i < len(opKindNames); i++ {
		if opKindNames[i] == s {
			return OpKind(i), nil
		}
	}
	return 0, fmt.Errorf("fxgraph: unknown opcode %q", s)
}

// Kwarg is one keyword argument of a node.
type Kwarg = ops.Kwarg

// Use records one appearance of a node in a user's arguments. A user that
// names the same node twice (add(x, x)) gives x two uses.
type Use struct {
	// User is the node whose args or kwargs hold the reference.
	User *Node
	// Slot is the appearance's position among all node references of the
	// user's args then kwargs, in depth-first order.
	Slot int
}

// Node is one operation of a [Graph]: torch.fx's Node. A node's arguments
// are [ops.Value]s in which *Node stands for a reference to another node.
//
// Read a node through its methods; change it only through Graph methods,
// which keep use lists right.
type Node struct {
	// The fields are laid out in three 64-byte lines, and nodes come from
	// slabs whose chunks start on a line, so a node never straddles more
	// lines than it fills. The first line holds what a walk over the list
	// reads for every node (links, use counts, opcode, id); the second what
	// reading a call reads (target, references, arguments); the third the
	// rest.
	prev, next *Node
	graph      *Graph
	// uses holds one record per appearance of n in a user's arguments.
	// Removed records are tombstoned (User == nil) so that removal is O(1);
	// deadUses counts them and the list is compacted once they make up
	// half of it.
	uses     []Use
	deadUses int32
	op       OpKind
	erased   bool
	inUnused bool  // in the graph's list of unused nodes (see Graph.unused)
	jflags   uint8 // what the open transaction has recorded (see journal.go)
	id       int

	target ops.Target // call_function only
	// refs has one entry per node-reference slot of n's args then kwargs:
	// the referenced node and the index of the matching record in its
	// uses (def == nil when the reference got no record: an erased node or
	// a node of another graph).
	refs []useRef
	args []ops.Value

	// kw points at the keyword arguments (nil when there are none, as for
	// most nodes), which keeps the node within three lines.
	kw         *[]Kwarg
	name       string
	targetName string // placeholder, get_attr, call_method, call_module: the string target
	typ        ops.Type

	// Meta is the node's metadata: typed fields plus an open map. Passes
	// may read and write it directly (n.Meta.StackTrace = ...) or replace
	// it whole (*n.Meta = m); it takes no part in use lists. It is never
	// nil on a node a Graph made, and it is the node's own: no two nodes
	// share one. It sits out of line, in per-graph chunks, so that walks
	// over the node list, which never read it, touch less memory.
	Meta *Meta
}

// ID returns the node's dense id, unique in its graph and never reused.
func (n *Node) ID() int { return n.id }

// Name returns the node's unique name.
func (n *Node) Name() string { return n.name }

// Op returns the opcode.
func (n *Node) Op() OpKind { return n.op }

// Target returns the call_function target; nil for other opcodes.
func (n *Node) Target() ops.Target { return n.target }

// TargetName returns the string target of a placeholder (the input name),
// get_attr (the attribute path), call_method (the method), call_module (the
// module path) or output ("output"), and the printed target of a
// call_function.
func (n *Node) TargetName() string {
	if n.op == CallFunction && n.target != nil {
		return n.target.String()
	}
	return n.targetName
}

// Args returns the positional arguments. The slice is shared: do not
// modify it; use [Graph.SetArgs] or [Graph.SetArg].
func (n *Node) Args() []ops.Value { return n.args }

// Arg returns positional argument i, or nil when there are fewer.
func (n *Node) Arg(i int) ops.Value {
	if i < 0 || i >= len(n.args) {
		return nil
	}
	return n.args[i]
}

// Kwargs returns the keyword arguments in order. The slice is shared: do
// not modify it.
func (n *Node) Kwargs() []Kwarg {
	if n.kw == nil {
		return nil
	}
	return *n.kw
}

// Kwarg returns the keyword argument called name.
func (n *Node) Kwarg(name string) (ops.Value, bool) {
	for _, kw := range n.Kwargs() {
		if kw.Name == name {
			return kw.Value, true
		}
	}
	return nil, false
}

// Type returns the node's static type (nil when unknown).
func (n *Node) Type() ops.Type { return n.typ }

// TensorType returns the node's type as a tensor type.
func (n *Node) TensorType() (ops.TensorType, bool) {
	t, ok := n.typ.(ops.TensorType)
	return t, ok
}

// SetType sets the node's static type.
func (n *Node) SetType(t ops.Type) {
	if g := n.graph; g != nil {
		if j := g.j; j != nil && n.jflags&jType == 0 {
			n.jflags |= jType
			j.types = append(j.types, typeRec{n: n, typ: n.typ})
		}
		t = g.internType(t)
	}
	n.typ = t
}

// Graph returns the owning graph.
func (n *Node) Graph() *Graph { return n.graph }

// Erased reports whether the node has been erased from its graph.
func (n *Node) Erased() bool { return n.erased }

// Next returns the following node in program order, or nil at the end.
func (n *Node) Next() *Node {
	if n.next == nil || n.next == &n.graph.root {
		return nil
	}
	return n.next
}

// Prev returns the preceding node in program order, or nil at the start.
func (n *Node) Prev() *Node {
	if n.prev == nil || n.prev == &n.graph.root {
		return nil
	}
	return n.prev
}

// useRef is a user's back pointer to one of its use records.
type useRef struct {
	def *Node
	idx int
}

// Uses returns one record per appearance of n in its users' arguments, in
// the order the uses were added. The slice may be shared: do not modify it.
func (n *Node) Uses() []Use {
	if n.deadUses == 0 {
		return n.uses
	}
	out := make([]Use, 0, len(n.uses)-int(n.deadUses))
	for _, u := range n.uses {
		if u.User != nil {
			out = append(out, u)
		}
	}
	return out
}

// NumUses counts appearances (add(x, x) counts two).
func (n *Node) NumUses() int { return len(n.uses) - int(n.deadUses) }

// smallDistinct is the size up to which distinct-node scans use a linear
// search instead of a set; above it they cost O(k) with a map.
const smallDistinct = 16

// Users returns the distinct users in first-use order, as FX's node.users.
// It is linear in the number of uses and needs no set: a user's records
// are added together in slot order, so a record is its user's first one
// exactly when no smaller slot of the user refers to n.
func (n *Node) Users() []*Node {
	if n.NumUses() == 0 {
		return nil
	}
	out := make([]*Node, 0, n.NumUses())
	var seen map[*Node]struct{} // only for users with very many references
	for _, u := range n.uses {
		if u.User == nil {
			continue
		}
		if u.Slot <= smallDistinct && u.Slot <= len(u.User.refs) {
			first := true
			for _, r := range u.User.refs[:u.Slot] {
				if r.def == n {
					first = false
					break
				}
			}
			if first {
				out = append(out, u.User)
				if seen != nil {
					seen[u.User] = struct{}{}
				}
			}
			continue
		}
		if seen == nil {
			seen = make(map[*Node]struct{}, len(out)+1)
			for _, o := range out {
				seen[o] = struct{}{}
			}
		}
		if _, dup := seen[u.User]; !dup {
			seen[u.User] = struct{}{}
			out = append(out, u.User)
		}
	}
	return out
}

// NumUsers counts distinct users, as FX's len(node.users).
func (n *Node) NumUsers() int { return countUsers(n) }

// countUsers returns n.NumUsers(), the number of distinct users among
// n's use records, reading only those records (NumUsers also reads each
// user's references, a cache miss per user in a big graph) and without
// building the list of users.
func countUsers(n *Node) int {
	if k := n.NumUses(); k <= 1 {
		return k
	}
	if len(n.uses) > smallDistinct {
		return countDistinctUsers(n.uses)
	}
	count := 0
	for i, u := range n.uses {
		if u.User == nil {
			continue
		}
		first := true
		for _, v := range n.uses[:i] {
			if v.User == u.User {
				first = false
				break
			}
		}
		if first {
			count++
		}
	}
	return count
}

// countDistinctUsers counts the distinct users of uses with a set of
// their addresses, open-addressed in a table at least twice as long as
// uses (nodes never move, and the set only compares addresses). A hub's
// thousands of uses cost a Go map several times as much in hashing.
func countDistinctUsers(uses []Use) int {
	bits := bits.Len(uint(2 * len(uses)))
	set := make([]uintptr, 1<<bits)
	mask := uintptr(len(set) - 1)
	count := 0
	for _, u := range uses {
		if u.User == nil {
			continue
		}
		p := uintptr(unsafe.Pointer(u.User))
		i := uintptr(uint64(p) * 0x9e3779b97f4a7c15 >> (64 - bits)) // Fibonacci hashing
		for set[i] != 0 && set[i] != p {
			i = (i + 1) & mask
		}
		if set[i] == 0 {
			set[i] = p
			count++
		}
	}
	return count
}

// InputNodes returns the distinct nodes in args then kwargs, in depth-first
// order of first appearance (FX's all_input_nodes). It is linear in the
// number of references.
func (n *Node) InputNodes() []*Node {
	var out []*Node
	var seen map[*Node]struct{}
	n.walkRefs(func(m *Node) {
		if seen == nil && len(out) < smallDistinct {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
			return
		}
		if seen == nil {
			seen = make(map[*Node]struct{}, 2*smallDistinct)
			for _, o := range out {
				seen[o] = struct{}{}
			}
		}
		if _, dup := seen[m]; !dup {
			seen[m] = struct{}{}
			out = append(out, m)
		}
	})
	return out
}

// VisitInputs calls fn for every node reference in n's args then kwargs,
// in slot order: a node passed twice is visited twice ([Node.InputNodes]
// lists each once). Unlike InputNodes it allocates nothing, for loops that
// run once per node per pass, as an interpreter's.
func (n *Node) VisitInputs(fn func(*Node)) { n.walkRefs(fn) }

// walkRefs calls fn for every node reference in args then kwargs, in slot
// order.
func (n *Node) walkRefs(fn func(*Node)) {
	for _, a := range n.args {
		walkValue(a, fn)
	}
	for _, kw := range n.Kwargs() {
		walkValue(kw.Value, fn)
	}
}

func walkValue(v ops.Value, fn func(*Node)) {
	switch x := v.(type) {
	case *Node:
		if x != nil {
			fn(x)
		}
	case ops.List:
		for _, e := range x {
			walkValue(e, fn)
		}
	case ops.Tuple:
		for _, e := range x {
			walkValue(e, fn)
		}
	case ops.Dict:
		for _, e := range x.Values {
			walkValue(e, fn)
		}
	case ops.Slice:
		walkValue(x.Start, fn)
		walkValue(x.Stop, fn)
		walkValue(x.Step, fn)
	}
}

// String returns "%name" for messages.
func (n *Node) String() string {
	if n == nil {
		return "<nil node>"
	}
	return "%" + n.name
}

// IsImpure reports whether DCE must keep n when unused: placeholders and
// outputs, mutable-schema or impure ops (from the registry row), and
// call_module nodes whose module says so. get_attr and call_method nodes
// are pure, as in torch.fx.
func (n *Node) IsImpure(reg *ops.Registry) bool {
	switch n.op {
	case Placeholder, Output:
		return true
	case CallModule:
		if m, ok := n.graph.Attr(n.targetName); ok {
			if im, ok := m.(interface{ IsImpure() bool }); ok {
				return im.IsImpure()
			}
		}
		return false
	case CallFunction:
		if reg == nil {
			reg = ops.Default()
		}
		return reg.IsImpure(n.target)
	}
	return false
}
