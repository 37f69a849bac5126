package pt2

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// Sentinel errors; every returned error that matches one also names the
// JSON field path, node or record concerned.
var (
	// ErrSchemaVersion: the program's schema major version is not 8.
	ErrSchemaVersion = errors.New("unsupported schema version")
	// ErrUnknownOp: a target the registry does not know (see Options.AllowOpaque).
	ErrUnknownOp = errors.New("unknown operator")
	// ErrUnsupported: a valid PT2 feature outside fxquant's subset
	// (control flow, custom objects, symbolic sizes, sparse layouts, ...).
	ErrUnsupported = errors.New("unsupported feature")
	// ErrDangling: a reference to a tensor or symbol name that is not defined.
	ErrDangling = errors.New("undefined name")
	// ErrArchive: a malformed archive (format, version, missing records).
	ErrArchive = errors.New("malformed archive")
)

// PathError reports a problem at one place of a serialized program, named
// by its JSON field path: `graph_module.graph.nodes[12].inputs[0]`.
type PathError struct {
	// Path is the JSON field path (or archive record) concerned; empty
	// when the problem is the whole document.
	Path string
	// Err is the cause; it may wrap one of the sentinel errors above.
	Err error
}

// Error returns "path: cause".
func (e *PathError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *PathError) Unwrap() error { return e.Err }

func pathErr(path string, err error) error {
	var pe *PathError
	if errors.As(err, &pe) {
		return err
	}
	return &PathError{Path: path, Err: err}
}

func pathErrf(path string, format string, args ...any) error {
	return &PathError{Path: path, Err: fmt.Errorf(format, args...)}
}

// Options control reading.
type Options struct {
	// Registry resolves targets to schemas; nil means ops.Default().
	Registry *ops.Registry
	// AllowOpaque accepts operators the registry does not know. Their
	// inputs are bound by the serialized argument kinds (positional or
	// keyword) and their argument names are kept for writing back.
	AllowOpaque bool
	// SkipVersionCheck accepts any schema major version, as PyTorch's
	// private _unsafe_skip_version_check does.
	SkipVersionCheck bool
	// Model is the model name inside a PT2 archive; "" means "model", or
	// the only model when the archive holds exactly one.
	Model string
	// Limits bound the memory a (possibly hostile) archive can make the
	// reader use; see limits.go. Zero means the default.
	Limits
	// ShareBytes lets Read keep views of its input: a weight stored
	// uncompressed in the archive (as torch.export.save stores them)
	// becomes a tensor over the input's bytes instead of a copy of them,
	// so the input must not change while the program's tensors are in
	// use. The payload's CRC is checked as when it is copied.
	ShareBytes bool
	// MapFile makes ReadFile map the file into memory (read-only pages,
	// private copy-on-write, on Unix; elsewhere, or when mapping fails,
	// it reads the file) and read it with ShareBytes: the weights stay in
	// the page cache, outside the Go heap, and are never copied. The
	// mapping is never unmapped, since tensors may outlive the program:
	// use it for programs the process keeps, and do not truncate the file
	// while it runs.
	MapFile bool
}

func (o *Options) registry() *ops.Registry {
	if o != nil && o.Registry != nil {
		return o.Registry
	}
	return ops.Default()
}

// Container says which file layout a program was read from.
type Container int

// The containers Read understands.
const (
	// ContainerJSON is a bare ExportedProgram JSON document.
	ContainerJSON Container = iota
	// ContainerPT2 is a PT2 archive (torch >= 2.8): archive_format,
	// models/<name>.json and payload configs under one root folder.
	ContainerPT2
	// ContainerLegacy is the flat zip of torch <= 2.7 with
	// serialized_exported_program.json and pickled weights.
	ContainerLegacy
)

// String names the container.
func (c Container) String() string {
	switch c {
	case ContainerJSON:
		return "json"
	case ContainerPT2:
		return "pt2"
	case ContainerLegacy:
		return "legacy-zip"
	}
	return fmt.Sprintf("container(%d)", int(c))
}

// Version is a serde schema version.
type Version struct {
	// Major must be 8 for the reader (see Options.SkipVersionCheck).
	Major int64
	// Minor is any minor version; the writer always declares WriteVersion.
	Minor int64
}

// String returns "major.minor".
func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// WriteVersion is the schema version the writer declares: the version
// torch 2.14 writes, whose fields the writer reproduces.
var WriteVersion = Version{8, 20}

// InputKind is the kind of one graph input (an InputSpec variant).
type InputKind int

// Input kinds of the graph signature.
const (
	UserInput InputKind = iota
	Parameter
	Buffer
	TensorConstant
	ConstantInput
)

