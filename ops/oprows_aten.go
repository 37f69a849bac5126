package ops

// atenRows are the aten ops of CNN and transformer export graphs, the ops
// the reference-representation rewrites emit, and every aten target of the
// fixture graphs (tests/testdata/pt2e/*.graph.txt): the ops fxquant has a
// result-type rule for. Each row names an overload of PyTorch's operator
// table (ops/schemas), which supplies its schema and tags. Overloads of one
// packet are listed in the order eager resolution tries them (Tensor before
// Scalar, as the JIT's overload order).
var atenRows = []opRow{
	// Linear algebra.
	{op: "aten.linear.default", result: ruleLinear, doc: "input @ weight.T + bias"},
	{op: "aten.addmm.default", result: ruleAddmm, doc: "beta * self + alpha * (mat1 @ mat2)"},
	{op: "aten.mm.default", result: ruleMM, doc: "matrix product of two 2-D tensors"},
	{op: "aten.bmm.default", result: ruleBMM, doc: "batched matrix product of two 3-D tensors"},
	{op: "aten.matmul.default", result: ruleMatmul, doc: "NumPy matmul with 1-D promotion and batch broadcasting"},

	// Convolution and pooling.
	{op: "aten.conv1d.default", result: ruleConv1d, doc: "1-D convolution"},
	{op: "aten.conv2d.default", result: ruleConv2d, doc: "2-D convolution"},
	{op: "aten.conv1d.padding", result: ruleConv1dPadding, doc: "1-D convolution with padding 'valid' or 'same'"},
	{op: "aten.conv2d.padding", result: ruleConv2dPadding, doc: "2-D convolution with padding 'valid' or 'same'"},
	{op: "aten.convolution.default", result: ruleConvolution, doc: "N-d (transposed) convolution, the decomposed form of conv*d"},
	{op: "aten.max_pool2d.default", result: ruleMaxPool2d, doc: "2-D max pooling; an empty stride means stride = kernel_size"},
	{op: "aten.max_pool2d_with_indices.default", result: ruleMaxPool2dWithIndices, doc: "2-D max pooling returning values and int64 flat indices"},
	{op: "aten.avg_pool2d.default", result: ruleAvgPool2d, doc: "2-D average pooling"},
	{op: "aten.adaptive_avg_pool2d.default", result: ruleAdaptiveAvgPool2d, doc: "2-D average pooling to a fixed output size"},
	{op: "aten._adaptive_avg_pool2d.default", result: ruleAdaptiveAvgPool2d, doc: "adaptive_avg_pool2d (decomposed form)"},

	// Views and shape ops.
	{op: "aten.t.default", result: ruleT, view: true, doc: "transpose of a tensor of rank <= 2"},
	{op: "aten.transpose.int", result: ruleTransposeInt, view: true, doc: "swap two dimensions"},
	{op: "aten.permute.default", result: rulePermute, view: true, doc: "reorder dimensions"},
	{op: "aten.view.default", result: ruleView, view: true, doc: "reinterpret a contiguous tensor with a new shape (one -1 inferred)"},
	{op: "aten.reshape.default", result: ruleView, view: true, doc: "new shape, viewing when possible (one -1 inferred)"},
	{op: "aten._unsafe_view.default", result: ruleView, doc: "view without alias tracking (a fresh tensor with a new shape)"},
	{op: "aten.flatten.using_ints", result: ruleFlatten, view: true, doc: "merge dimensions start_dim..end_dim"},
	{op: "aten.unsqueeze.default", result: ruleUnsqueeze, view: true, doc: "insert a size-1 dimension"},
	{op: "aten.squeeze.default", result: ruleSqueeze, view: true, doc: "drop every size-1 dimension"},
	{op: "aten.squeeze.dim", result: ruleSqueezeDim, view: true, doc: "drop dimension dim if its size is 1"},
	{op: "aten.squeeze.dims", result: ruleSqueezeDims, view: true, doc: "drop the listed dimensions that have size 1"},
	{op: "aten.expand.default", result: ruleExpand, view: true, doc: "broadcast size-1 dimensions without copying (-1 keeps a size)"},
	{op: "aten.slice.Tensor", result: ruleSliceTensor, view: true, doc: "self[start:end:step] along dim"},
	{op: "aten.select.int", result: ruleSelectInt, view: true, doc: "index one position along dim, dropping it"},
	{op: "aten.contiguous.default", result: ruleAliasSelf, view: true, doc: "self in the given memory format (self itself when it already is)"},
	{op: "aten.cat.default", result: ruleCat, doc: "concatenate along dim"},

	// Elementwise arithmetic.
	{op: "aten.add.Tensor", result: ruleBinary, doc: "self + alpha * other, broadcasting"},
	{op: "aten.add.Scalar", result: ruleBinary, doc: "self + alpha * other for a Python number other"},
	{op: "aten.sub.Tensor", result: ruleBinary, doc: "self - alpha * other, broadcasting"},
	{op: "aten.sub.Scalar", result: ruleBinary, doc: "self - alpha * other for a Python number other"},
	{op: "aten.mul.Tensor", result: ruleBinary, doc: "self * other, broadcasting"},
	{op: "aten.mul.Scalar", result: ruleBinary, doc: "self * other for a Python number other"},
	{op: "aten.div.Tensor", result: ruleDiv, doc: "true division self / other (integers give float32)"},
	{op: "aten.div.Scalar", result: ruleDiv, doc: "true division by a Python number"},
	{op: "aten.maximum.default", result: ruleBinary, doc: "elementwise max, broadcasting"},
	{op: "aten.minimum.default", result: ruleBinary, doc: "elementwise min, broadcasting"},
	{op: "aten.round.default", result: ruleSameAsSelf, doc: "round half to even"},
	{op: "aten.clamp.default", result: ruleClamp, doc: "clamp to Python-number bounds"},
	{op: "aten.clamp.Tensor", result: ruleClamp, doc: "clamp to tensor bounds, broadcasting"},
	{op: "aten.to.dtype", result: ruleToDType, doc: "cast to dtype (float to int truncates toward zero)"},

	// Activations.
	{op: "aten.relu.default", result: ruleSameAsSelf, doc: "max(x, 0)"},
	{op: "aten.relu_.default", result: ruleSameAsSelf, doc: "in-place max(x, 0)"},
	{op: "aten.silu_.default", result: ruleUnaryFloat, doc: "in-place x * sigmoid(x)"},
	{op: "aten.gelu.default", result: ruleUnaryFloat, doc: "Gaussian error linear unit ('none' or 'tanh' approximation)"},
	{op: "aten.silu.default", result: ruleUnaryFloat, doc: "x * sigmoid(x)"},
	{op: "aten.sigmoid.default", result: ruleUnaryFloat, doc: "1 / (1 + exp(-x))"},
	{op: "aten.tanh.default", result: ruleUnaryFloat, doc: "hyperbolic tangent"},
	{op: "aten.hardtanh.default", result: ruleSameAsSelf, doc: "clamp(x, min_val, max_val)"},
	{op: "aten.hardtanh_.default", result: ruleSameAsSelf, doc: "in-place clamp(x, min_val, max_val)"},
	{op: "aten.softmax.int", result: ruleSoftmax, doc: "softmax along dim"},
	{op: "aten._softmax.default", result: ruleInternalSoftmax, doc: "softmax along dim (decomposed form)"},
	{op: "aten.log_softmax.int", result: ruleSoftmax, doc: "log of softmax along dim"},
	{op: "aten._log_softmax.default", result: ruleInternalSoftmax, doc: "log_softmax along dim (decomposed form)"},
	{op: "aten.dropout.default", result: ruleKeepInput, impure: true, doc: "zero elements with probability p when train (random)"},

	// Normalisation.
	{op: "aten.layer_norm.default", result: ruleLayerNorm, doc: "normalise over the trailing normalized_shape dims"},
	{op: "aten.native_layer_norm.default", result: ruleNativeLayerNorm, doc: "layer norm returning (out, mean, rstd)"},
	{op: "aten.group_norm.default", result: ruleGroupNorm, doc: "normalise over channel groups"},
	{op: "aten.native_group_norm.default", result: ruleNativeGroupNorm, doc: "group norm returning (out, mean [N, group], rstd [N, group])"},
	{op: "aten.instance_norm.default", result: ruleKeepInput, doc: "normalise each channel of each sample"},
	{op: "aten.batch_norm.default", result: ruleKeepInput, doc: "batch normalisation (running stats when not training)"},
	{op: "aten._native_batch_norm_legit_no_training.default", result: ruleNativeBatchNormNoTraining, doc: "inference batch norm returning (out, empty mean, empty rstd)"},

	// Reductions and attention.
	{op: "aten.mean.dim", result: ruleMeanDim, doc: "mean over dim (all dims when None or empty)"},
	{op: "aten.sum.dim_IntList", result: ruleSumDim, doc: "sum over dim (integers accumulate in int64)"},
	{op: "aten.mean.default", result: ruleMeanAll, doc: "mean of every element (0-dim result)"},
	{op: "aten.sum.default", result: ruleSumAll, doc: "sum of every element (0-dim result)"},
	{op: "aten.amax.default", result: ruleAmaxAmin, doc: "max over dim (all dims when empty)"},
	{op: "aten.amin.default", result: ruleAmaxAmin, doc: "min over dim (all dims when empty)"},
	{op: "aten.scaled_dot_product_attention.default", result: ruleSDPA, doc: "softmax(q @ k.T * scale + mask) @ v"},
	{op: "aten.embedding.default", result: ruleEmbedding, doc: "rows of weight picked by indices"},

	// Copies, mutation and assertions.
	{op: "aten.clone.default", result: ruleSameAsSelf, doc: "copy"},
	{op: "aten.copy_.default", result: ruleAliasSelf, doc: "copy src into self in place (mutation: impure)"},
	{op: "aten._assert_tensor_metadata.default", result: ruleNoResult, impure: true, doc: "assert a's size, stride, dtype, device and layout"},
}
