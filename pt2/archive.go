package pt2

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/internal/atomicfile"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// maxRecord bounds strides and storage offsets (in elements).
const maxRecord int64 = 1 << 31

// Read decodes a program from the bytes of a .pt2 file: a PT2 archive, a
// legacy torch <= 2.7 zip, or a bare JSON program, told apart by content.
func Read(data []byte, opts *Options) (*Program, error) {
	if bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06")) {
		p, err := readZip(data, opts)
		if err != nil {
			return nil, fmt.Errorf("pt2: read archive: %w", err)
		}
		return p, nil
	}
	return ReadJSON(data, opts)
}

// ReadFile reads the program stored at path (see [Read]); errors name the
// file.
func ReadFile(name string, opts *Options) (*Program, error) {
	if err := checkFileSize(name, opts); err != nil {
		return nil, err
	}
	var data []byte
	var mapped bool
	if opts != nil && opts.MapFile {
		data, mapped = mapFile(name)
	}
	if !mapped {
		var err error
		if data, err = os.ReadFile(name); err != nil {
			return nil, err
		}
	}
	// The bytes are ReadFile's own: weights may be views of them.
	shared := Options{}
	if opts != nil {
		shared = *opts
	}
	shared.ShareBytes = true
	p, err := Read(data, &shared)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

type zipRecords struct {
	files  map[string]*zip.File
	order  []string
	budget *budget
	data   []byte // the archive
	share  bool   // payloads may be views of data (Options.ShareBytes)
}

// readPayload is read for a weight payload record, except that a record
// stored uncompressed in a shared archive is returned as a view of the
// archive's bytes (shared is true) after the same checks: the caps, the
// sizes and the CRC. Anything else, an entry that fails a check
// included, takes read's path, which reports the failure.
func (z *zipRecords) readPayload(name string) (data []byte, ok, shared bool, err error) {
	f, ok := z.files[name]
	if !ok {
		return nil, false, false, nil
	}
	if z.share {
		if v, good := z.intactStored(f); good {
			if err := z.budget.charge(f.Name, f.UncompressedSize64, false); err != nil {
				return nil, true, false, err
			}
			return v, true, true, nil
		}
	}
	data, ok, err = z.read(name)
	return data, ok, false, err
}

// storedBytes returns the bytes of f in the archive, and where they end,
// when f is stored uncompressed, unencrypted, declares equal sizes within
// the file, and its bytes match its CRC.
func (z *zipRecords) storedBytes(f *zip.File) (v []byte, end int64, ok bool) {
	if z.data == nil || f.Method != zip.Store || f.Flags&0x1 != 0 || f.CompressedSize64 != f.UncompressedSize64 || f.UncompressedSize64 == 0 {
		return nil, 0, false
	}
	off, err := f.DataOffset()
	if err != nil || off < 0 || uint64(off) > uint64(len(z.data)) || f.UncompressedSize64 > uint64(len(z.data))-uint64(off) {
		return nil, 0, false
	}
	end = off + int64(f.UncompressedSize64)
	v = z.data[off:end:end]
	if crc32.ChecksumIEEE(v) != f.CRC32 {
		return nil, 0, false
	}
	return v, end, true
}

// intactStored returns the bytes of f in the archive when reading f
// through archive/zip is sure to give them without error: storedBytes
// finds them, and f's data descriptor, if it has one, is there with the
// same CRC (as zip's checksumReader checks it).
func (z *zipRecords) intactStored(f *zip.File) ([]byte, bool) {
	v, end, ok := z.storedBytes(f)
	if !ok || f.Flags&0x8 == 0 {
		return v, ok
	}
	// the descriptor: an optional signature, then the CRC
	const sig = 0x08074b50
	d := z.data[end:]
	if len(d) >= 4 && binary.LittleEndian.Uint32(d) == sig {
		d = d[4:]
	}
	if len(d) < 12 || binary.LittleEndian.Uint32(d) != f.CRC32 {
		return nil, false
	}
	return v, true
}

// read returns the bytes of record name, read within the budget; JSON
// records (by their .json name) also obey the JSON cap.
func (z *zipRecords) read(name string) ([]byte, bool, error) {
	f, ok := z.files[name]
	if !ok {
		return nil, false, nil
	}
	isJSON := strings.HasSuffix(name, ".json")
	if v, ok := z.intactStored(f); ok {
		// what readEntry would read, without the zip reader's
		// zeroed buffer and copies in chunks
		if err := z.budget.charge(f.Name, f.UncompressedSize64, isJSON); err != nil {
			return nil, true, err
		}
		return bytes.Clone(v), true, nil
	}
	data, err := z.budget.readEntry(f, f.Name, isJSON)
	if err != nil {
		return nil, true, err
	}
	return data, true, nil
}

func readZip(data []byte, opts *Options) (*Program, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrArchive, err)
	}
	if len(zr.File) == 0 {
		return nil, fmt.Errorf("%w: empty zip", ErrArchive)
	}
	raw := &zipRecords{files: map[string]*zip.File{}, budget: newBudget(opts, int64(len(data))), data: data}
	if opts != nil && opts.ShareBytes {
		raw.share = true
	}
	for _, f := range zr.File {
		if err := checkEntryName(f.Name); err != nil {
			return nil, err
		}
		if strings.HasSuffix(f.Name, "/") && f.UncompressedSize64 == 0 {
			continue // a folder entry, as zip tools write them
		}
		if _, dup := raw.files[f.Name]; dup {
			return nil, fmt.Errorf("%w: entry %q appears more than once", ErrArchive, f.Name)
		}
		raw.files[f.Name] = f
		raw.order = append(raw.order, f.Name)
	}
	if _, ok := raw.files["serialized_exported_program.json"]; ok {
		return readLegacy(raw, opts)
	}
	// strip the root folder: the first path component of the first entry
	if len(raw.order) == 0 {
		return nil, fmt.Errorf("%w: zip holds only folders", ErrArchive)
	}
	root, _, ok := strings.Cut(raw.order[0], "/")
	if !ok {
		return nil, fmt.Errorf("%w: entry %q is not under a root folder and the zip has no serialized_exported_program.json", ErrArchive, raw.order[0])
	}
	z := &zipRecords{files: map[string]*zip.File{}, budget: raw.budget, data: data, share: raw.share}
	for _, name := range raw.order {
		if rest, ok := strings.CutPrefix(name, root+"/"); ok && rest != "" {
			z.files[rest] = raw.files[name]
			z.order = append(z.order, rest)
		}
	}
	p := newProgram(ContainerPT2)
	p.ArchiveRoot = root
	format, ok, err := z.read("archive_format")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: no archive_format record under %q", ErrArchive, root+"/")
	}
	if string(format) != "pt2" {
		return nil, fmt.Errorf("%w: archive_format is %q, want \"pt2\"", ErrArchive, format)
	}
	version, ok, err := z.read("archive_version")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: no archive_version record", ErrArchive)
	}
	if string(version) != "0" {
		return nil, fmt.Errorf("%w: archive_version is %q, want \"0\"", ErrArchive, version)
	}
	if err := checkByteOrder(z); err != nil {
		return nil, err
	}
	model, err := pickModel(z, opts)
	if err != nil {
		return nil, err
	}
	p.ModelName = model
	js, _, err := z.read("models/" + model + ".json")
	if err != nil {
		return nil, err
	}
	if err := p.decode(js, opts); err != nil {
		return nil, fmt.Errorf("models/%s.json: %w", model, err)
	}
	for _, kind := range []string{"weights", "constants"} {
		if err := p.loadPayloads(z, kind, model); err != nil {
			return nil, err
		}
	}
	if si, ok := z.files["data/sample_inputs/"+model+".pt"]; ok && si.UncompressedSize64 > 0 {
		p.Unreadable = append(p.Unreadable, Unreadable{Record: "data/sample_inputs/" + model + ".pt", Reason: "pickled example inputs (kept verbatim for writing)"})
		if p.SampleInputs, _, err = z.read("data/sample_inputs/" + model + ".pt"); err != nil {
			return nil, err
		}
	}
	if err := p.readExtraFiles(z, "extra/"); err != nil {
		return nil, err
	}
	if err := p.checkWeights(); err != nil {
		return nil, err
	}
	if err := p.checkStoredData(); err != nil {
		return nil, err
	}
	if err := p.checkStoredScales(opts.registry()); err != nil {
		return nil, err
	}
	return p, nil
}

