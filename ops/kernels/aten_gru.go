package kernels

import (
	"github.com/fxquant/fxquant/ops/tensor"
)

// GRU is aten.gru.input (torch.nn.GRU's call) on float32 as PyTorch 2.14's
// CPU path computes it (ATen's _rnn_impl_with_concat with FullLayer and
// GRUCell): per layer, the input projections of every time step at once
// (at::linear of the [seq, batch, in] input, transposed from batch_first),
// then for each step the hidden projection linear(h, w_hh, b_hh) and
//
//	r = sigmoid(hg_r + ig_r)
//	z = sigmoid(hg_z + ig_z)
//	n = tanh(ig_n + hg_n·r)
//	h = (h - n)·z + n
//
// in that order of float32 operations, each sigmoid over one batch row as
// TensorIterator's inner loop runs it. params holds w_ih, w_hh (and b_ih,
// b_hh with hasBiases) per layer. It returns the output ([batch, seq, H]
// with batchFirst, else [seq, batch, H]) and the final hidden states
// [layers, batch, H]. Bidirectional GRUs, dropout between layers in
// training, and inputs other than 3-D float32 are refused.
func GRU(input, hx *tensor.Tensor, params []*tensor.Tensor, hasBiases bool, numLayers int, dropout float64, train, bidirectional, batchFirst bool) (output, hy *tensor.Tensor, err error) {
	if bidirectional {
		return nil, nil, argErrf("gru: bidirectional GRUs are not supported")
	}
	if train && dropout > 0 && numLayers > 1 {
		return nil, nil, argErrf("gru: dropout %g between layers in training is not supported", dropout)
	}
	if input == nil || input.Dim() != 3 || input.DType() != tensor.Float32 {
		return nil, nil, shapeErrf("gru: argument \"input\": want a 3-D float32 tensor, got %v", shapeOf(input))
	}
	per := 2
	if hasBiases {
		per = 4
	}
	if numLayers < 1 || len(params) != per*numLayers {
		return nil, nil, argErrf("gru: %d layers with biases=%v need %d params, got %d", numLayers, hasBiases, per*numLayers, len(params))
	}
	x := input
	if batchFirst {
		if x, err = x.Transpose(0, 1); err != nil {
			return nil, nil, err
		}
	}
	seq, batch := x.Size(0), x.Size(1)
	if hx == nil || hx.Dim() != 3 || hx.Size(0) != numLayers || hx.Size(1) != batch {
		return nil, nil, shapeErrf("gru: argument \"hx\": want shape [%d, %d, H], got %v", numLayers, batch, shapeOf(hx))
	}
	var finals []*tensor.Tensor
	for l := 0; l < numLayers; l++ {
		p := params[l*per : (l+1)*per]
		var bih, bhh *tensor.Tensor
		if hasBiases {
			bih, bhh = p[2], p[3]
		}
		h, err := hx.Select(0, l)
		if err != nil {
			return nil, nil, err
		}
		hs := h.Size(1)
		if p[1].Dim() != 2 || p[1].Size(0) != 3*hs || p[0].Dim() != 2 || p[0].Size(0) != 3*hs {
			return nil, nil, shapeErrf("gru: layer %d: weights %v and %v do not fit hidden size %d", l, p[0].Shape(), p[1].Shape(), hs)
		}
		inW, err := Linear(x, p[0], bih) // [seq, batch, 3H]
		if err != nil {
			return nil, nil, err
		}
		steps := make([]*tensor.Tensor, 0, seq)
		for t := 0; t < seq; t++ {
			ig, err := inW.Select(0, t)
			if err != nil {
				return nil, nil, err
			}
			if h, err = gruCell(ig, h, p[1], bhh, hs); err != nil {
				return nil, nil, err
			}
			steps = append(steps, h)
		}
		if x, err = Stack(steps, 0); err != nil {
			return nil, nil, err
		}
		finals = append(finals, h)
	}
	if hy, err = Stack(finals, 0); err != nil {
		return nil, nil, err
	}
	output = x
	if batchFirst {
		if output, err = output.Transpose(0, 1); err != nil {
			return nil, nil, err
		}
	}
	return output, hy, nil
}

// gruCell is ATen's GRUCell with the input projection ig ([batch, 3H])
// precomputed.
func gruCell(ig, h, whh, bhh *tensor.Tensor, hs int) (*tensor.Tensor, error) {
	hg, err := Linear(h, whh, bhh)
	if err != nil {
		return nil, err
	}
	chunk := func(x *tensor.Tensor, k int) (*tensor.Tensor, error) { return x.Slice(1, k*hs, (k+1)*hs, 1) }
	var ic, hc [3]*tensor.Tensor
	for k := 0; k < 3; k++ {
		if ic[k], err = chunk(ig, k); err != nil {
			return nil, err
		}
		if hc[k], err = chunk(hg, k); err != nil {
			return nil, err
		}
	}
	gate := func(k int) (*tensor.Tensor, error) {
		s, err := Binary(OpAdd, T(hc[k]), T(ic[k]), nil)
		if err != nil {
			return nil, err
		}
		return sigmoidRows(s)
	}
	r, err := gate(0)
	if err != nil {
		return nil, err
	}
	z, err := gate(1)
	if err != nil {
		return nil, err
	}
	hr, err := Binary(OpMul, T(hc[2]), T(r), nil)
	if err != nil {
		return nil, err
	}
	n, err := Binary(OpAdd, T(ic[2]), T(hr), nil)
	if err != nil {
		return nil, err
	}
	if n, err = Tanh(n); err != nil {
		return nil, err
	}
	d, err := Binary(OpSub, T(h), T(n), nil)
	if err != nil {
		return nil, err
	}
	if d, err = Binary(OpMul, T(d), T(z), nil); err != nil {
		return nil, err
	}
	return Binary(OpAdd, T(d), T(n), nil)
}

// sigmoidRows applies Sigmoid to each row of a 2-D tensor on its own: ATen
// runs sigmoid_ in place on a chunk of the gates, whose rows are not
// adjacent in memory, so its vector loop restarts (and its scalar tail
// recurs) at every row.
func sigmoidRows(x *tensor.Tensor) (*tensor.Tensor, error) {
	if x.Size(0) == 1 {
		return Sigmoid(x)
	}
	rows := make([]*tensor.Tensor, x.Size(0))
	for i := range rows {
		row, err := x.Select(0, i)
		if err != nil {
			return nil, err
		}
		if rows[i], err = Sigmoid(row); err != nil {
			return nil, err
		}
	}
	return Stack(rows, 0)
}
