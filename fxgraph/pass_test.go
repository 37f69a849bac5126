package fxgraph

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// irInsertRelu is a pass that puts a relu after the graph's first relu and
// rewires its users.
func irInsertRelu(name string) Pass {
	return Pass{Name: name, Run: func(ctx context.Context, g *Graph) (Result, error) {
		rs := g.FindNodes(CallFunction, irRelu)
		if len(rs) == 0 {
			return Result{}, nil
		}
		r := rs[0]
		restore := g.InsertingAfter(r)
		n := g.Call(irRelu, r)
		restore()
		n.SetType(r.Type())
		g.ReplaceAllUsesWith(r, n, func(u *Node) bool { return u == n })
		return Result{Changed: true, Stats: map[string]int{"inserted": 1}}, nil
	}}
}

func TestNewPipeline(t *testing.T) {
	noop := func(name string) Pass {
		return Pass{Name: name, Run: func(context.Context, *Graph) (Result, error) { return Result{}, nil }}
	}
	tests := []struct {
		name   string
		passes []Pass
		order  [][2]string
		err    string
	}{
		{"ok", []Pass{noop("prepare"), noop("convert")}, [][2]string{{"prepare", "convert"}}, ""},
		{"absent pass in constraint", []Pass{noop("convert")}, [][2]string{{"prepare", "convert"}}, ""},
		{"order violated", []Pass{noop("convert"), noop("prepare")}, [][2]string{{"prepare", "convert"}},
			`order: want pass "prepare" before "convert", got it at 1 and "convert" at 0`},
		{"duplicate name", []Pass{noop("a"), noop("a")}, nil, `pass "a": want unique names, got it at 0 and 1`},
		{"empty name", []Pass{noop("")}, nil, "pass 0: want a name, got none"},
		{"nil run", []Pass{{Name: "x"}}, nil, `pass "x": want a Run function, got nil`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPipeline(tt.passes, tt.order)
			if tt.err == "" {
				require.NoError(t, err)
				assert.Len(t, p.Passes(), len(tt.passes))
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

func TestPipelineRuns(t *testing.T) {
	g, _ := irChain()
	p, err := NewPipeline([]Pass{irInsertRelu("first"), irInsertRelu("second")}, nil)
	require.NoError(t, err)
	p.Verify = irOpts(t)
	runs, err := p.Run(context.Background(), g)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	assert.Equal(t, "first", runs[0].Pass)
	assert.True(t, runs[1].Result.Changed)
	assert.Equal(t, 1, runs[1].Result.Stats["inserted"])
	assert.Equal(t, []string{"x", "relu_default", "relu_default_2", "relu_default_1", "add_tensor", "output"}, irNames(g.Nodes()))
	require.NoError(t, Verify(g, irOpts(t)))
}

// A failing pass, a panicking pass and a pass whose result the verifier
// rejects all leave the graph unchanged (compared by a structural
// fingerprint), and the error names the pass.
func TestPipelineTransactional(t *testing.T) {
	half := func(tail func(g *Graph) error) Pass {
		return Pass{Name: "convert", Run: func(ctx context.Context, g *Graph) (Result, error) {
			// Edit first, then fail: the edits must not survive.
			x := g.First()
			r := g.Call(irRelu, x)
			r.SetType(irF32)
			g.SetAttr("junk", 1)
			return Result{Changed: true}, tail(g)
		}}
	}
	errBoom := errors.New("boom")
	tests := []struct {
		name  string
		pass  Pass
		check func(t *testing.T, err error)
	}{
		{"error", half(func(*Graph) error { return errBoom }), func(t *testing.T, err error) {
			require.ErrorIs(t, err, errBoom)
			var pe *PassError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "convert", pe.Pass)
			assert.Equal(t, `pass "convert": boom`, err.Error())
		}},
		{"panic", half(func(g *Graph) error {
			var m map[string]int
			m["x"]++ // a real runtime panic
			return nil
		}), func(t *testing.T, err error) {
			var pp *PassPanicError
			require.ErrorAs(t, err, &pp)
			assert.Equal(t, "convert", pp.Pass)
			assert.Contains(t, string(pp.Stack), "pass_test.go")
			assert.Contains(t, err.Error(), `pass "convert" panicked: assignment to entry in nil map`)
		}},
		{"verifier rejects the result", half(func(g *Graph) error {
			g.First().Next().SetType(ops.Plain(tensor.Int8, 1))
			return nil
		}), func(t *testing.T, err error) {
			var pe *PassError
			require.ErrorAs(t, err, &pe)
			assert.True(t, pe.Verify)
			e := irFind(t, err, ErrTypeMismatch, "relu_default")
			assert.True(t, strings.HasPrefix(err.Error(), `after pass "convert": node "`), err.Error())
			assert.Contains(t, err.Error(), e.Error())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, n := irChain()
			before := irDump(g)
			p, err := NewPipeline([]Pass{irInsertRelu("prepare"), tt.pass}, [][2]string{{"prepare", "convert"}})
			require.NoError(t, err)
			p.Verify = irOpts(t)
			runs, err := p.Run(context.Background(), g)
			tt.check(t, err)
			require.Len(t, runs, 1, "the first pass completed")
			after := irDump(g)
			assert.NotEqual(t, before, after, "the first pass's result is kept")
			// Re-run only the failing pass: the graph must not change at all.
			before = irDump(g)
			p2, err := NewPipeline([]Pass{tt.pass}, nil)
			require.NoError(t, err)
			p2.Verify = irOpts(t)
			_, err = p2.Run(context.Background(), g)
			require.Error(t, err)
			assert.Equal(t, before, irDump(g))
			require.NoError(t, Verify(g, irOpts(t)))
			assert.True(t, n["x"].Erased(), "nodes from before a successful pass are stale")
		})
	}
}

// The input is verified before the first pass; NoVerify turns checking off.
func TestPipelineVerifyInputAndOff(t *testing.T) {
	g, n := irChain()
	n["relu"].SetType(ops.Plain(tensor.Int8, 1))
	p, err := NewPipeline([]Pass{irInsertRelu("a")}, nil)
	require.NoError(t, err)
	p.Verify = irOpts(t)
	_, err = p.Run(context.Background(), g)
	var pe *PassError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "", pe.Pass)
	assert.Contains(t, err.Error(), "before the first pass: ")

	p.NoVerify = true
	runs, err := p.Run(context.Background(), g)
	require.NoError(t, err)
	assert.Len(t, runs, 1)
}

func TestPipelineCancelled(t *testing.T) {
	g, _ := irChain()
	p, err := NewPipeline([]Pass{irInsertRelu("a")}, nil)
	require.NoError(t, err)
	p.Verify = irOpts(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = p.Run(ctx, g)
	assert.ErrorIs(t, err, context.Canceled)
}