// readExtraFiles keeps every non-empty record below prefix (the archive's
// extra-files folder) in p.ExtraFiles, keyed by its name below prefix.
func (p *Program) readExtraFiles(z *zipRecords, prefix string) error {
	for _, name := range z.order {
		if rest, ok := strings.CutPrefix(name, prefix); ok && rest != "" {
			b, _, err := z.read(name)
			if err != nil {
				return err
			}
			if p.ExtraFiles == nil {
				p.ExtraFiles = map[string][]byte{}
			}
			p.ExtraFiles[rest] = b
		}
	}
	return nil
}

func pickModel(z *zipRecords, opts *Options) (string, error) {
	want := "model"
	if opts != nil && opts.Model != "" {
		want = opts.Model
	}
	if _, ok := z.files["models/"+want+".json"]; ok {
		return want, nil
	}
	var models []string
	for _, name := range z.order {
		if rest, ok := strings.CutPrefix(name, "models/"); ok && strings.HasSuffix(rest, ".json") && !strings.Contains(rest, "/") {
			models = append(models, strings.TrimSuffix(rest, ".json"))
		}
	}
	if len(models) == 1 && (opts == nil || opts.Model == "") {
		return models[0], nil
	}
	return "", fmt.Errorf("%w: no models/%s.json (models present: %q)", ErrArchive, want, models)
}

