package convert_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
)

const symFn = `"function": "get_symmetric_quantization_config"`

// Bad config files are refused with the place of the bad field.
func TestParseQuantizerConfigErrors(t *testing.T) {
	for _, tt := range []struct{ config, want string }{
		{``, "config: unexpected end of JSON"},
		{`[]`, "config: want an object, got a list"},
		{`{"quantizers": [{"quantizer": "xnnpack"}],}`, "line 1, column 43: invalid character"},
		{`{}`, "quantizers: missing; want a list of quantizers"},
		{`{"quantizers": []}`, "quantizers: empty list"},
		{`{"quantizers": {"quantizer": "xnnpack"}}`, "quantizers: want a list of quantizer objects, got an object"},
		{`{"quantizers": null}`, "quantizers: want a list of quantizer objects, got null"},
		{`{"format": "fxquant-quantizer-config/2", "quantizers": [{"quantizer": "xnnpack"}]}`, `format: "fxquant-quantizer-config/2", want "fxquant-quantizer-config/1"`},
		{`{"quantizers": [{"quantizer": "xnnpack"}], "extra": 1}`, `extra: unknown field; want one of format, quantizers`},
		{`{"quantizers": [{"quantizer": "xnnpack"}], "quantizers": []}`, `quantizers: duplicate field`},
		{`{"quantizers": [{}]}`, "quantizers[0].quantizer: missing; want one of"},
		{`{"quantizers": [{"quantizer": "x86"}]}`, `quantizers[0].quantizer: unknown quantizer "x86"; want one of`},
		{`{"quantizers": [{"quantizer": 3}]}`, `quantizers[0].quantizer: want a string, got the number 3`},
		{`{"quantizers": [{"quantizer": "embedding", "set_global": null}]}`, `quantizers[0].set_global: unknown field; want one of quantizer`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_globl": null}]}`, `quantizers[0].set_globl: unknown field; want one of annotate_by_target, quantizer, set_global, set_module_name, set_module_type, set_operator_type`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_global": {}}]}`, `quantizers[0].set_global.function: missing`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_global": "sym"}]}`, `quantizers[0].set_global: want an object, got the string "sym"`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_global": {"function": "get_symmetric_quantisation_config"}}]}`, `quantizers[0].set_global.function: unknown config function "get_symmetric_quantisation_config"; want one of get_default_x86_inductor_quantization_config, get_symmetric_quantization_config, get_x86_inductor_linear_dynamic_fp16_config`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_global": {` + symFn + `, "is_per_chanel": true}}]}`, `quantizers[0].set_global.is_per_chanel: unknown field; want one of act_qmax, act_qmin, function, is_dynamic, is_per_channel, is_qat, weight_qmax, weight_qmin`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_global": {` + symFn + `, "is_per_channel": "yes"}}]}`, `quantizers[0].set_global.is_per_channel: want true or false, got the string "yes"`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_global": {` + symFn + `, "is_qat": true}}]}`, `quantizers[0].set_global.is_qat: QAT configs are not supported here`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_global": {` + symFn + `, "act_qmin": 1.5}}]}`, `quantizers[0].set_global.act_qmin: want an integer, got 1.5`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_global": {` + symFn + `, "act_qmin": -129}}]}`, `quantizers[0].set_global.act_qmin: -129: want a value in -128..0`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_global": {` + symFn + `, "weight_qmax": 128}}]}`, `quantizers[0].set_global.weight_qmax: 128: want a value in 0..127`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_module_type": {"torch.nn.modules.linear.Linear": {` + symFn + `, "act_qmax": -1}}}]}`, `quantizers[0].set_module_type["torch.nn.modules.linear.Linear"].act_qmax: -1: want a value in 0..127`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_module_name": {"fc1": null, "fc1": null}}]}`, `quantizers[0].set_module_name.fc1: duplicate field`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_module_name": {"": null}}]}`, `quantizers[0].set_module_name: empty name`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_module_name": ["fc1"]}]}`, `quantizers[0].set_module_name: want an object, got a list`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_operator_type": {"aten.no_such_op": null}}]}`, `quantizers[0].set_operator_type["aten.no_such_op"]: unknown operator aten.no_such_op`},
		{`{"quantizers": [{"quantizer": "xnnpack", "set_operator_type": {"linear": null}}]}`, `quantizers[0].set_operator_type["linear"]: ops: bad target`},
		{`{"quantizers": [{"quantizer": "xnnpack", "annotate_by_target": 1}]}`, `quantizers[0].annotate_by_target: want true or false, got the number 1`},
		{`{"quantizers": [{"quantizer": "xnnpack"}]} {}`, `config: data after the object`},
		{`{"quantizers": [{"quantizer": "int4_groupwise"}]}`, `quantizers[0].group_size: missing; want a positive integer`},
		{`{"quantizers": [{"quantizer": "int4_groupwise", "group_size": 0}]}`, `quantizers[0].group_size: 0: want a positive integer`},
		{`{"quantizers": [{"quantizer": "int4_groupwise", "group_size": 8, "own_activation_chain": true}]}`, `quantizers[0].own_activation_chain: unknown field; want one of group_size, own_activation_chains, quantizer`},
	} {
		_, err := convert.ParseQuantizerConfig([]byte(tt.config))
		if assert.Error(t, err, tt.config) {
			assert.Contains(t, err.Error(), tt.want, tt.config)
		}
	}
}

