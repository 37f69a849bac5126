// Package tensor holds fxquant's dense tensor and its element types.
//
// # Element types
//
// [DType] covers every ScalarType of PyTorch's serialized export format plus
// the logical Int4 and UInt4 types, stored one value per Int8 or UInt8
// element. Float16 and BFloat16 are stored as bit patterns; conversions
// round to nearest even exactly as c10 does ([Float32ToBFloat16],
// [Float32ToFloat16]).
//
// # Tensors
//
// [Tensor] is a strided view over a typed Go slice. Kernels in package ops
// read tensors through [Data] and [Tensor.Indices] and always return new
// tensors.
package tensor