// loadPayloads reads data/<kind>/<model>_<kind>_config.json and the raw
// payloads it names into graph attributes; pickled payloads are listed in
// p.Unreadable.
func (p *Program) loadPayloads(z *zipRecords, kind, model string) error {
	dir := "data/" + kind + "/"
	cfgName := dir + model + "_" + kind + "_config.json"
	cfg, ok, err := z.read(cfgName)
	if err != nil {
		return err
	}
	if !ok {
		if _, legacy := z.files[dir+model+".pt"]; legacy {
			p.Unreadable = append(p.Unreadable, Unreadable{Record: dir + model + ".pt", Reason: "pickled " + kind + " (torch 2.8 archive)"})
		}
		return nil
	}
	// The config's JSON in fast mode (readpath.go) when it is valid and
	// every entry decodes; otherwise in checked mode, entry by entry as
	// the payloads are read, so that the first error is the one it has
	// always been.
	entries, fast := decodePayloadConfig(cfg)
	if !fast {
		var err error
		if entries, err = payloadConfigEntries(cfg, cfgName); err != nil {
			return err
		}
	}
	// one storage per record (and element type), shared by every FQN
	// that names it, as _build_file_map does
	type storageKey struct {
		record string
		dtype  tensor.DType
	}
	storages := map[storageKey]*tensor.Tensor{}
	for i := range entries {
		pe := &entries[i]
		ep := func() string { return fmt.Sprintf("%s: config[%q]", cfgName, pe.fqn) }
		if !fast {
			if err := pe.decode(ep()); err != nil {
				return err
			}
		}
		record := dir + pe.pathName
		if pe.usePickle {
			p.Unreadable = append(p.Unreadable, Unreadable{Record: record, FQN: pe.fqn, Reason: "pickled payload (tensor subclass or custom object)"})
			continue
		}
		m := pe.meta
		sk := storageKey{record, m.DType}
		var t *tensor.Tensor
		var err error
		if base, ok := storages[sk]; ok {
			if t, err = viewOf(base, m); err != nil {
				return fmt.Errorf("%s: record %q: %w", ep(), record, err)
			}
		} else {
			b, ok, shared, err := z.readPayload(record)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("%s: %w: payload record %q is missing", ep(), ErrArchive, record)
			}
			if len(b) == 0 {
				shape, err := tensor.ShapeInts(m.Sizes)
				if err != nil {
					return fmt.Errorf("%s: tensor_meta.sizes: %w", ep(), err)
				}
				if err := z.budget.zeroFill(ep(), pe.fqn, m.DType, shape); err != nil {
					return err
				}
			}
			// b is a view the caller allowed, or bytes read for this
			// record alone: either way the tensor may keep them as its
			// storage instead of a copy. Should that fail, the copying
			// path decides, with its own error.
			if t, err = tensorFromPayload(m, b, true); err != nil && !shared {
				t, err = tensorFromPayload(m, b, false)
			}
			if err != nil {
				return fmt.Errorf("%s: record %q: %w", ep(), record, err)
			}
			if len(b) > 0 {
				storages[sk] = t
			}
		}
		p.Graph.SetAttr(pe.fqn, t)
		p.Tensors[pe.fqn] = TensorInfo{IsParam: pe.isParam, RequiresGrad: m.RequiresGrad, Device: string(deviceValue(m.DeviceType, m.DeviceIndex))}
	}
	return nil
}

