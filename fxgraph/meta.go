package fxgraph

import (
	"maps"
	"slices"
)

// ModuleStackEntry is one entry of nn_module_stack: the key FX uses, the
// module path and the module's class.
type ModuleStackEntry struct {
	Key  string // "L__self___linear"
	Path string // "linear"
	Type string // "torch.nn.modules.linear.Linear"
}

// SourceFn is one entry of source_fn_stack: a name and the qualified target.
type SourceFn struct {
	Name   string // "linear"
	Target string // "torch.nn.modules.linear.Linear"
}

// NodeRefHolder is implemented by metadata values that refer to nodes of
// the graph, such as a quantizer's annotation. [Graph.Clone] replaces such a
// value in the clone with RemapNodes' result, which must refer to the nodes
// mapNode returns (mapNode returns its argument for nodes outside the
// graph). RemapNodes must not modify the receiver.
type NodeRefHolder interface {
	// RemapNodes returns a copy of the receiver in which every node
	// reference n is replaced by mapNode(n). It must not modify the
	// receiver, which stays in the original graph's metadata.
	RemapNodes(mapNode func(*Node) *Node) any
}

// Meta is a node's metadata: the keys PyTorch and torchao give meaning to
// as typed fields, plus an open map for the rest. The zero value is empty.
type Meta struct {
	// StackTrace is node.meta["stack_trace"]: the user code that created
	// the node ("" when absent).
	StackTrace string
	// NNModuleStack is node.meta["nn_module_stack"]: the modules the node
	// was traced in, outermost first.
	NNModuleStack []ModuleStackEntry
	// SourceFnStack is node.meta["source_fn_stack"]: the source functions
	// or modules the node came from, outermost first.
	SourceFnStack []SourceFn
	TorchFn       []string // two strings: name and qualified function

	// Custom is the user's node.meta["custom"] as JSON text ("" when absent).
	Custom string
	// FromNode is the provenance record as JSON text ("" when absent).
	FromNode string
	// NumericDebugHandle is torchao's numeric debug handle (0 = none).
	NumericDebugHandle int
	// Extra holds every other key. Printers iterate it in sorted key order.
	Extra map[string]any
}

// Clone returns a copy that shares no slices or maps with m (values inside
// Extra are shallow-copied, as FX's node_copy does).
func (m Meta) Clone() Meta {
	c := m
	c.NNModuleStack = slices.Clone(m.NNModuleStack)
	c.SourceFnStack = slices.Clone(m.SourceFnStack)
	c.TorchFn = slices.Clone(m.TorchFn)
	c.Extra = maps.Clone(m.Extra)
	return c
}

// IsZero reports whether m holds nothing.
func (m Meta) IsZero() bool {
	return m.StackTrace == "" && len(m.NNModuleStack) == 0 && len(m.SourceFnStack) == 0 && len(m.TorchFn) == 0 &&
		m.Custom == "" && m.FromNode == "" && m.NumericDebugHandle == 0 && len(m.Extra) == 0
}

// Get returns an Extra entry.
func (m *Meta) Get(key string) (any, bool) {
	v, ok := m.Extra[key]
	return v, ok
}

// Set stores an Extra entry.
func (m *Meta) Set(key string, v any) {
	if m.Extra == nil {
		m.Extra = map[string]any{}
	}
	m.Extra[key] = v
}

// ExtraKeys returns the Extra keys in sorted order.
func (m Meta) ExtraKeys() []string {
	return slices.Sorted(maps.Keys(m.Extra))
}