var inputKindTags = []string{"user_input", "parameter", "buffer", "tensor_constant", "constant_input"}

// String returns the serialized tag, e.g. "parameter".
func (k InputKind) String() string {
	if int(k) >= 0 && int(k) < len(inputKindTags) {
		return inputKindTags[k]
	}
	return fmt.Sprintf("input_kind(%d)", int(k))
}

// InputSpec describes one graph input, in graph-input order.
type InputSpec struct {
	// Kind says what the input stands for: a user input or lifted state.
	Kind InputKind
	// Name is the placeholder's name ("p_fc1_weight", "x").
	Name string
	// Target is the fully qualified name of the parameter, buffer or
	// constant in the state dict ("fc1.weight"); empty for user inputs.
	Target string
	// Persistent is the buffer's persistence flag.
	Persistent bool
	// Const is a user input's constant value (when the program was
	// exported with a constant for it) or a constant_input's value; its
	// presence is marked by IsConst.
	Const ops.Value
	// IsConst marks that Const is set (Const may be nil for None).
	IsConst bool
}

// OutputKind is the kind of one graph output (an OutputSpec variant).
type OutputKind int

// Output kinds of the graph signature.
const (
	UserOutput OutputKind = iota
	BufferMutation
	UserInputMutation
	ParameterMutation
	LossOutput
)

var outputKindTags = []string{"user_output", "buffer_mutation", "user_input_mutation", "parameter_mutation", "loss_output"}

// String returns the serialized tag, e.g. "buffer_mutation".
func (k OutputKind) String() string {
	if int(k) >= 0 && int(k) < len(outputKindTags) {
		return outputKindTags[k]
	}
	return fmt.Sprintf("output_kind(%d)", int(k))
}

// OutputSpec describes one graph output, in output order.
type OutputSpec struct {
	// Kind says what the output is: a user output or a mutation.
	Kind OutputKind
	// Name is the returned tensor's name; empty for a constant output.
	Name string
	// Target is the mutated buffer/parameter FQN or user input name.
	Target string
}

// Signature is the graph signature of an ExportedProgram.
type Signature struct {
	// Inputs has one entry per graph placeholder, in placeholder order.
	Inputs []InputSpec
	// Outputs has one entry per result of the output node, in order.
	Outputs []OutputSpec
}

// TensorInfo is what the payload config says about one stored tensor
// beyond its value.
type TensorInfo struct {
	// IsParam is the payload's is_param flag: the tensor is stored as an
	// nn.Parameter.
	IsParam bool
	// RequiresGrad is the tensor meta's requires_grad flag.
	RequiresGrad bool
	// Device is the tensor's device: "cpu", "cuda:0".
	Device string
}

// Unreadable is a payload present in the file that fxquant cannot decode
// (a pickle): it is reported, never silently dropped.
type Unreadable struct {
	// Record is the archive record name ("data/weights/model.pt").
	Record string
	// FQN names the tensor or object, when known.
	FQN string
	// Reason says why it cannot be read.
	Reason string
}