// payloadEntry is one entry of a payload config: the FQN, its JSON, and
// what decode reads from it.
type payloadEntry struct {
	fqn                string
	raw                []byte
	pathName           string
	isParam, usePickle bool
	meta               tensorMeta // unless usePickle
}

// decode reads the entry's fields; path is the entry's path (fastPath in
// fast mode).
func (pe *payloadEntry) decode(path string) error {
	if path == fastPath && pe.fastDecode() {
		return nil
	}
	o, err := decodeObject(pe.raw, path)
	if err != nil {
		return err
	}
	pn, err := o.req("path_name")
	if err != nil {
		return err
	}
	if pe.pathName, err = decodeString(pn, o.sub("path_name")); err != nil {
		return err
	}
	if v := o.get("is_param"); v != nil {
		if pe.isParam, err = decodeBool(v, o.sub("is_param")); err != nil {
			return err
		}
	}
	if v := o.get("use_pickle"); v != nil {
		if pe.usePickle, err = decodeBool(v, o.sub("use_pickle")); err != nil {
			return err
		}
	}
	if pe.usePickle {
		return nil
	}
	mr, err := o.req("tensor_meta")
	if err != nil {
		return err
	}
	pe.meta, err = decodeTensorMeta(mr, o.sub("tensor_meta"))
	return err
}

// decodePayloadConfig decodes a payload config in fast mode; ok is false
// when it is not valid JSON or some entry fails to decode.
func decodePayloadConfig(cfg []byte) (entries []payloadEntry, ok bool) {
	if !validJSON(cfg) {
		return nil, false
	}
	entries, err := payloadConfigEntries(cfg, fastPath)
	if err != nil {
		return nil, false
	}
	for i := range entries {
		if entries[i].decode(fastPath) != nil {
			return nil, false
		}
	}
	return entries, true
}

// payloadConfigEntries splits a payload config, whose path is path, into
// its entries, undecoded.
func payloadConfigEntries(cfg []byte, path string) ([]payloadEntry, error) {
	top, err := decodeObject(cfg, path)
	if err != nil {
		return nil, err
	}
	c, err := top.req("config")
	if err != nil {
		return nil, err
	}
	kvs, err := objectEntries(c, catPath(path, ": config"))
	if err != nil {
		return nil, err
	}
	entries := make([]payloadEntry, len(kvs))
	for i, e := range kvs {
		entries[i].fqn, entries[i].raw = e.Key, e.Val
	}
	return entries, nil
}

