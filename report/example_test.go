package report_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/numdebug"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/report"
)

// Quantize a one-layer model, keep the observers' histograms from the
// calibrated graph, and write the report page. The comparison comes from
// numdebug.Compare; without it the page draws both graphs uncoloured and
// says why.
func ExampleWrite() {
	rng := rand.New(rand.NewPCG(1, 2))
	randn := func(shape ...int) *tensor.Tensor {
		v := make([]float32, tensor.Numel(shape))
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return tensor.MustFromData(tensor.Float32, shape, v)
	}
	float := fxgraph.New()
	float.SetAttr("w", randn(8, 4))
	x := float.Placeholder("x", ops.Plain(tensor.Float32, 2, 4))
	w := float.GetAttr("w", ops.Plain(tensor.Float32, 8, 4))
	y := float.Call(ops.MustOverload("aten.linear.default"), x, w)
	y.SetType(ops.Plain(tensor.Float32, 2, 8))
	float.SetOutput(ops.Tuple{y})

	quant, _ := float.Clone()
	q := convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(convert.DefaultSymmetricConfigOptions()))
	batches := [][]*tensor.Tensor{{randn(2, 4)}, {randn(2, 4)}}
	if err := convert.Prepare(quant, q); err != nil {
		panic(err)
	}
	if err := convert.Calibrate(quant, batches, nil); err != nil {
		panic(err)
	}
	hists := report.ObserverHistograms(quant) // before convert removes the observers
	if err := convert.Convert(quant, convert.ConvertOptions{}); err != nil {
		panic(err)
	}

	page := &report.Page{Title: "linear", Float: float, Quant: quant, Histograms: hists}
	if cmp, err := numdebug.Compare(float, quant, batches); err == nil {
		page.Comparison = cmp
	} else {
		page.Note = err.Error()
	}
	var buf bytes.Buffer
	if err := report.Write(&buf, page); err != nil {
		panic(err)
	}
	fmt.Println("observed activations:", len(hists))
	fmt.Println("self-contained:", !strings.Contains(buf.String(), "<link") && !strings.Contains(buf.String(), "src="))
	// Output:
	// observed activations: 2
	// self-contained: true
}
