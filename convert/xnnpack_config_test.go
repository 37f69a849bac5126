package convert_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/pt2"
)

// pt2eDir holds the real torch.export fixtures (tests/testdata/pt2e).
const pt2eDir = "../tests/testdata/pt2e"

// loadFloat reads <stem>.float.pt2 and unlifts it as .module() does.
func loadFloat(t *testing.T, stem string) *fxgraph.Graph {
	t.Helper()
	p, err := pt2.ReadFile(filepath.Join(pt2eDir, stem+".float.pt2"), nil)
	require.NoError(t, err)
	var lifted []convert.LiftedInput
	for _, in := range p.Signature.Inputs {
		switch in.Kind {
		case pt2.Parameter, pt2.Buffer, pt2.TensorConstant:
			lifted = append(lifted, convert.LiftedInput{Placeholder: in.Name, Target: in.Target})
		}
	}
	g, err := convert.Unlift(p.Graph, lifted, nil)
	require.NoError(t, err)
	return g
}

const (
	conv2dType = "torch.nn.modules.conv.Conv2d"
	linearType = "torch.nn.modules.linear.Linear"
)

// TestFixtureModuleStack: the pt2 reader gives the fixture nodes the
// nn_module_stack torch.export recorded (cnn.float.pt2: conv2d comes from
// module conv1 of class Conv2d, linear from fc of class Linear, inside
// the root models.SmallCNN).
func TestFixtureModuleStack(t *testing.T) {
	g := loadFloat(t, "cnn")
	for _, tt := range []struct{ node, path, typ string }{
		{"conv2d", "conv1", conv2dType},
		{"conv2d_1", "conv2", conv2dType},
		{"linear", "fc", linearType},
	} {
		t.Run(tt.node, func(t *testing.T) {
			st := node(t, g, tt.node).Meta.NNModuleStack
			require.Len(t, st, 2)
			assert.Equal(t, "", st[0].Path)
			assert.Equal(t, "models.SmallCNN", st[0].Type)
			assert.Equal(t, tt.path, st[1].Path)
			assert.Equal(t, tt.typ, st[1].Type)
		})
	}
}

// weightObserverClass returns the class of the observer on the weight
// get_attr w ("" when w has none).
func weightObserverClass(t *testing.T, g *fxgraph.Graph, w string) string {
	t.Helper()
	for _, u := range node(t, g, w).Users() {
		if u.Op() == fxgraph.CallModule {
			v, _ := g.Attr(u.TargetName())
			return v.(observers.Observer).Class()
		}
	}
	return ""
}

// TestXNNPACKModuleConfigsOnFixture prepares cnn.float.pt2 with a
// per-tensor global config and per-module overrides; which weight observer
// each layer gets follows section 4's precedence. As in torchao, a conv's
// partition includes its weight get_attr, which carries no nn_module_stack,
// so a per-module config never claims a conv, and the global config skips
// it too (its filter excludes the module): such convs stay float
// (torchao's records of these three module configs:
// tests/testdata/quantcfg/cnn.name_conv2, cnn.type_conv2d, cnn.name_and_type).
func TestXNNPACKModuleConfigsOnFixture(t *testing.T) {
	perTensor := convert.SymmetricQuantizationConfig(convert.DefaultSymmetricConfigOptions())
	pcOpts := convert.DefaultSymmetricConfigOptions()
	pcOpts.PerChannel = true
	perChannel := convert.SymmetricQuantizationConfig(pcOpts)
	tests := []struct {
		name  string
		setup func(q *convert.XNNPACKQuantizer)
		want  map[string]string // weight get_attr -> observer class
	}{
		{
			name:  "global only",
			setup: func(*convert.XNNPACKQuantizer) {},
			want:  map[string]string{"conv1_weight": "MinMaxObserver", "conv2_weight": "MinMaxObserver", "fc_weight": "MinMaxObserver"},
		},
		{
			name:  "module name conv2 per-channel",
			setup: func(q *convert.XNNPACKQuantizer) { q.SetModuleName("conv2", perChannel) },
			want:  map[string]string{"conv1_weight": "MinMaxObserver", "conv2_weight": "", "fc_weight": "MinMaxObserver"},
		},
		{
			name:  "module type Conv2d per-channel",
			setup: func(q *convert.XNNPACKQuantizer) { q.SetModuleType(conv2dType, perChannel) },
			want:  map[string]string{"conv1_weight": "", "conv2_weight": "", "fc_weight": "MinMaxObserver"},
		},
		{
			name: "module name beats module type",
			setup: func(q *convert.XNNPACKQuantizer) {
				q.SetModuleType(conv2dType, perChannel)
				q.SetModuleName("conv1", perTensor)
			},
			want: map[string]string{"conv1_weight": "", "conv2_weight": "", "fc_weight": "MinMaxObserver"},
		},
		{
			name:  "nil module type config skips Linear",
			setup: func(q *convert.XNNPACKQuantizer) { q.SetModuleType(linearType, nil) },
			want:  map[string]string{"conv1_weight": "MinMaxObserver", "conv2_weight": "MinMaxObserver", "fc_weight": ""},
		},
		{
			name: "operator type config is stored but unused",
			setup: func(q *convert.XNNPACKQuantizer) {
				q.SetOperatorType(ops.MustOverload("aten.linear.default"), perChannel)
			},
			want: map[string]string{"conv1_weight": "MinMaxObserver", "conv2_weight": "MinMaxObserver", "fc_weight": "MinMaxObserver"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := loadFloat(t, "cnn")
			q := convert.NewXNNPACKQuantizer(nil).SetGlobal(perTensor)
			tt.setup(q)
			require.NoError(t, convert.Prepare(g, q))
			for w, class := range tt.want {
				assert.Equal(t, class, weightObserverClass(t, g, w), "observer on %s", w)
			}
		})
	}
}