// A config builds the quantizers its calls name, in order, keeping the
// order of the set_module_* entries as written.
func TestParseQuantizerConfigBuilds(t *testing.T) {
	q, err := convert.ParseQuantizerConfig([]byte(`{
	  "format": "fxquant-quantizer-config/1",
	  "quantizers": [
	    {"quantizer": "embedding"},
	    {"quantizer": "xnnpack",
	     "set_global": {` + symFn + `, "is_per_channel": true, "is_dynamic": true},
	     "set_module_name": {"z.fc": {` + symFn + `, "act_qmin": -100, "act_qmax": 100}, "a.fc": null},
	     "set_module_type": {"torch.nn.modules.linear.Linear": {` + symFn + `, "weight_qmin": -63, "weight_qmax": 63}},
	     "set_operator_type": {"aten.linear": {` + symFn + `}},
	     "annotate_by_target": true}
	  ]}`))
	require.NoError(t, err)
	c, ok := q.(convert.ComposableQuantizer)
	require.True(t, ok, "two quantizers compose, got %T", q)
	require.Len(t, c, 2)
	assert.IsType(t, convert.EmbeddingQuantizer{}, c[0])
	x, ok := c[1].(*convert.XNNPACKQuantizer)
	require.True(t, ok)
	assert.True(t, x.AnnotateByTarget)
	require.NotNil(t, x.Global)
	assert.True(t, x.Global.InputActivation.IsDynamic)
	assert.Nil(t, x.Global.OutputActivation, "dynamic configs have no output spec")
	assert.Equal(t, observers.PerChannelSymmetric, x.Global.Weight.QScheme)
	names, types := x.ModuleKeys()
	assert.Equal(t, []string{"z.fc", "a.fc"}, names, "the order written, not sorted")
	assert.Equal(t, []string{"torch.nn.modules.linear.Linear"}, types)
	oc, ok := x.OperatorTypeConfig(ops.Packet{NS: "aten", Name: "linear"})
	require.True(t, ok)
	assert.Equal(t, observers.PerTensorSymmetric, oc.Weight.QScheme)

	i4, err := convert.ParseQuantizerConfig([]byte(`{"quantizers": [{"quantizer": "int4_groupwise", "group_size": 16, "own_activation_chains": true}]}`))
	require.NoError(t, err)
	assert.Equal(t, convert.Int4GroupwiseQuantizer{GroupSize: 16, OwnActivationChains: true}, i4)

	one, err := convert.ParseQuantizerConfig([]byte(`{"quantizers": [{"quantizer": "xnnpack", "set_global": null}]}`))
	require.NoError(t, err)
	require.IsType(t, &convert.XNNPACKQuantizer{}, one, "one quantizer is not wrapped")
	assert.Nil(t, one.(*convert.XNNPACKQuantizer).Global)
}

