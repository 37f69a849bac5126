package fxgraph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
)

// countUsers, the printer's num_users, counts distinct users as FX's
// len(node.users) does: a user naming the node twice counts once, an
// erased user not at all, with few uses and with many (a set).
func TestCountUsers(t *testing.T) {
	tests := []struct {
		name  string
		build func(g *Graph, x *Node)
		want  int
	}{
		{"unused", func(*Graph, *Node) {}, 0},
		{"one user", func(g *Graph, x *Node) { g.Call(irRelu, x) }, 1},
		{"one user twice", func(g *Graph, x *Node) { g.Call(irAdd, x, x) }, 1},
		{"two users, one twice", func(g *Graph, x *Node) { g.Call(irAdd, x, x); g.Call(irRelu, x) }, 2},
		{"twice, apart in args and kwargs", func(g *Graph, x *Node) {
			g.CallKw(irAdd, []ops.Value{x, ops.List{int64(1), x}}, []Kwarg{{Name: "alpha", Value: x}})
			g.Call(irRelu, x)
		}, 2},
		{"an erased user", func(g *Graph, x *Node) {
			g.Call(irAdd, x, x)
			require.NoError(t, g.Erase(g.Call(irRelu, x)))
		}, 1},
		{"many users, one twice", func(g *Graph, x *Node) {
			for range 19 {
				g.Call(irRelu, x)
			}
			g.Call(irAdd, x, x)
		}, 20},
		{"many users, some erased", func(g *Graph, x *Node) {
			var us []*Node
			for range 30 {
				us = append(us, g.Call(irAdd, x, x))
			}
			for _, u := range us[:12] {
				require.NoError(t, g.Erase(u))
			}
		}, 18},
		{"one user naming it many times", func(g *Graph, x *Node) {
			xs := make(ops.List, 40)
			for i := range xs {
				xs[i] = x
			}
			g.Call(irSum, xs)
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New()
			x := g.Placeholder("x", nil)
			tt.build(g, x)
			assert.Equal(t, tt.want, countUsers(x))
			assert.Equal(t, tt.want, x.NumUsers(), "NumUsers")
		})
	}
}
