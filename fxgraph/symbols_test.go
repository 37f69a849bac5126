package fxgraph

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const symText = `graph():
    # symbol s77: range=[1, 64], hint=8, assumptions=(positive=True, integer=True)
    # symbol s27: range=[2, None]
    # symbol u0:
    %x : f32[s77, s27*s77, 16] [num_users=1] = placeholder[target=x]
    %relu : f32[s77, s27*s77, 16] [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%x,), kwargs = {})
    return relu
`

// The symbol table round-trips through the text: ranges (None for an
// unbounded end), hints, assumptions, and a symbol with none of them.
func TestSymbolsRoundTrip(t *testing.T) {
	src := symText
	g, err := ParseString(src)
	require.NoError(t, err)
	require.Equal(t, src, Format(g))
	syms := g.Symbols()
	require.Len(t, syms, 3)
	require.Equal(t, "s77", syms[0].Name)
	require.Equal(t, "[1, 64]", syms[0].RangeString())
	require.Equal(t, int64(8), *syms[0].Hint)
	require.Equal(t, "positive=True, integer=True", syms[0].Assumptions)
	require.Equal(t, "[2, None]", syms[1].RangeString())
	require.True(t, syms[1].InRange(1<<40))
	require.False(t, syms[1].InRange(1))
	require.False(t, syms[2].Ranged)
	require.NoError(t, Verify(g, VerifyOptions{}))
	c, _ := g.Clone()
	require.Equal(t, Format(g), Format(c))
	// The copy is deep: editing the clone's table leaves g's alone.
	cs := c.Symbols()
	*cs[0].Hint = 9
	require.NoError(t, c.SetSymbols(cs))
	require.Equal(t, int64(8), *g.Symbols()[0].Hint)
	require.Error(t, c.SetSymbols([]Symbol{{Name: "a"}, {Name: "a"}}))
	require.Error(t, c.SetSymbols([]Symbol{{Name: "2x"}}))
}

func TestSymbolsParseErrors(t *testing.T) {
	for line, want := range map[string]string{
		"# symbol s0: range=[1, x]":               "range bound \"x\": want an integer or None",
		"# symbol s0: range=[1 2]":                "range: want [min, max]",
		"# symbol s0: hint=two":                   "hint \"two\": want an integer",
		"# symbol s0: assumptions=()":             "assumptions: want (name=True, ...)",
		"# symbol s0: colour=red":                 "unexpected \"colour=red\"",
		"# symbol 0s: hint=1":                     "want a symbol name",
		"# symbol s77: hint=1\n    # symbol s77:": "symbol s77 is declared twice",
		"%y : f32[1] [num_users=0] = placeholder[target=y]\n    # symbol s0:": "symbol declarations must come before the first node",
	} {
		src := "graph():\n    " + line + "\n    return None\n"
		_, err := ParseString(src)
		require.Error(t, err, line)
		var pe *ParseError
		require.True(t, errors.As(err, &pe), line)
		require.Contains(t, err.Error(), want, line)
	}
}

func TestVerifySymbols(t *testing.T) {
	src := strings.Replace(symText, "range=[1, 64], hint=8", "range=[9, 4], hint=8", 1)
	src = strings.Replace(src, "%relu : f32[s77, s27*s77, 16]", "%relu : f32[s77, s27*s5, 16]", 1)
	g, err := ParseString(src)
	require.NoError(t, err)
	err = Verify(g, VerifyOptions{})
	require.ErrorIs(t, err, ErrSymbol)
	msg := err.Error()
	require.Contains(t, msg, "symbol s77")
	require.Contains(t, msg, "empty range [9, 4]")
	require.Contains(t, msg, "hint 8")
	require.Contains(t, msg, `node "relu"`)
	require.Contains(t, msg, "unknown symbol s5 in f32[s77, s27*s5, 16]")
	// An input's symbol that has no range while others have one is
	// foreign to the program (torch.export lists every symbol of an
	// input's sizes in range_constraints); it is reported on the input.
	src = strings.Replace(symText, "# symbol s27: range=[2, None]", "# symbol s27:", 1)
	g, err = ParseString(src)
	require.NoError(t, err)
	err = Verify(g, VerifyOptions{})
	require.ErrorIs(t, err, ErrSymbol)
	require.Contains(t, err.Error(), `node "x": type: want an input's symbols to have a range (range_constraints lists s77), got symbol s27, which has none, in f32[s77, s27*s77, 16]`)
	require.NotContains(t, err.Error(), `node "relu"`)
	g, err = ParseString(symText)
	require.NoError(t, err)
	require.NoError(t, Verify(g, VerifyOptions{}))
	// Without a symbol table (a graph built by hand), names are not checked.
	g2, err := ParseString(strings.Join(strings.Split(symText, "\n")[4:], "\n"))
	require.Error(t, err) // no header
	g2, err = ParseString("graph():\n" + strings.Join(strings.Split(symText, "\n")[4:], "\n"))
	require.NoError(t, err)
	require.Empty(t, g2.Symbols())
	require.NoError(t, Verify(g2, VerifyOptions{}))
}
