package ops

// atenRows are the aten ops of CNN and transformer export graphs, the ops
// the reference-representation rewrites emit, and every aten target of the
// fixture graphs (tests/testdata/pt2e/*.graph.txt). Each schema is copied
// from pytorch/pytorch:aten/src/ATen/native/native_functions.yaml.
// Overloads of one packet are listed in the order eager resolution tries
// them (Tensor before Scalar, as the JIT's overload order).
var atenRows = []opRow{
	// Linear algebra.
	{schema: "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", result: ruleLinear, doc: "input @ weight.T + bias"},
	{schema: "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", result: ruleAddmm, doc: "beta * self + alpha * (mat1 @ mat2)"},
	{schema: "aten::mm(Tensor self, Tensor mat2) -> Tensor", result: ruleMM, doc: "matrix product of two 2-D tensors"},
	{schema: "aten::bmm(Tensor self, Tensor mat2) -> Tensor", result: ruleBMM, doc: "batched matrix product of two 3-D tensors"},
	{schema: "aten::matmul(Tensor self, Tensor other) -> Tensor", result: ruleMatmul, doc: "NumPy matmul with 1-D promotion and batch broadcasting"},

	// Convolution and pooling.
	{schema: "aten::conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1] padding=0, SymInt[1] dilation=1, SymInt groups=1) -> Tensor", result: ruleConv1d, doc: "1-D convolution"},
	{schema: "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor", result: ruleConv2d, doc: "2-D convolution"},
	{schema: "aten::conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, str padding=\"valid\", SymInt[1] dilation=1, SymInt groups=1) -> Tensor", result: ruleConv1dPadding, doc: "1-D convolution with padding 'valid' or 'same'"},
	{schema: "aten::conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, str padding=\"valid\", SymInt[2] dilation=1, SymInt groups=1) -> Tensor", result: ruleConv2dPadding, doc: "2-D convolution with padding 'valid' or 'same'"},
	{schema: "aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor", result: ruleConvolution, doc: "N-d (transposed) convolution, the decomposed form of conv*d"},
	{schema: "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor", result: ruleMaxPool2d, doc: "2-D max pooling; an empty stride means stride = kernel_size"},
	{schema: "aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)", result: ruleMaxPool2dWithIndices, doc: "2-D max pooling returning values and int64 flat indices"},
	{schema: "aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor", result: ruleAvgPool2d, doc: "2-D average pooling"},
	{schema: "aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor", result: ruleAdaptiveAvgPool2d, doc: "2-D average pooling to a fixed output size"},
	{schema: "aten::_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor", result: ruleAdaptiveAvgPool2d, doc: "adaptive_avg_pool2d (decomposed form)"},

	// Views and shape ops.
	{schema: "aten::t(Tensor(a) self) -> Tensor(a)", result: ruleT, view: true, doc: "transpose of a tensor of rank <= 2"},
	{schema: "aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", result: ruleTransposeInt, view: true, doc: "swap two dimensions"},
	{schema: "aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)", result: rulePermute, view: true, doc: "reorder dimensions"},
	{schema: "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)", result: ruleView, view: true, doc: "reinterpret a contiguous tensor with a new shape (one -1 inferred)"},
	{schema: "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", result: ruleView, view: true, doc: "new shape, viewing when possible (one -1 inferred)"},
	{schema: "aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor", result: ruleView, doc: "view without alias tracking (a fresh tensor with a new shape)"},
	{schema: "aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)", result: ruleFlatten, view: true, doc: "merge dimensions start_dim..end_dim"},
	{schema: "aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", result: ruleUnsqueeze, view: true, doc: "insert a size-1 dimension"},
	{schema: "aten::squeeze(Tensor(a) self) -> Tensor(a)", result: ruleSqueeze, view: true, doc: "drop every size-1 dimension"},
	{schema: "aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", result: ruleSqueezeDim, view: true, doc: "drop dimension dim if its size is 1"},
	{schema: "aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)", result: ruleSqueezeDims, view: true, doc: "drop the listed dimensions that have size 1"},
	{schema: "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)", result: ruleExpand, view: true, doc: "broadcast size-1 dimensions without copying (-1 keeps a size)"},
	{schema: "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)", result: ruleSliceTensor, view: true, doc: "self[start:end:step] along dim"},
	{schema: "aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", result: ruleSelectInt, view: true, doc: "index one position along dim, dropping it"},
	{schema: "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)", result: ruleAliasSelf, view: true, doc: "self in the given memory format (self itself when it already is)"},
	{schema: "aten::cat(Tensor[] tensors, int dim=0) -> Tensor", result: ruleCat, doc: "concatenate along dim"},

	// Elementwise arithmetic.
	{schema: "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", result: ruleBinary, doc: "self + alpha * other, broadcasting"},
	{schema: "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", result: ruleBinary, doc: "self + alpha * other for a Python number other"},
	{schema: "aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", result: ruleBinary, doc: "self - alpha * other, broadcasting"},
	{schema: "aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", result: ruleBinary, doc: "self - alpha * other for a Python number other"},
	{schema: "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor", result: ruleBinary, doc: "self * other, broadcasting"},
	{schema: "aten::mul.Scalar(Tensor self, Scalar other) -> Tensor", result: ruleBinary, doc: "self * other for a Python number other"},
	{schema: "aten::div.Tensor(Tensor self, Tensor other) -> Tensor", result: ruleDiv, doc: "true division self / other (integers give float32)"},
	{schema: "aten::div.Scalar(Tensor self, Scalar other) -> Tensor", result: ruleDiv, doc: "true division by a Python number"},
	{schema: "aten::maximum(Tensor self, Tensor other) -> Tensor", result: ruleBinary, doc: "elementwise max, broadcasting"},
	{schema: "aten::minimum(Tensor self, Tensor other) -> Tensor", result: ruleBinary, doc: "elementwise min, broadcasting"},
	{schema: "aten::round(Tensor self) -> Tensor", result: ruleSameAsSelf, doc: "round half to even"},
	{schema: "aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", result: ruleClamp, doc: "clamp to Python-number bounds"},
	{schema: "aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor", result: ruleClamp, doc: "clamp to tensor bounds, broadcasting"},
	{schema: "aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)", result: ruleToDType, doc: "cast to dtype (float to int truncates toward zero)"},

	// Activations.
	{schema: "aten::relu(Tensor self) -> Tensor", result: ruleSameAsSelf, doc: "max(x, 0)"},
	{schema: "aten::relu_(Tensor(a!) self) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place max(x, 0)"},
	{schema: "aten::silu_(Tensor(a!) self) -> Tensor(a!)", result: ruleUnaryFloat, doc: "in-place x * sigmoid(x)"},
	{schema: "aten::gelu(Tensor self, *, str approximate='none') -> Tensor", result: ruleUnaryFloat, doc: "Gaussian error linear unit ('none' or 'tanh' approximation)"},
	{schema: "aten::silu(Tensor self) -> Tensor", result: ruleUnaryFloat, doc: "x * sigmoid(x)"},
	{schema: "aten::sigmoid(Tensor self) -> Tensor", result: ruleUnaryFloat, doc: "1 / (1 + exp(-x))"},
	{schema: "aten::tanh(Tensor self) -> Tensor", result: ruleUnaryFloat, doc: "hyperbolic tangent"},
	{schema: "aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", result: ruleSameAsSelf, doc: "clamp(x, min_val, max_val)"},
	{schema: "aten::hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place clamp(x, min_val, max_val)"},
	{schema: "aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", result: ruleSoftmax, doc: "softmax along dim"},
	{schema: "aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", result: ruleInternalSoftmax, doc: "softmax along dim (decomposed form)"},
	{schema: "aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", result: ruleSoftmax, doc: "log of softmax along dim"},
	{schema: "aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", result: ruleInternalSoftmax, doc: "log_softmax along dim (decomposed form)"},
	{schema: "aten::dropout(Tensor input, float p, bool train) -> Tensor", result: ruleKeepInput, impure: true, doc: "zero elements with probability p when train (random)"},

	// Normalisation.
	{schema: "aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor", result: ruleLayerNorm, doc: "normalise over the trailing normalized_shape dims"},
	{schema: "aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)", result: ruleNativeLayerNorm, doc: "layer norm returning (out, mean, rstd)"},
	{schema: "aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor", result: ruleGroupNorm, doc: "normalise over channel groups"},
	{schema: "aten::native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)", result: ruleNativeGroupNorm, doc: "group norm returning (out, mean [N, group], rstd [N, group])"},
	{schema: "aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor", result: ruleKeepInput, doc: "normalise each channel of each sample"},
	{schema: "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor", result: ruleKeepInput, doc: "batch normalisation (running stats when not training)"},
	{schema: "aten::_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)", result: ruleNativeBatchNormNoTraining, doc: "inference batch norm returning (out, empty mean, empty rstd)"},

	// Reductions and attention.
	{schema: "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", result: ruleMeanDim, doc: "mean over dim (all dims when None or empty)"},
	{schema: "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", result: ruleSumDim, doc: "sum over dim (integers accumulate in int64)"},
	{schema: "aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", result: ruleMeanAll, doc: "mean of every element (0-dim result)"},
	{schema: "aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", result: ruleSumAll, doc: "sum of every element (0-dim result)"},
	{schema: "aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", result: ruleAmaxAmin, doc: "max over dim (all dims when empty)"},
	{schema: "aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", result: ruleAmaxAmin, doc: "min over dim (all dims when empty)"},
	{schema: "aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor", result: ruleSDPA, doc: "softmax(q @ k.T * scale + mask) @ v"},
	{schema: "aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor", result: ruleEmbedding, doc: "rows of weight picked by indices"},

	// Copies, mutation and assertions.
	{schema: "aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", result: ruleSameAsSelf, doc: "copy"},
	{schema: "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", result: ruleAliasSelf, doc: "copy src into self in place (mutation: impure)"},
	{schema: "aten::_assert_tensor_metadata(Tensor a, SymInt[]? size=None, SymInt[]? stride=None, ScalarType? dtype=None, *, Device? device=None, Layout? layout=None) -> ()", result: ruleNoResult, impure: true, doc: "assert a's size, stride, dtype, device and layout"},
}
