package ops

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// The expr_str texts torch.export 2.14.1 wrote for the programs in
// tests/testdata/dynamic, with their hints as recorded there (s77 = 2 and
// s27 = 5 for the encoder, s77 = 4 for exprs_dynamic_batch).
func TestParseSympyTorchTexts(t *testing.T) {
	const a = "positive=True, integer=True"
	hints := map[string]int64{"s77": 2, "s27": 5}
	cases := []struct {
		srepr, readable string
		hint            int64
	}{
		{"Symbol('s77', positive=True, integer=True)", "s77", 2},
		{"Mul(Integer(2), Symbol('s77', positive=True, integer=True))", "2*s77", 4},
		{"Mul(Integer(16), Symbol('s27', positive=True, integer=True), Symbol('s77', positive=True, integer=True))", "16*s27*s77", 160},
		{"Min(Integer(8), Mul(Integer(8), Symbol('s27', positive=True, integer=True)))", "Min(8, 8*s27)", 8},
		{"Mul(Symbol('s27', positive=True, integer=True), Symbol('s77', positive=True, integer=True))", "s27*s77", 10},
	}
	for _, c := range cases {
		e, as, srepr, err := ParseSympy(c.srepr)
		require.NoError(t, err, c.srepr)
		require.True(t, srepr)
		require.Equal(t, c.readable, e.String())
		for _, x := range as {
			require.Equal(t, a, x.Assumptions)
		}
		require.Equal(t, c.srepr, e.Srepr(func(string) string { return a }), "srepr round trip")
		v, err := e.Eval(func(n string) (int64, bool) { h, ok := hints[n]; return h, ok })
		require.NoError(t, err)
		require.Equal(t, c.hint, v, c.srepr)
		back, err := ParseSymExpr(c.readable)
		require.NoError(t, err)
		require.True(t, back.Equal(e), c.readable)
	}
	// exprs_dynamic_batch, s77 = 4: hints 5, 10 and 3 as recorded.
	for srepr, want := range map[string]int64{
		"Add(Symbol('s77', positive=True, integer=True), Integer(1))":                             5,
		"Add(Mul(Integer(2), Symbol('s77', positive=True, integer=True)), Integer(2))":            10,
		"Add(FloorDiv(Symbol('s77', positive=True, integer=True), Integer(2)), Integer(1))":       3,
		"Mod(Add(Symbol('s77', positive=True, integer=True), Integer(-1)), Integer(3))":           0, // (4-1) mod 3
		"Max(Integer(1), Add(FloorDiv(Symbol('s77', positive=True, integer=True), Integer(-3))))": 1,
	} {
		e, _, _, err := ParseSympy(srepr)
		if err != nil {
			// Add of one operand is not an Add sympy writes
			require.Contains(t, err.Error(), "Add takes 2 or more operands", srepr)
			continue
		}
		v, err := e.Eval(func(string) (int64, bool) { return 4, true })
		require.NoError(t, err)
		require.Equal(t, want, v, srepr)
		back, err := ParseSymExpr(e.String())
		require.NoError(t, err, e.String())
		require.True(t, back.Equal(e), e.String())
	}
}