// tensorFromPayload views raw little-endian storage bytes (checkByteOrder
// refuses the rest) as the tensor m describes; an
// empty payload gives zeros. With shared, the tensor's storage is raw
// itself where tensor.FromBytesShared can do that, else a copy.
func tensorFromPayload(m tensorMeta, raw []byte, shared bool) (*tensor.Tensor, error) {
	shape, err := tensor.ShapeInts(m.Sizes)
	if err != nil {
		return nil, fmt.Errorf("tensor_meta.sizes: %w", err)
	}
	if len(raw) == 0 {
		// torch.zeros(sizes) then as_strided(sizes, strides, offset)
		z, err := tensor.Zeros(m.DType, shape...)
		if err != nil {
			return nil, err
		}
		return viewOf(z, m)
	}
	strides, err := strideInts(m.Strides)
	if err != nil {
		return nil, err
	}
	if len(m.Strides) == 0 && len(shape) > 0 {
		strides = nil
	}
	if err := checkOffset(m.StorageOffset); err != nil {
		return nil, err
	}
	if shared {
		if base, ok := tensor.FromBytesShared(m.DType, raw); ok {
			if strides == nil {
				strides = tensor.ContiguousStrides(shape)
			}
			v, err := base.NewView(shape, strides, int(m.StorageOffset))
			if err != nil {
				return nil, fmt.Errorf("tensor: from bytes: %w", err)
			}
			return v, nil
		}
	}
	return tensor.FromBytes(m.DType, shape, strides, int(m.StorageOffset), raw, false)
}

// viewOf views the storage of base as m describes (as_strided on the
// record's flat tensor).
func viewOf(base *tensor.Tensor, m tensorMeta) (*tensor.Tensor, error) {
	shape, err := tensor.ShapeInts(m.Sizes)
	if err != nil {
		return nil, fmt.Errorf("tensor_meta.sizes: %w", err)
	}
	var strides []int
	if len(m.Strides) == len(shape) {
		if strides, err = strideInts(m.Strides); err != nil {
			return nil, err
		}
	} else {
		strides = tensor.ContiguousStrides(shape)
	}
	if err := checkOffset(m.StorageOffset); err != nil {
		return nil, err
	}
	return base.NewView(shape, strides, int(m.StorageOffset))
}

// strideInts converts the strides of a TensorMeta, each within the bound
// of a record.
func strideInts(st []int64) ([]int, error) {
	out := make([]int, len(st))
	for i, s := range st {
		if s < -maxRecord || s > maxRecord {
			return nil, fmt.Errorf("tensor_meta.strides[%d] %d out of range", i, s)
		}
		out[i] = int(s)
	}
	return out, nil
}

// checkWeights checks each stored tensor against its placeholder's type.
func (p *Program) checkWeights() error {
	for _, s := range p.Signature.Inputs {
		if s.Kind != Parameter && s.Kind != Buffer && s.Kind != TensorConstant {
			continue
		}
		v, ok := p.Graph.Attr(s.Target)
		if !ok {
			continue
		}
		t := v.(*tensor.Tensor)
		want, ok := p.metas[s.Name]
		if !ok {
			continue
		}
		got := ops.TensorType{Shape: ops.ShapeInts(t.Shape()), Elem: ops.Scalar{DType: t.DType()}}
		if !got.Equal(want.typ()) {
			return fmt.Errorf("%s %q: payload is %s but placeholder %q is %s", s.Kind, s.Target, got, s.Name, want.typ())
		}
	}
	return nil
}

func readLegacy(z *zipRecords, opts *Options) (*Program, error) {
	p := newProgram(ContainerLegacy)
	p.ArchiveRoot = ""
	if v, ok, err := z.read("version"); err != nil {
		return nil, err
	} else if ok {
		var ver Version
		if _, err := fmt.Sscanf(strings.TrimSpace(string(v)), "%d.%d", &ver.Major, &ver.Minor); err != nil {
			return nil, fmt.Errorf("%w: version record %q, want \"<major>.<minor>\"", ErrArchive, v)
		}
		if err := checkVersion(ver, opts); err != nil {
			return nil, fmt.Errorf("version record: %w", err)
		}
	}
	js, _, err := z.read("serialized_exported_program.json")
	if err != nil {
		return nil, err
	}
	if err := p.decode(js, opts); err != nil {
		return nil, fmt.Errorf("serialized_exported_program.json: %w", err)
	}
	for _, name := range []string{"serialized_state_dict.pt", "serialized_constants.pt", "serialized_example_inputs.pt"} {
		if f, ok := z.files[name]; ok && f.UncompressedSize64 > 0 {
			p.Unreadable = append(p.Unreadable, Unreadable{Record: name, Reason: "torch.save pickle (legacy torch <= 2.7 archive)"})
		}
	}
	if err := p.readExtraFiles(z, "extra_files/"); err != nil {
		return nil, err
	}
	return p, nil
}