// The config's per-module settings have the same effect as the library
// calls they name: the annotations on the cnn fixture are equal.
func TestParseQuantizerConfigSameAsCalls(t *testing.T) {
	q, err := convert.ParseQuantizerConfig([]byte(`{"quantizers": [{"quantizer": "xnnpack",
	  "set_global": {` + symFn + `},
	  "set_module_name": {"fc": {` + symFn + `, "is_per_channel": true, "act_qmin": -64, "act_qmax": 64}}}]}`))
	require.NoError(t, err)
	o := convert.DefaultSymmetricConfigOptions()
	calls := convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(o))
	o.PerChannel, o.ActQMin, o.ActQMax = true, -64, 64
	calls.SetModuleName("fc", convert.SymmetricQuantizationConfig(o))

	g1, g2 := loadFloat(t, "cnn"), loadFloat(t, "cnn")
	require.NoError(t, convert.Prepare(g1, q))
	require.NoError(t, convert.Prepare(g2, calls))
	assert.Equal(t, fxgraph.FormatListing(g2), fxgraph.FormatListing(g1))
	assert.Contains(t, fxgraph.FormatListing(g1), "activation_post_process", "something was observed")
}

// registerTestKind registers the kind "test-int4" once per test binary
// (the registry is global, and -count=N reruns the test).
var registerTestKind sync.Once

func TestRegisterQuantizerKind(t *testing.T) {
	registerTestKind.Do(func() {
		convert.RegisterQuantizerKind("test-int4", func(e *convert.ConfigObject) (convert.Quantizer, error) {
			gs, err := e.Int("group_size", 32)
			if err != nil {
				return nil, err
			}
			return convert.Int4GroupwiseQuantizer{GroupSize: int(gs)}, e.Done()
		})
	})
	q, err := convert.ParseQuantizerConfig([]byte(`{"quantizers": [{"quantizer": "test-int4", "group_size": 8}]}`))
	require.NoError(t, err)
	assert.Equal(t, convert.Int4GroupwiseQuantizer{GroupSize: 8}, q)
	_, err = convert.ParseQuantizerConfig([]byte(`{"quantizers": [{"quantizer": "test-int4", "group": 8}]}`))
	assert.ErrorContains(t, err, "quantizers[0].group: unknown field; want one of group_size, quantizer")
	assert.Panics(t, func() { convert.RegisterQuantizerKind("test-int4", nil) })
	assert.Panics(t, func() { convert.RegisterConfigFunction("get_symmetric_quantization_config", nil) })
}

// embeddingGraph is embedding(w, idx) feeding a linear, w a get_attr.
func embeddingGraph() (*fxgraph.Graph, *fxgraph.Node, *fxgraph.Node) {
	g := fxgraph.New()
	idx := g.Placeholder("idx", ops.Plain(0, 1, 3))
	w := g.GetAttr("emb.weight", f32(10, 2))
	e := g.Call(ops.MustOverload("aten.embedding.default"), w, idx)
	e.SetType(f32(1, 3, 2))
	g.SetOutput(ops.Tuple{e})
	return g, w, e
}

// EmbeddingQuantizer annotates the weight edge only, with torchao's
// get_embedding_operators_config spec, and leaves _annotated unset.
func TestEmbeddingQuantizerAnnotation(t *testing.T) {
	g, w, e := embeddingGraph()
	require.NoError(t, convert.EmbeddingQuantizer{}.Annotate(g))
	a := convert.Annotation(e)
	require.NotNil(t, a)
	assert.False(t, a.Annotated, "torchao's EmbeddingQuantizer does not set _annotated")
	assert.Nil(t, a.OutputQSpec)
	require.Len(t, a.InputQSpecMap, 1)
	assert.Equal(t, w, a.InputQSpecMap[0].Input)
	s := a.InputQSpecMap[0].Spec.(*convert.QuantizationSpec)
	assert.Equal(t, observers.UInt8, s.DType)
	assert.Equal(t, observers.PerChannelAffineFloatQParams, s.QScheme)
	require.NotNil(t, s.ChAxis)
	assert.Equal(t, 0, *s.ChAxis)
	assert.Nil(t, s.QuantMin)
	assert.Nil(t, s.QuantMax)
	o, err := s.Observer(s)
	require.NoError(t, err)
	assert.Equal(t, "PerChannelMinMaxObserver", o.Class())
	for n := range g.All() {
		if n != e {
			assert.Nil(t, convert.Annotation(n), "%s annotated", n)
		}
	}
}

// removingQuantizer deletes every annotation.
type removingQuantizer struct{}

func (removingQuantizer) TransformForAnnotation(*fxgraph.Graph) error { return nil }
func (removingQuantizer) Validate(*fxgraph.Graph) error               { return nil }
func (removingQuantizer) Annotate(g *fxgraph.Graph) error {
	for n := range g.All() {
		convert.SetAnnotation(n, nil)
	}
	return nil
}