// moduleGraph is linear(x, w) inside module sub.linear (class Linear, in
// sub of class Sub), with paths as capture_pre_autograd_graph wrote them
// ("L['self'].sub.linear"), and a second linear in module other.
func moduleGraph() *fxgraph.Graph {
	g := fxgraph.New()
	x := g.Placeholder("x", f32(1, 2))
	w := g.GetAttr("sub.linear.weight", f32(2, 2))
	l := g.Call(linearT, x, w)
	l.SetType(f32(1, 2))
	l.Meta.NNModuleStack = []fxgraph.ModuleStackEntry{
		{Key: "L__self___sub", Path: "L['self'].sub", Type: "m.Sub"},
		{Key: "L__self___sub_linear", Path: "L['self'].sub.linear", Type: linearType},
	}
	w2 := g.GetAttr("other.weight", f32(2, 2))
	l2 := g.Call(linearT, l, w2)
	l2.SetType(f32(1, 2))
	l2.Meta.NNModuleStack = []fxgraph.ModuleStackEntry{{Key: "L__self___other", Path: "L['self'].other", Type: linearType}}
	g.SetOutput(ops.Tuple{l2})
	return g
}

// TestXNNPACKModuleFilters checks the name filter's L['self']. stripping,
// matching on any stack entry, the type filter, and that the first
// annotation wins: each linear's weight spec is the Weight of the config
// that must claim it.
func TestXNNPACKModuleFilters(t *testing.T) {
	mk := func(qmin int64) *convert.QuantizationConfig {
		o := convert.DefaultSymmetricConfigOptions()
		o.WeightQMin = qmin
		return convert.SymmetricQuantizationConfig(o)
	}
	global, byName, byType := mk(-127), mk(-126), mk(-125)
	tests := []struct {
		name        string
		setup       func(q *convert.XNNPACKQuantizer)
		first, next *convert.QuantizationConfig // expected config of linear_default, linear_default_1
	}{
		{"outer module name", func(q *convert.XNNPACKQuantizer) { q.SetModuleName("sub", byName) }, byName, global},
		{"inner module name", func(q *convert.XNNPACKQuantizer) { q.SetModuleName("sub.linear", byName) }, byName, global},
		{"unprefixed path does not match", func(q *convert.XNNPACKQuantizer) { q.SetModuleName("L['self'].sub", byName) }, global, global},
		{"type", func(q *convert.XNNPACKQuantizer) { q.SetModuleType(linearType, byType) }, byType, byType},
		{"name before type", func(q *convert.XNNPACKQuantizer) {
			q.SetModuleType(linearType, byType)
			q.SetModuleName("sub", byName)
		}, byName, byType},
		{"outer type", func(q *convert.XNNPACKQuantizer) { q.SetModuleType("m.Sub", byType) }, byType, global},
		{"nil name config leaves the module alone", func(q *convert.XNNPACKQuantizer) { q.SetModuleName("sub", nil) }, nil, global},
		{"resetting a name keeps one entry", func(q *convert.XNNPACKQuantizer) {
			q.SetModuleName("sub", nil)
			q.SetModuleName("sub", byName)
		}, byName, global},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := moduleGraph()
			q := convert.NewXNNPACKQuantizer(global)
			tt.setup(q)
			require.NoError(t, q.Annotate(g))
			for name, want := range map[string]*convert.QuantizationConfig{"linear_default": tt.first, "linear_default_1": tt.next} {
				n := node(t, g, name)
				a := convert.Annotation(n)
				if want == nil {
					assert.False(t, a.Valid(), "%s should not be annotated", name)
					continue
				}
				require.NotNil(t, a, name)
				spec, ok := a.Input(n.Arg(1).(*fxgraph.Node))
				require.True(t, ok, name)
				assert.Same(t, want.Weight, spec, "%s weight spec", name)
			}
		})
	}
	q := convert.NewXNNPACKQuantizer(global).SetOperatorType(linearT, byType)
	c, ok := q.OperatorTypeConfig(linearT)
	assert.True(t, ok)
	assert.Same(t, byType, c)
}
