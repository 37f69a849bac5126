package pt2

import (
	"bytes"
	"os"
	"testing"
	"unsafe"

	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// within reports whether b's memory lies inside data's.
func within(b, data []byte) bool {
	p, lo := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	return p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(data))
}

// TestShareBytesViewsPayloads: with ShareBytes the weights of an archive
// PyTorch wrote are views of the archive's bytes, equal to the copies a
// plain Read makes, and the program writes back the same bytes; ReadFile
// with MapFile reads the same program.
func TestShareBytesViewsPayloads(t *testing.T) {
	const file = "../tests/testdata/pt2e/cnn.static.pt2"
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	plain, err := Read(data, nil)
	require.NoError(t, err)
	shared, err := Read(data, &Options{ShareBytes: true})
	require.NoError(t, err)
	mapped, err := ReadFile(file, &Options{MapFile: true})
	require.NoError(t, err)

	pa, sa := plain.LiftedAttrs(), shared.LiftedAttrs()
	require.NotEmpty(t, pa)
	require.Equal(t, len(pa), len(sa))
	views := 0
	for name, want := range pa {
		got := sa[name]
		require.NotNil(t, got, name)
		assert.True(t, tensor.Equal(want, got), name)
		pb, ok := tensor.StorageBytes(want)
		require.True(t, ok)
		assert.False(t, within(pb, data), "%s: a plain Read copies", name)
		if sb, ok := tensor.StorageBytes(got); ok && within(sb, data) {
			views++
		}
	}
	assert.Equal(t, len(pa), views, "every weight of the shared read is a view of the archive")

	var a, b, c bytes.Buffer
	require.NoError(t, plain.WriteArchive(&a, nil))
	require.NoError(t, shared.WriteArchive(&b, nil))
	require.NoError(t, mapped.WriteArchive(&c, nil))
	assert.True(t, bytes.Equal(a.Bytes(), b.Bytes()))
	assert.True(t, bytes.Equal(a.Bytes(), c.Bytes()))
}

// TestShareBytesBadPayloadCRC: a stored payload whose bytes do not match
// its CRC is not viewed: the shared read fails as the plain one does.
func TestShareBytesBadPayloadCRC(t *testing.T) {
	data, err := os.ReadFile("../tests/testdata/pt2e/mlp.float.pt2")
	require.NoError(t, err)
	i := bytes.Index(data, []byte("data/weights/weight_0"))
	require.Positive(t, i)
	// the first local header of weight_0: its data starts at the next
	// 64-byte boundary after the name and the padding block
	bad := bytes.Clone(data)
	start := i + len("data/weights/weight_0") + 4
	start += (64 - start%64) % 64
	bad[start] ^= 0xff
	_, plainErr := Read(bytes.Clone(bad), nil)
	require.Error(t, plainErr)
	_, sharedErr := Read(bad, &Options{ShareBytes: true})
	require.Error(t, sharedErr)
	assert.Equal(t, plainErr.Error(), sharedErr.Error())
	assert.Contains(t, sharedErr.Error(), "checksum")
}