// Program is an ExportedProgram: the graph plus everything the writer needs
// to reproduce the file. Parameters, buffers and constants are attributes
// of Graph under their FQN (*tensor.Tensor values); placeholders stay in
// the graph, named as in the program, and Signature ties the two together.
type Program struct {
	// Graph is the program's graph: placeholders, call_function nodes
	// (with operator.getitem nodes for multi-output ops) and an output
	// node returning a tuple.
	Graph *fxgraph.Graph
	// Signature lists the inputs and outputs in graph order.
	Signature Signature
	// Tensors maps weight FQNs to their payload details.
	Tensors map[string]TensorInfo

	// SchemaVersion is the serde schema version the file declared; the
	// writer declares WriteVersion instead.
	SchemaVersion Version
	// TorchVersion is the torch_version that wrote the file ("2.14.1");
	// "<=2.4" when the field is absent. Empty writes "2.14.1".
	TorchVersion string
	// Verifiers names the IR dialects the program was verified against
	// (["TRAINING"]), from "verifiers" or the older "dialect" field.
	Verifiers []string
	// GuardsCode is the program's guards_code (Python guard sources),
	// written back as read.
	GuardsCode []string

	// The fields below are kept verbatim (JSON text) for round-tripping;
	// nil means absent, and the writer then emits what PyTorch writes for
	// a program without them.

	// OpsetVersion is the opset_version object, e.g. {"aten": 10}.
	OpsetVersion json.RawMessage
	// RangeConstraints is range_constraints: value ranges of symbols, as
	// read. The reader puts them in the graph's symbol table
	// (fxgraph.Graph.Symbols), from which the writer writes them when the
	// graph has symbols; this text is written only for a graph without.
	RangeConstraints json.RawMessage
	// ModuleCallGraph is graph_module.module_call_graph: the call
	// signatures (pytree specs) of the root module and submodules.
	ModuleCallGraph json.RawMessage
	// GraphModuleMetadata is graph_module.metadata.
	GraphModuleMetadata json.RawMessage
	// TreespecNamedtupleFields is graph_module.treespec_namedtuple_fields.
	TreespecNamedtupleFields json.RawMessage
	// SymIntValues is graph.sym_int_values as read (static programs: {}).
	// The writer does not use it: it writes one entry per SymInt node of
	// the graph, the value read for it or one derived from its inputs.
	SymIntValues json.RawMessage

	// Container is the layout the program was read from.
	Container Container
	// ModelName is the model's name in its archive ("model").
	ModelName string
	// ArchiveRoot is the root folder of the archive ("archive").
	ArchiveRoot string
	// Unreadable lists payloads that were present but not decoded.
	Unreadable []Unreadable
	// ExtraFiles holds the archive's extra/<name> records.
	ExtraFiles map[string][]byte
	// SampleInputs is the data/sample_inputs/<name>.pt record as read (a
	// torch.save pickle of the example (args, kwargs)), written back
	// verbatim; empty means "no example inputs", which torch.export.load
	// accepts (example_inputs is then None).
	SampleInputs []byte

	// LiftSpecs tells the writer how to lift attributes into graph
	// inputs, by FQN: Kind (Parameter, Buffer or TensorConstant), Name
	// (the placeholder name; "" means p_/b_/c_ plus the FQN with dots as
	// underscores) and Persistent. Every get_attr node is lifted: by its
	// entry here, or else as a persistent buffer "b_<fqn>", which is what
	// torch.export makes of tensors convert registers with
	// register_buffer. Listed attributes that no node reads are lifted as
	// well (torch.export keeps unused parameters and buffers). The
	// command's run -o fills it from the float program's signature so that
	// parameters stay parameters.
	LiftSpecs map[string]InputSpec

	// serialNames maps a node's name in Graph to its name in the file
	// where they differ (fxgraph's namespace renames Python builtins and
	// keywords: a value "input" becomes node "input_1"); the writer
	// writes the file's names back.
	serialNames map[string]string

	// opaque holds, for nodes whose operator had no schema when read,
	// what the writer needs to serialize them again.
	opaque map[*fxgraph.Node]*opaqueInfo
	// metas holds the serialized tensor metadata by tensor name, reused
	// on write when the value's type still matches.
	metas map[string]tensorMeta
	// symVals holds sym_int_values by node name, written back for the
	// symbolic scalar nodes still in the graph; symPlain records that the
	// file wrote expressions in sympy's str form rather than as sreprs.
	symVals  map[string]symVal
	symPlain bool
}

// opaqueInfo describes a node whose operator has no schema: its argument
// names and empty-list tags (args then kwargs), and the form of its
// results ("single", "tuple" or "list").
type opaqueInfo struct {
	args []opaqueArg
	out  string
}

func (p *Program) setOpaque(n *fxgraph.Node, args []opaqueArg) {
	if p.opaque == nil {
		p.opaque = map[*fxgraph.Node]*opaqueInfo{}
	}
	p.opaque[n] = &opaqueInfo{args: args}
}

// SerializedName returns the name the value of node n has in the file it
// was read from, which differs from n.Name() when fxgraph's namespace had
// to rename it ("input" is node "input_1"); the writer writes this name.
func (p *Program) SerializedName(n *fxgraph.Node) string {
	if s, ok := p.serialNames[n.Name()]; ok {
		return s
	}
	return n.Name()
}

// OpaqueArgNames returns the serialized argument names (args then kwargs)
// recorded for a node whose operator had no schema when it was read, and
// false for any other node.
func (p *Program) OpaqueArgNames(n *fxgraph.Node) ([]string, bool) {
	info, ok := p.opaque[n]
	if !ok {
		return nil, false
	}
	out := make([]string, len(info.args))
	for i, a := range info.args {
		out[i] = a.Name
	}
	return out, true
}

// SetOpaqueArgNames records the argument names the writer uses for a node
// whose operator has no schema: one name per positional arg, then one per
// kwarg.
func (p *Program) SetOpaqueArgNames(n *fxgraph.Node, names []string) {
	args := make([]opaqueArg, len(names))
	for i, nm := range names {
		args[i] = opaqueArg{Name: nm}
	}
	p.setOpaque(n, args)
}
