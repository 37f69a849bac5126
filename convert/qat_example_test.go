package convert_test

import (
	"fmt"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/pt2"
)

// PrepareQAT on a Conv+BN+ReLU, Conv+BN program exported in train mode
// (tests/testdata/qat): five fused fake quantizers (input, two weights, two
// outputs), both batch norms kept in the fold simulation.
// p.WithGraph(g).WriteArchive then gives the .pt2 PyTorch trains.
func ExamplePrepareQAT() {
	p, err := pt2.ReadFile("../tests/testdata/qat/convbnrelu.float.pt2", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := p.Unlifted()
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := convert.SymmetricQATConfig(convert.DefaultSymmetricConfigOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := convert.PrepareQAT(g, convert.NewXNNPACKQuantizer(cfg), convert.QATOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("fake quantizers:", countCalls(g, "aten.fused_moving_avg_obs_fake_quant.default"))
	fmt.Println("batch norms:", countCalls(g, "aten.batch_norm.default"))
	// Output:
	// fake quantizers: 5
	// batch norms: 2
}

// ConvertQAT on the program PyTorch trained: the batch norms are folded
// into the convolutions and the fake quantizers become q/dq nodes with the
// trained qparams.
func ExampleConvertQAT() {
	p, err := pt2.ReadFile("../tests/testdata/qat/convbnrelu.trained.pt2", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := p.Unlifted()
	if err != nil {
		fmt.Println(err)
		return
	}
	convert.MoveToEval(g) // torchao: move_exported_model_to_eval before convert_pt2e
	if err := convert.ConvertQAT(g, convert.ConvertOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("batch norms:", countCalls(g, "aten.batch_norm.default"))
	fmt.Println("quantize:", countCalls(g, "quantized_decomposed.quantize_per_tensor.default"))
	fmt.Println("dequantize:", countCalls(g, "quantized_decomposed.dequantize_per_tensor.default"))
	// Output:
	// batch norms: 0
	// quantize: 3
	// dequantize: 5
}

// PrepareQAT with torchao's X86InductorQuantizer and
// get_default_x86_inductor_quantization_config(is_qat=True): uint8
// activation fake quantizers (0..255, affine) and per-channel int8 weight
// fake quantizers, the batch norms kept in the fold simulation.
func ExamplePrepareQAT_x86Inductor() {
	p, err := pt2.ReadFile("../tests/testdata/qat/convbnrelu.float.pt2", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := p.Unlifted()
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{QAT: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	q := convert.NewX86InductorQuantizer().SetGlobal(cfg)
	if err := convert.PrepareQAT(g, q, convert.QATOptions{PresizePerChannel: true}); err != nil {
		fmt.Println(err)
		return
	}
	perChannel := 0
	for n := range g.All() {
		if n.Op() == fxgraph.CallFunction && n.Target() == convert.FusedFakeQuantize && n.Arg(11) == true {
			perChannel++
		}
	}
	fmt.Println("fake quantizers:", countCalls(g, "aten.fused_moving_avg_obs_fake_quant.default"), "per channel:", perChannel)
	fmt.Println("batch norms:", countCalls(g, "aten.batch_norm.default"))
	// Output:
	// fake quantizers: 5 per channel: 2
	// batch norms: 2
}