// --- writing ------------------------------------------------------------------

// WriteArchive writes p as a PT2 archive that torch.export.load accepts,
// laid out as torch.export.save (package_pt2 over PyTorchStreamWriter)
// lays it out; see writeContainer for the zip bytes and the writer notes in
// write_audit_test.go for the rule-by-rule audit. Records, in PyTorch's
// order: data/weights/weight_<i> (one per shared storage), the weights
// payload config, data/constants/tensor_<i>, the constants payload config,
// models/<name>.json, data/sample_inputs/<name>.pt (p.SampleInputs
// verbatim, or empty: "no example inputs"), extra/<file> (sorted by name),
// archive_format, archive_version, .data/version, byteorder and
// .data/serialization_id, all under one root folder (p.ArchiveRoot, or
// "archive"). reg resolves schemas (nil means ops.Default()). Every
// parameter, buffer and constant of the signature, and every get_attr
// target, must be a *tensor.Tensor attribute of the graph under its FQN.
func (p *Program) WriteArchive(w io.Writer, reg *ops.Registry) error {
	e, err := p.encode(reg, true)
	if err != nil {
		return err
	}
	model := p.ModelName
	if model == "" {
		model = "model"
	}
	root := p.ArchiveRoot
	if root == "" {
		root = "archive"
	}
	var recs []record
	weights, weightsCfg, err := payloads(e.weights, false, "weight_", "data/weights/")
	if err != nil {
		return fmt.Errorf("pt2: write archive: %w", err)
	}
	consts, constCfg, err := payloads(e.weights, true, "tensor_", "data/constants/")
	if err != nil {
		return fmt.Errorf("pt2: write archive: %w", err)
	}
	recs = append(recs, weights...)
	recs = append(recs, record{"data/weights/" + model + "_weights_config.json", weightsCfg})
	recs = append(recs, consts...)
	recs = append(recs, record{"data/constants/" + model + "_constants_config.json", constCfg})
	recs = append(recs, record{"models/" + model + ".json", e.w.b})
	recs = append(recs, record{"data/sample_inputs/" + model + ".pt", p.SampleInputs})
	names := make([]string, 0, len(p.ExtraFiles))
	for k := range p.ExtraFiles {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		// a name that could leave the folder is never written
		if err := checkEntryName("extra/" + k); err != nil {
			return fmt.Errorf("pt2: write archive: extra file: %w", err)
		}
		recs = append(recs, record{"extra/" + k, p.ExtraFiles[k]})
	}
	recs = append(recs,
		record{"archive_format", []byte("pt2")},
		record{"archive_version", []byte("0")},
		record{".data/version", []byte("6\n")},
		record{"byteorder", []byte("little")},
	)
	crcs := checksums(recs)
	id := record{".data/serialization_id", []byte(serializationID(recs, crcs))}
	recs = append(recs, id)
	crcs = append(crcs, crc32.ChecksumIEEE(id.data))
	if err := writeContainer(w, root, recs, crcs); err != nil {
		return fmt.Errorf("pt2: write archive: %w", err)
	}
	return nil
}

