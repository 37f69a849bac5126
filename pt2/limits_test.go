package pt2_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/pt2"
)

// reluArchive is a valid PT2 archive without weights plus the extra
// entries given.
func reluArchive(t testing.TB, extra ...entry) []byte {
	relu := marshal(t, reluProgram())
	es := []entry{
		{name: "a/archive_format", data: []byte("pt2")},
		{name: "a/archive_version", data: []byte("0")},
		{name: "a/byteorder", data: []byte("little")},
		{name: "a/models/model.json", data: relu},
		{name: "a/data/weights/model_weights_config.json", data: []byte(`{"config": {}}`)},
		{name: "a/data/constants/model_constants_config.json", data: []byte(`{"config": {}}`)},
	}
	return makeZip(t, append(es, extra...)...)
}

// rawZip builds a one-entry deflated zip whose headers declare size
// bytes while the compressed data holds actual.
func rawZip(t testing.TB, name string, actual []byte, declared uint64) []byte {
	var comp bytes.Buffer
	fw, err := flate.NewWriter(&comp, flate.BestCompression)
	require.NoError(t, err)
	_, err = fw.Write(actual)
	require.NoError(t, err)
	require.NoError(t, fw.Close())
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(actual),
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: declared})
	require.NoError(t, err)
	_, err = w.Write(comp.Bytes())
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestArchiveEntryNames(t *testing.T) {
	require.NotNil(t, mustRead(t, reluArchive(t)))
	for _, c := range []struct{ name, want string }{
		{"a/extra/../../x", `entry name "a/extra/../../x" has a ".." path segment`},
		{"a/extra//etc/passwd", `entry name "a/extra//etc/passwd" has an empty path segment`},
		{"/etc/passwd", `entry name "/etc/passwd" is an absolute path`},
		{`a\extra\x`, `entry name "a\\extra\\x" contains a backslash`},
		{"C:/x", `entry name "C:/x" starts with a drive letter`},
		{"a/./x", `entry name "a/./x" has a "." path segment`},
		{"a/models/model.json", `entry "a/models/model.json" appears more than once`},
	} {
		_, err := pt2.Read(reluArchive(t, entry{name: c.name, data: []byte("{}")}), nil)
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
	// a folder entry (as zip tools write them) is not a file and is skipped
	require.NotNil(t, mustRead(t, reluArchive(t, entry{name: "a/extra/"})))
}

func mustRead(t *testing.T, data []byte) *pt2.Program {
	t.Helper()
	p, err := pt2.Read(data, nil)
	require.NoError(t, err)
	return p
}

func TestArchiveLimits(t *testing.T) {
	// a real bomb: 64 MiB of zeros deflate to ~64 KiB; the entry declares
	// its true size, which is refused before anything is allocated
	zeros := make([]byte, 64<<20)
	bomb := rawZip(t, "a/archive_format", zeros, uint64(len(zeros)))
	_, err := pt2.Read(bomb, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `entry "a/archive_format" declares 67108864 bytes, which would bring the archive's uncompressed bytes to 67108864, more than`)
	assert.ErrorIs(t, err, pt2.ErrLimit)

	// the same data declaring 100 bytes: reading stops at the declared size
	_, err = pt2.Read(rawZip(t, "a/archive_format", zeros, 100), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `entry "a/archive_format" holds more than the 100 bytes it declares`)

	// a 2 GiB model.json is refused by its header, before it is read
	_, err = pt2.Read(rawZip(t, "a/archive_format", []byte("pt2"), 2<<30), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `entry "a/archive_format" declares 2147483648 bytes`)

	// the caps are options
	ok := reluArchive(t)
	_, err = pt2.Read(ok, &pt2.Options{Limits: pt2.Limits{MaxEntryBytes: 10}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `entry "a/models/model.json" declares`)
	assert.Contains(t, err.Error(), "more than the 10 allowed per entry (MaxEntryBytes)")
	_, err = pt2.Read(ok, &pt2.Options{Limits: pt2.Limits{MaxTotalBytes: 20}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(MaxTotalBytes)")
	_, err = pt2.Read(ok, &pt2.Options{Limits: pt2.Limits{MaxJSONBytes: 50}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `entry "a/models/model.json" declares`)
	assert.Contains(t, err.Error(), "bytes of JSON, more than the 50 allowed (MaxJSONBytes)")
}

func TestArchiveStoredData(t *testing.T) {
	// buffers a and b with no entry in the weights config
	w := make([]byte, 8)
	binary.LittleEndian.PutUint32(w, 0x3f800000)
	z := pt2Archive(t, "a", bufferProgram(tm(7, 2), tm(7, 2)), `{"config": {}}`, nil, "little")
	_, err := pt2.Read(z, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `buffer "a" (placeholder "b_a") has no stored data: no entry for it in data/weights/model_weights_config.json`)
}

func TestTrailingJSON(t *testing.T) {
	relu := marshal(t, reluProgram())
	_, err := pt2.ReadJSON(append(relu, []byte("\n{}")...), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `trailing data after the object: 2 bytes starting "{}"`)
	_, err = pt2.ReadJSON(append(relu, []byte(" \n")...), nil)
	require.NoError(t, err)
}

// Zero-filled weights are charged to MaxTotalBytes together: each of a
// and b is within MaxTensorBytes, both together are not.
func TestZeroFillTotal(t *testing.T) {
	cfg := string(marshal(t, obj{"config": obj{
		"a": obj{"path_name": "weight_0", "is_param": false, "use_pickle": false, "tensor_meta": tm(7, 4096)},
		"b": obj{"path_name": "weight_1", "is_param": false, "use_pickle": false, "tensor_meta": tm(7, 4096)}}}))
	z := pt2Archive(t, "a", bufferProgram(tm(7, 4096), tm(7, 4096)), cfg, map[string][]byte{"weight_0": nil, "weight_1": nil}, "little")
	// 16 KiB each; the archive's own entries take about 2 KiB more
	_, err := pt2.Read(z, &pt2.Options{Limits: pt2.Limits{MaxTensorBytes: 16384, MaxTotalBytes: 40000}})
	require.NoError(t, err)
	_, err = pt2.Read(z, &pt2.Options{Limits: pt2.Limits{MaxTensorBytes: 16384, MaxTotalBytes: 30000}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `config["b"]: over a reading limit: zero-filling "b" (float32[4096], 16384 bytes) would bring the total to`)
	assert.Contains(t, err.Error(), "more than 30000 (MaxTotalBytes)")
	_, err = pt2.Read(z, &pt2.Options{Limits: pt2.Limits{MaxTensorBytes: 16383}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `config["a"]: over a reading limit: zero-length payload for "a" would be filled with 16384 bytes of zeros (float32[4096]), more than 16383 (MaxTensorBytes)`)
}

// An extra file whose name could leave the archive's folder is never
// written, whoever put it in ExtraFiles.
func TestWriteRefusesBadExtraName(t *testing.T) {
	p := mustRead(t, reluArchive(t, entry{name: "a/extra/notes.txt", data: []byte("ok")}))
	require.Equal(t, []byte("ok"), p.ExtraFiles["notes.txt"])
	var buf bytes.Buffer
	require.NoError(t, p.WriteArchive(&buf, nil))
	for _, bad := range []string{"../../x", "a//b", `a\b`, "/abs"} {
		p.ExtraFiles = map[string][]byte{bad: []byte("x")}
		err := p.WriteArchive(&buf, nil)
		if assert.Error(t, err, bad) {
			assert.Contains(t, err.Error(), "pt2: write archive: extra file: malformed archive: entry name")
		}
	}
}

func TestReadJSONSize(t *testing.T) {
	relu := marshal(t, reluProgram())
	_, err := pt2.ReadJSON(relu, &pt2.Options{Limits: pt2.Limits{MaxJSONBytes: int64(len(relu))}})
	require.NoError(t, err)
	_, err = pt2.ReadJSON(relu, &pt2.Options{Limits: pt2.Limits{MaxJSONBytes: int64(len(relu) - 1)}})
	require.ErrorIs(t, err, pt2.ErrLimit)
	assert.Contains(t, err.Error(), "(MaxJSONBytes)")
}

// A bad element in a stored scale is reported against the stored tensor
// and the element, then the node that takes it as its scale.
func TestStoredScaleChecked(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtureDir, "mlp.static.pt2"))
	require.NoError(t, err)
	_, err = pt2.Read(data, nil)
	require.NoError(t, err)
	// the weights config names _scale_0's record
	var cfg struct {
		Config map[string]struct {
			PathName string `json:"path_name"`
		} `json:"config"`
	}
	es := unzip(t, data)
	for _, e := range es {
		if strings.HasSuffix(e.name, "model_weights_config.json") {
			require.NoError(t, json.Unmarshal(e.data, &cfg))
		}
	}
	rec := "archive/data/weights/" + cfg.Config["_scale_0"].PathName
	for _, c := range []struct {
		v    float32
		show string
	}{{float32(math.Inf(-1)), "-Inf"}, {float32(math.NaN()), "NaN"}, {0, "0"}, {-2, "-2"}} {
		mod := slices.Clone(es)
		for i, e := range mod {
			if e.name == rec {
				b := bytes.Clone(e.data)
				binary.LittleEndian.PutUint32(b[4:], math.Float32bits(c.v))
				mod[i].data = b
			}
		}
		_, err := pt2.Read(makeZip(t, mod...), nil)
		if assert.Error(t, err, c.show) {
			assert.Contains(t, err.Error(), `buffer "_scale_0" (placeholder "b__scale_0"): element [1] is `+c.show+`, but it is the scales of node "dequantize_per_channel" (quantized_decomposed.dequantize_per_channel.default), which must be finite and > 0`)
		}
	}
}
