package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fx-graph.md 9.2 and torchao-pt2e.md 1.1.
func TestTargetIdentity(t *testing.T) {
	packet := MustPacket("aten.linear")
	overload := MustOverload("aten.linear.default")
	var a, b Target = packet, overload
	assert.NotEqual(t, a, b, "a packet never equals its overload")
	assert.False(t, a == b)
	assert.NotEqual(t, MustOverload("quantized_decomposed.quantize_per_tensor.default"), MustOverload("quantized_decomposed.quantize_per_tensor.tensor"),
		"two overloads of one op differ")

	m := map[Target]string{packet: "packet", overload: "overload", GetItem: "callable"}
	require.Len(t, m, 3, "both forms work as distinct map keys")
	assert.Equal(t, "packet", m[Packet{NS: "aten", Name: "linear"}])
	assert.Equal(t, "overload", m[Overload{Packet: Packet{NS: "aten", Name: "linear"}, Name: "default"}])

	assert.Equal(t, "aten.linear", packet.String())
	assert.Equal(t, "aten.linear.default", overload.String())
	assert.Equal(t, "aten::linear", overload.Qualified(), "name() of the default overload has no .default")
	assert.Equal(t, "aten::add.Tensor", MustOverload("aten.add.Tensor").Qualified())
	assert.Equal(t, "add.Tensor", MustOverload("aten.add.Tensor").FXName(), "__name__ is op.overload")
	assert.Equal(t, "torch.ops.aten.linear", packet.Pretty())
	assert.Equal(t, "torch.ops.aten.add.Tensor", MustOverload("aten.add.Tensor").Pretty())
}

func TestParseTargetForms(t *testing.T) {
	tests := []struct {
		text string
		want Target
	}{
		{"aten.add.Tensor", MustOverload("aten.add.Tensor")},
		{"aten::add.Tensor", MustOverload("aten.add.Tensor")},
		{"torch.ops.aten.add.Tensor", MustOverload("aten.add.Tensor")},
		{"aten::linear", Overload{Packet: Packet{"aten", "linear"}, Name: "default"}},
		{"torchao.quantize_affine", Packet{"torchao", "quantize_affine"}},
		{"torch.ops.torchao.quantize_affine", Packet{"torchao", "quantize_affine"}},
		{"operator.getitem", GetItem},
		{"_operator.getitem", GetItem},
		{"<built-in function getitem>", GetItem},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, err := ParseTarget(tt.text)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			again, err := ParseTarget(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, again, "the canonical print parses back")
		})
	}
	// One canonical print for the three spellings.
	for _, s := range []string{"aten.add.Tensor", "aten::add.Tensor", "torch.ops.aten.add.Tensor"} {
		assert.Equal(t, "aten.add.Tensor", MustParseTarget(s).String())
	}
	for _, bad := range []string{"", "aten", "aten..add", "a.b.c.d", "aten::", "1aten.add", "aten::add.", "<built-in function 9x>"} {
		t.Run("bad "+bad, func(t *testing.T) {
			_, err := ParseTarget(bad)
			assert.Error(t, err)
		})
	}
}

func TestPacketOverloads(t *testing.T) {
	r := Default()
	add := MustPacket("aten.add")
	// The hand rows in registration order (eager resolution's), then the
	// table's other overloads of aten.add in the table's (sorted) order.
	var want []Overload
	for _, n := range []string{"Tensor", "Scalar", "Scalar_out", "complex", "complex_float", "complex_int", "default",
		"float", "float_complex", "float_int", "int", "int_complex", "int_float", "out", "str", "t"} {
		want = append(want, add.Overload(n))
	}
	assert.Equal(t, want, r.Overloads(add))
	_, ok := r.Op(add.Overload("nosuch"))
	assert.False(t, ok, "an unknown overload name is not registered (packet.nosuch raises)")
	assert.False(t, r.Known(add.Overload("nosuch")))
	assert.True(t, r.Known(add))
	assert.True(t, r.Known(GetItem))
	assert.True(t, r.Known(Callable{Module: "operator", Name: "add"}), "arithmetic on SymInts")
	assert.False(t, r.Known(Callable{Module: "operator", Name: "truediv"}))
	assert.Equal(t, []Overload{MustOverload("torchao.quantize_affine.default")}, r.Overloads(MustPacket("torchao.quantize_affine")),
		"custom torchao ops have only .default")
}

func TestTargetSetRules(t *testing.T) {
	qa := MustPacket("torchao.quantize_affine")
	qaDef := qa.Default()
	qpt := MustOverload("quantized_decomposed.quantize_per_tensor.default")
	qptT := MustOverload("quantized_decomposed.quantize_per_tensor.tensor")

	exact := NewTargetSet(qa, qpt)
	family := &TargetSet{}
	family.AddPacketAndOverloads(qa)
	tests := []struct {
		name string
		set  *TargetSet
		t    Target
		want bool
	}{
		{"packet added: packet matches", exact, qa, true},
		{"packet added: its overload does not", exact, qaDef, false},
		{"overload added: itself", exact, qpt, true},
		{"overload added: sibling overload does not", exact, qptT, false},
		{"overload added: its packet does not", exact, qpt.Packet, false},
		{"family: packet", family, qa, true},
		{"family: overload", family, qaDef, true},
		{"family: other op", family, qpt, false},
		{"callable", NewTargetSet(GetItem), GetItem, true},
		{"nil target", exact, nil, false},
		{"nil set", nil, qa, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.set.Has(tt.t))
		})
	}

	c := exact.Clone()
	c.Remove(qa)
	assert.False(t, c.Has(qa))
	assert.True(t, exact.Has(qa), "a clone is independent")
	assert.Equal(t, 2, exact.Len())
	assert.Equal(t, "{torchao.quantize_affine.*}", family.String())
	family.Clear()
	assert.Equal(t, 0, family.Len())
	var zero TargetSet
	zero.AddOverload(qpt)
	zero.AddPacket(qa)
	assert.Equal(t, "{quantized_decomposed.quantize_per_tensor.default, torchao.quantize_affine}", zero.String(), "insertion order")
}
