package ops

// elemRows are the elementwise, activation, dropout and copy ops of
// torchvision and transformer exports that atenRows lacks, in-place forms
// included. Each schema is copied exactly from PyTorch 2.14.1's operator
// table (torch-2.14.1-ops.json). Their kernels are in elemKernels
// (kernels_elem_table.go).
var elemRows = []opRow{
	// Activations.
	{schema: "aten::hardswish(Tensor self) -> Tensor", result: ruleSameAsSelf, doc: "x * min(max(x + 3, 0), 6) / 6"},
	{schema: "aten::hardswish_(Tensor(a!) self) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place hardswish"},
	{schema: "aten::hardsigmoid(Tensor self) -> Tensor", result: ruleSameAsSelf, doc: "min(max(x + 3, 0), 6) / 6"},
	{schema: "aten::hardsigmoid_(Tensor(a!) self) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place hardsigmoid"},
	{schema: "aten::relu6(Tensor self) -> Tensor", result: ruleSameAsSelf, doc: "min(max(x, 0), 6)"},
	{schema: "aten::relu6_(Tensor(a!) self) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place relu6"},
	{schema: "aten::gelu_(Tensor(a!) self, *, str approximate=\"none\") -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place gelu"},
	{schema: "aten::sigmoid_(Tensor(a!) self) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place sigmoid"},
	{schema: "aten::tanh_(Tensor(a!) self) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place tanh"},

	// Pointwise math.
	{schema: "aten::neg(Tensor self) -> Tensor", result: ruleSameAsSelf, doc: "-x"},
	{schema: "aten::neg_(Tensor(a!) self) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place -x"},
	{schema: "aten::exp(Tensor self) -> Tensor", result: ruleUnaryFloat, doc: "e^x"},
	{schema: "aten::exp_(Tensor(a!) self) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place e^x"},
	{schema: "aten::erf(Tensor self) -> Tensor", result: ruleUnaryFloat, doc: "error function"},
	{schema: "aten::sqrt(Tensor self) -> Tensor", result: ruleUnaryFloat, doc: "square root"},
	{schema: "aten::sqrt_(Tensor(a!) self) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place square root"},
	{schema: "aten::rsqrt(Tensor self) -> Tensor", result: ruleUnaryFloat, doc: "1 / sqrt(x)"},
	{schema: "aten::rsqrt_(Tensor(a!) self) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place 1 / sqrt(x)"},
	{schema: "aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", result: rulePowTensorScalar, doc: "x ** exponent for a Python number exponent"},
	{schema: "aten::pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place x ** exponent"},

	// In-place arithmetic: the result is self, with self's type.
	{schema: "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place self + alpha * other"},
	{schema: "aten::add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place self + alpha * other for a Python number other"},
	{schema: "aten::sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place self - alpha * other"},
	{schema: "aten::sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place self - alpha * other for a Python number other"},
	{schema: "aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place self * other"},
	{schema: "aten::mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place self * other for a Python number other"},
	{schema: "aten::div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place true division"},
	{schema: "aten::div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place true division by a Python number"},
	{schema: "aten::clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place clamp to Python-number bounds"},
	{schema: "aten::clamp_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)", result: ruleSameAsSelf, doc: "in-place clamp to tensor bounds"},

	// Dropout: the identity in eval (train=False); random otherwise.
	{schema: "aten::dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)", result: ruleSameAsSelf, impure: true, doc: "in-place dropout (random when train)"},
	{schema: "aten::feature_dropout(Tensor input, float p, bool train) -> Tensor", result: ruleKeepInput, impure: true, doc: "channel dropout (random when train)"},
	{schema: "aten::feature_dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)", result: ruleSameAsSelf, impure: true, doc: "in-place channel dropout (random when train)"},
	{schema: "aten::alpha_dropout(Tensor input, float p, bool train) -> Tensor", result: ruleKeepInput, impure: true, doc: "SELU-preserving dropout (random when train)"},
	{schema: "aten::alpha_dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)", result: ruleSameAsSelf, impure: true, doc: "in-place alpha dropout (random when train)"},
	{schema: "aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)", result: ruleNativeDropout, impure: true, doc: "dropout returning (output, bool keep-mask)"},

	// Aliases and copies.
	{schema: "aten::alias(Tensor(a) self) -> Tensor(a)", result: ruleAliasSelf, view: true, doc: "self, as a new alias"},
	{schema: "aten::detach(Tensor(a) self) -> Tensor(a)", result: ruleAliasSelf, view: true, doc: "self without autograd history"},
	{schema: "aten::lift_fresh_copy(Tensor self) -> Tensor", result: ruleSameAsSelf, doc: "a copy of a tensor constant lifted into the graph"},
	{schema: "aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor", result: ruleToCopy, doc: "a copy, cast to dtype when given"},
}