// ComposableQuantizer refuses a quantizer that replaces or removes an
// earlier annotation (torchao's record: tests/testdata/quantcfg,
// bert_encoder.embedding_twice), and Prepare leaves the graph unchanged.
func TestComposableQuantizerConflicts(t *testing.T) {
	for _, tt := range []struct {
		q    convert.ComposableQuantizer
		want string
	}{
		{convert.ComposableQuantizer{convert.EmbeddingQuantizer{}, convert.EmbeddingQuantizer{}}, `quantizer 1 (EmbeddingQuantizer) has changed annotations on node "embedding_default"`},
		{convert.ComposableQuantizer{convert.EmbeddingQuantizer{}, removingQuantizer{}}, `quantizer 1 (removingQuantizer) has removed annotations on node "embedding_default"`},
	} {
		g, _, _ := embeddingGraph()
		before := fxgraph.Format(g)
		err := convert.Prepare(g, tt.q)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tt.want)
		assert.True(t, errors.Is(err, convert.ErrAnnotation))
		assert.Equal(t, before, fxgraph.Format(g))
	}
	// A later quantizer may mark an earlier annotation in place.
	g, w, _ := embeddingGraph()
	marker := funcQuantizer(func(g *fxgraph.Graph) error {
		for n := range g.All() {
			convert.MarkAnnotated(n)
		}
		return nil
	})
	require.NoError(t, convert.ComposableQuantizer{convert.EmbeddingQuantizer{}, marker}.Annotate(g))
	assert.True(t, convert.IsAnnotated(w))
}

// gruGraph is an nn.GRU call as torch 2.14 exports it: aten.gru.input and
// getitems 0 and 1, with the GRU's nn_module_stack; useHidden makes the
// final hidden state an output.
func gruGraph(useHidden bool) *fxgraph.Graph {
	g := fxgraph.New()
	x := g.Placeholder("x", f32(1, 3, 4))
	h := g.Placeholder("h", f32(1, 1, 5))
	var ws []ops.Value
	for _, name := range []string{"gru.weight_ih_l0", "gru.weight_hh_l0"} {
		ws = append(ws, g.GetAttr(name, f32(15, 4)))
	}
	stack := []fxgraph.ModuleStackEntry{{Key: "L__self__", Path: "", Type: "M"}, {Key: "L__self___gru", Path: "gru", Type: "torch.nn.modules.rnn.GRU"}}
	gru := g.Call(ops.MustOverload("aten.gru.input"), x, h, ops.List(ws), false, int64(1), 0.0, false, false, true)
	getitem := ops.Callable{Module: "operator", Name: "getitem"}
	out := g.Call(getitem, gru, int64(0))
	hid := g.Call(getitem, gru, int64(1))
	for _, n := range []*fxgraph.Node{gru, out, hid} {
		n.Meta.NNModuleStack = stack
	}
	if useHidden {
		g.SetOutput(ops.Tuple{out, hid})
	} else {
		g.SetOutput(ops.Tuple{out})
	}
	return g
}

// The gru_io_only annotator: only the hidden state is observed on the way
// in (its annotation replaces the input's on the shared aten.gru.input
// user, as in torchao's record tests/testdata/quantcfg/gru.static), both
// outputs are; a GRU whose final hidden state is unused is refused, as
// torchao's assertion.
func TestXNNPACKGRUIOOnly(t *testing.T) {
	c := staticConfig()
	g := gruGraph(true)
	require.NoError(t, convert.NewXNNPACKQuantizer(c).Annotate(g))
	var got []string
	for n := range g.All() {
		a := convert.Annotation(n)
		if a == nil || n.Op() != fxgraph.CallFunction {
			continue
		}
		var ins []string
		for _, e := range a.InputQSpecMap {
			ins = append(ins, e.Input.Name())
		}
		got = append(got, fmt.Sprintf("%s in=[%s] out=%v", n.Name(), strings.Join(ins, " "), a.OutputQSpec != nil))
	}
	assert.Equal(t, []string{"gru_input in=[h] out=false", "getitem in=[] out=true", "getitem_1 in=[] out=true"}, got)

	err := convert.NewXNNPACKQuantizer(c).Annotate(gruGraph(false))
	assert.ErrorContains(t, err, "expecting GRU to have two outputs, got 1")
	assert.ErrorIs(t, err, convert.ErrAnnotation)
}