// payloads groups the weights of one kind (constants or not) by shared
// storage, as _save_raw_tensors does: one record per storage group,
// numbered in order of first appearance, holding the whole storage; each
// FQN's entry in the payload config names its group's record and carries
// its own sizes, strides and storage offset.
func payloads(ws []weightEntry, constants bool, prefix, dir string) ([]record, []byte, error) {
	var recs []record
	type key struct {
		ptr uintptr
		n   int
		d   tensor.DType
	}
	n := 0
	for _, we := range ws {
		if we.Const == constants {
			n++
		}
	}
	groups := make(map[key]int, n) // storage -> record index
	var sizes, strides []int64
	// about 300 bytes of config per entry
	cw := pyWriter{b: make([]byte, 0, 64+320*n), first: make([]bool, 0, 4)}
	cw.beginObject()
	cw.keyLit("config")
	cw.beginObject()
	for _, we := range ws {
		if we.Const != constants {
			continue
		}
		t := we.Tensor
		sv := reflect.ValueOf(t.Storage())
		if sv.Kind() != reflect.Slice {
			return nil, nil, fmt.Errorf("%q: tensor has no storage", we.FQN)
		}
		k := key{n: sv.Len(), d: t.DType()}
		if sv.Len() > 0 {
			k.ptr = sv.Pointer()
		}
		rec, ok := groups[k]
		if !ok || sv.Len() == 0 {
			rec = len(recs)
			groups[k] = rec
			// the storage's own bytes where the host's layout is the
			// format's (no copy), else the storage written out
			data, shared := tensor.StorageBytes(t)
			if !shared {
				whole, err := t.NewView([]int{sv.Len()}, []int{1}, 0)
				if err != nil {
					return nil, nil, fmt.Errorf("%q: %w", we.FQN, err)
				}
				data = whole.Bytes()
			}
			recs = append(recs, record{"", data}) // named below
		}
		// serialize_tensor_meta of the stored tensor: its dtype, sizes,
		// strides and storage offset, with the payload's requires_grad
		// and device (encoder.prepare refused a dtype without a
		// ScalarType)
		sizes, strides = sizes[:0], strides[:0]
		for i := range t.Dim() {
			sizes = append(sizes, int64(t.Size(i)))
		}
		for i := range t.Dim() {
			strides = append(strides, int64(t.Stride(i)))
		}
		devType, devIdx := "cpu", (*int64)(nil)
		if we.Info.Device != "" {
			devType, devIdx = splitDevice(ops.Device(we.Info.Device))
		}
		cw.key(we.FQN)
		cw.beginObject()
		cw.keyLit("path_name")
		cw.scratch = strconv.AppendInt(append(cw.scratch[:0], prefix...), int64(rec), 10)
		cw.strBytes(cw.scratch)
		cw.keyLit("is_param")
		cw.bool(we.Info.IsParam)
		cw.keyLit("use_pickle")
		cw.bool(false)
		cw.keyLit("tensor_meta")
		cw.staticMeta(t.DType(), sizes, strides, int64(t.Offset()), we.Info.RequiresGrad, devType, devIdx, int64(ops.LayoutStrided))
		cw.endObject()
	}
	cw.endObject()
	cw.endObject()
	for i, name := range numberedNames(dir+prefix, len(recs)) {
		recs[i].name = name
	}
	return recs, cw.b, nil
}

// numberedNames returns base+"0", base+"1", ... (n names), cut from one
// string.
func numberedNames(base string, n int) []string {
	ends := make([]int, n)
	var b []byte
	for i := range n {
		b = strconv.AppendInt(append(b, base...), int64(i), 10)
		ends[i] = len(b)
	}
	all := string(b)
	out := make([]string, n)
	start := 0
	for i, end := range ends {
		out[i] = all[start:end]
		start = end
	}
	return out
}

// WriteFile writes p as a PT2 archive at name; the root folder is the
// program's ArchiveRoot ("archive" by default, as torch.export.save uses
// for buffers). The archive streams into a temporary file that replaces
// name once complete (internal/atomicfile): a failure leaves an existing
// file at name as it was. Weights are written from their storage, without
// a copy of the archive in memory.
func (p *Program) WriteFile(name string, reg *ops.Registry) error {
	return atomicfile.Write(name, 0o644, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		if err := p.WriteArchive(bw, reg); err != nil {
			return err
		}
		return bw.Flush()
	})
}
