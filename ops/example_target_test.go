package ops_test

import (
	"fmt"

	"github.com/fxquant/fxquant/ops"
)

// A packet and its overloads are distinct comparable values; both
// spellings parse, and one canonical form prints.
func ExampleParseTarget() {
	for _, s := range []string{"aten::add.Tensor", "aten.add.Tensor", "torchao.quantize_affine", "torchao.quantize_affine.default", "operator.getitem"} {
		t, err := ops.ParseTarget(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-32s %-14T %v\n", s, t, t)
	}
	pkt := ops.MustPacket("torchao.quantize_affine")
	ovl := ops.MustOverload("torchao.quantize_affine.default")
	fmt.Println("packet == overload:", ops.Target(pkt) == ops.Target(ovl))
	fmt.Println("overload's packet == packet:", ovl.Packet == pkt)
	fmt.Println("aten::add.Tensor == aten.add.Tensor:", ops.MustParseTarget("aten::add.Tensor") == ops.MustParseTarget("aten.add.Tensor"))
	// Output:
	// aten::add.Tensor                 ops.Overload   aten.add.Tensor
	// aten.add.Tensor                  ops.Overload   aten.add.Tensor
	// torchao.quantize_affine          ops.Packet     torchao.quantize_affine
	// torchao.quantize_affine.default  ops.Overload   torchao.quantize_affine.default
	// operator.getitem                 ops.Callable   operator.getitem
	// packet == overload: false
	// overload's packet == packet: true
	// aten::add.Tensor == aten.add.Tensor: true
}

// A TargetSet states its rule per form: an added overload matches only
// itself, a packet added with AddPacket only the packet, and a packet added
// with AddPacketAndOverloads the packet and every overload of it.
func ExampleTargetSet_Has() {
	var s ops.TargetSet
	s.AddOverload(ops.MustOverload("aten.add.Tensor"))
	s.AddPacket(ops.MustPacket("aten.mul"))
	s.AddPacketAndOverloads(ops.MustPacket("torchao.quantize_affine"))
	for _, t := range []string{
		"aten.add.Tensor", "aten.add.Scalar", "aten.add",
		"aten.mul", "aten.mul.Tensor",
		"torchao.quantize_affine", "torchao.quantize_affine.default",
	} {
		fmt.Printf("%-32s %v\n", t, s.Has(ops.MustParseTarget(t)))
	}
	// Output:
	// aten.add.Tensor                  true
	// aten.add.Scalar                  false
	// aten.add                         false
	// aten.mul                         true
	// aten.mul.Tensor                  false
	// torchao.quantize_affine          true
	// torchao.quantize_affine.default  true
}