func TestSymExprReadable(t *testing.T) {
	// Python semantics, computed by hand: -7 // 2 == -4, -7 % 3 == 2.
	bind := func(n string) (int64, bool) { return map[string]int64{"s0": -7, "s1": 3}[n], n == "s0" || n == "s1" }
	for text, want := range map[string]int64{
		"s0//2":                 -4,
		"Mod(s0, s1)":           2,
		"s0 - 1":                -8,
		"-1*s0 + s1":            10,
		"s1*(-2)":               -6,
		"(s0 + s1)*2":           -8,
		"Min(s0, s1, 0)":        -7,
		"Max(s0, (s1 + 1)//2)":  2,
		"2*s1 + Mod(s1 - 1, 4)": 8,
	} {
		e, err := ParseSymExpr(text)
		require.NoError(t, err, text)
		require.Equal(t, text, e.String())
		v, err := e.Eval(bind)
		require.NoError(t, err, text)
		require.Equal(t, want, v, text)
	}
	for text, msg := range map[string]string{
		"s0 +":                 "want a size",
		"Pow(s0, 2)":           "unknown function Pow",
		"s0*s1//2":             "parenthesize",
		"s0 - s1":              "want an integer after",
		"Mod(s0)":              "Mod takes 2 operands",
		"s0)":                  "unexpected",
		"s9":                   "",
		"99999999999999999999": "want an integer",
	} {
		e, err := ParseSymExpr(text)
		if msg == "" {
			require.NoError(t, err)
			_, err = e.Eval(bind)
			require.ErrorIs(t, err, ErrSymExpr)
			require.Contains(t, err.Error(), "symbol s9 has no value")
			continue
		}
		require.ErrorIs(t, err, ErrSymExpr, text)
		require.Contains(t, err.Error(), msg, text)
	}
	_, _, _, err := ParseSympy("Pow(Symbol('s0', integer=True), Integer(2))")
	require.ErrorContains(t, err, "Pow is not supported")
	_, _, _, err = ParseSympy("Add(Symbol('s0', integer=True), Symbol('s0', positive=True))")
	require.ErrorContains(t, err, "written with assumptions")
	e, err := ParseSymExpr("s0//0")
	require.NoError(t, err)
	_, err = e.Eval(bind)
	require.True(t, errors.Is(err, ErrSymExpr))
	require.ErrorContains(t, err, "divides by zero")
	big, _ := ParseSymExpr("s0*s0")
	_, err = big.Eval(func(string) (int64, bool) { return 1 << 40, true })
	require.ErrorContains(t, err, "overflows")
}

func TestTensorTypeSymbolicDims(t *testing.T) {
	for _, text := range []string{"f32[s0, 8]", "f32[s27*s77, 8]", "f32[s0 + 1, Mod(s0, 2), 4]", "f32[s0//2 + 1]"} {
		ty, err := ParseType(text)
		require.NoError(t, err, text)
		require.Equal(t, text, ty.String())
	}
	ty, err := ParseType("f32[(s0), 2*(s1)]")
	require.NoError(t, err)
	require.Equal(t, "f32[s0, 2*s1]", ty.String())
	_, err = ParseType("f32[(3), 4]")
	require.ErrorContains(t, err, "is a constant")
	_, err = ParseType("f32[s0 +, 4]")
	require.ErrorContains(t, err, "symbolic dimension")
}

// FuzzSymExpr: any text either fails to parse with ErrSymExpr or parses to
// an expression whose readable form and srepr read back to the same
// expression; evaluation never panics.
func FuzzSymExpr(f *testing.F) {
	for _, s := range []string{
		"s0", "2*s77 + 2", "s77//2 + 1", "Min(8, 8*s27)", "Mod(s0 - 1, 3)", "-1*s0 + s1", "s1*(-2)",
		"Add(FloorDiv(Symbol('s77', positive=True, integer=True), Integer(2)), Integer(1))",
		"Mul(Integer(16), Symbol('s27', positive=True, integer=True), Symbol('s77', positive=True, integer=True))",
		"Max(Integer(1), Symbol('u0', integer=True))", "((((s0))))", "Pow(s0, 2)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, _, _, err := ParseSympy(s)
		if err != nil {
			if !errors.Is(err, ErrSymExpr) {
				t.Fatalf("%q: error %v does not wrap ErrSymExpr", s, err)
			}
			return
		}
		back, err := ParseSymExpr(e.String())
		if err != nil || !back.Equal(e) {
			t.Fatalf("%q: readable form %q does not read back: %v", s, e.String(), err)
		}
		sr := e.Srepr(func(string) string { return "integer=True" })
		again, _, _, err := ParseSympy(sr)
		if err != nil || !again.Equal(e) {
			t.Fatalf("%q: srepr %q does not read back: %v", s, sr, err)
		}
		_, _ = e.Eval(func(string) (int64, bool) { return 7, true })
	})
}
