// Package convert is fxquant's programmatic PT2E API: torchao's
// prepare_pt2e, calibration and convert_pt2e on an fxgraph.Graph
// (torchao-pt2e.md sections 2.4, 3 and 4).
//
// # Flow
//
// A float program read with the pt2 package has its parameters as
// placeholders; [Unlift] turns them into get_attr nodes, as
// ExportedProgram.module() does. Then:
//
//	err := convert.Prepare(g, quantizer)              // annotate, insert observers
//	err = convert.Calibrate(g, batches, progress)     // run observers on data
//	err = convert.Convert(g, convert.ConvertOptions{}) // observers -> q/dq
//
// Each step works on a clone of the graph and swaps it in only on success,
// so a failing step leaves the graph as it was.
//
// # Annotation model
//
// A [Quantizer] attaches a [QuantizationAnnotation] to nodes (under
// [AnnotationKey] in the node's metadata): a spec per input edge, in
// insertion order, and one for the output. Specs are [QuantizationSpec]
// (dtype, range, qscheme, channel axis, dynamic flag and an [ObserverCtor]),
// [FixedQParamsQuantizationSpec], [SharedQuantizationSpec] (share the
// observer of an [EdgeOrNode]) and [DerivedQuantizationSpec]. Quantizers
// compose with [ComposableQuantizer]. [XNNPACKQuantizer] with
// [SymmetricQuantizationConfig] is torchao's test XNNPACK quantizer, with
// per-module-name and per-module-type configs taking precedence over the
// global one ([XNNPACKQuantizer.SetModuleName], [ModuleNameFilter]);
// [Int4GroupwiseQuantizer] annotates linears for int8 per-token dynamic
// activations and int4 groupwise weights; [EmbeddingQuantizer] quantizes
// embedding tables per row (uint8, float qparams). [ComposableQuantizer]
// applies torchao's rule that a later quantizer may not replace or remove an
// earlier one's annotation. [ParseQuantizerConfig] reads a JSON quantizer
// config (the format is described at [QuantizerConfigFormat]) that says what
// torchao's set_global / set_module_name / set_module_type /
// set_operator_type calls say; other quantizers join it through
// [RegisterQuantizerKind] and [RegisterConfigFunction].
//
// # Prepare
//
// [Prepare] folds batch norms into convolutions and linears
// ([FoldBatchNorm]), runs the quantizer, groups edges and outputs that share
// an observer with union-find (explicit sharing, and implicit sharing of
// equal specs unless NoImplicitSharing), builds one observer per group, and
// inserts call_module nodes activation_post_process_<i> on the observed edges
// and outputs, reusing an existing observer node of the same group. The
// written first argument of a mutating op stays unobserved when it comes
// from a registered buffer ([PrepareOptions].Buffers).
//
// # Convert
//
// [Convert] replaces each observer node with what its observer's convert
// plan says (section 2.4): quantize/dequantize_per_tensor with literal
// qparams, per-channel ops with <scope>_scale_<n> get_attr nodes,
// choose_qparams with getitem for dynamic quantization, and for affine
// observers _scale<i>/_zero_point<i> get_attrs before the .default
// overloads of torchao.quantize_affine and dequantize_affine
// ([ConvertOptions].PacketAffineOps restores the packets older torchao
// inserted). The quantize and dequantize nodes of the decomposed plans carry
// a from_node record naming their observer ([NodeSource]). It then removes
// dead code and runs, in order, [DuplicateDQ], metadata porting, on request
// the fold of quantize into mutable buffer storage
// ([FoldQuantizeIntoMutableBuffers]), constant folding constrained to
// ops.QuantizeOps (_QUANT_OPS), and on request the reference representation rewrite.
//
// # Quantization-aware training
//
// [PrepareQAT] is prepare_qat_pt2e with the XNNPACK quantizer and a
// [SymmetricQATConfig], or with the [X86InductorQuantizer] and
// [X86InductorQuantizationConfig] with QAT (uint8 activations, per-channel
// int8 weights): QAT conv+BN annotation, the conv+BN fold
// simulation ([FuseConvBNQAT]) and fused fake quantizers written as
// torch.export traces them ([MaterializeFakeQuants],
// [FusedFakeQuantize] with the state as buffers), so that the program
// written with pt2.(*Program).WithGraph loads and trains in PyTorch.
// [MoveToEval] and [MoveToTrain] switch dropout and batch norm as torchao
// does; [ConvertQAT] converts the program PyTorch trained
// ([FakeQuantObservers], then [FoldConvBNQAT] between observer replacement
// and the rest of Convert).
//
// # Errors
//
// Bad input is an error naming the node: an annotation of a node that is not
// an argument of the annotated node ([ErrAnnotation]), a shared spec that
// points at an edge with no spec or observer ([ErrSharedSpec]), an observer
// that saw no data ([ErrObserver]), a calibration batch of the wrong shape
// ([ErrBatch]).
package convert
