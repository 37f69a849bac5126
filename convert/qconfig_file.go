package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/fxquant/fxquant/ops"
)

// QuantizerConfigFormat is the "format" value of a quantizer config file
// ([ParseQuantizerConfig]).
//
// A quantizer config file says in JSON what a torchao user's Python
// quantizer setup says, so that the setup carries over unchanged:
//
//	{
//	  "format": "fxquant-quantizer-config/1",
//	  "quantizers": [
//	    {"quantizer": "embedding"},
//	    {
//	      "quantizer": "xnnpack",
//	      "set_global": {"function": "get_symmetric_quantization_config", "is_per_channel": true},
//	      "set_module_name": {"head": {"function": "get_symmetric_quantization_config"}},
//	      "set_module_type": {"torch.nn.modules.activation.MultiheadAttention": null},
//	      "set_operator_type": {"aten.linear.default": {"function": "get_symmetric_quantization_config"}}
//	    }
//	  ]
//	}
//
// "format" is optional; when present it must be QuantizerConfigFormat.
// "quantizers" lists the quantizers in order: one entry gives that
// quantizer, several a [ComposableQuantizer] over them in the listed order
// (torchao's ComposableQuantizer([...])). Each entry names its kind in
// "quantizer"; the kinds are
//
//   - "xnnpack": [XNNPACKQuantizer]. "set_global" is a config or null;
//     "set_module_name", "set_module_type" and "set_operator_type" are
//     objects from a module's fully qualified name, a module class's
//     qualified name as nn_module_stack records it
//     (torch.nn.Linear is "torch.nn.modules.linear.Linear": the class's
//     __module__ + "." + __qualname__) or an operator ("aten.linear" or
//     "aten.linear.default") to a config or null, applied in the order
//     written, as the Python calls in that order (torchao's
//     set_module_name refuses None; here null leaves the module
//     unquantized, as set_module_type's None does); "annotate_by_target"
//     (default false) is [XNNPACKQuantizer.AnnotateByTarget].
//   - "embedding": [EmbeddingQuantizer]; no other field.
//   - "int4_groupwise": [Int4GroupwiseQuantizer] (fxquant's, as run's
//     --quantizer int4-groupwise:G): "group_size" (required, positive) and
//     "own_activation_chains" (default false).
//   - "x86_inductor": [X86InductorQuantizer] (x86_inductor_quantizer.py).
//     "set_global" is a config or null; "set_module_name_qconfig" (module
//     fully qualified names), "set_module_type_qconfig" (module classes,
//     e.g. "torch.nn.modules.conv.Conv2d") and "set_function_type_qconfig"
//     (functions, e.g. "torch.nn.functional.conv2d", "torch.cat") are
//     objects from names to a config or null. The fields, and the entries
//     of each object, apply in the order written, as the Python calls in
//     that order: torchao skips a config that mixes static and dynamic
//     (or QAT and non-QAT) with those set before it. What torchao only
//     warns about (a skipped config, a class or function it cannot
//     configure) goes to the quantizer's Warnings, not an error.
//
// A config is an object naming the Python function that makes it in
// "function", with that function's keyword arguments beside it (their
// Python defaults apply). The functions are
//
//   - "get_symmetric_quantization_config": is_per_channel, is_qat (only
//     false), is_dynamic, act_qmin, act_qmax, weight_qmin, weight_qmax
//     ([SymmetricQuantizationConfig]).
//   - "get_default_x86_inductor_quantization_config": is_qat (only
//     false), is_dynamic, reduce_range ([X86InductorQuantizationConfig]).
//   - "get_x86_inductor_linear_dynamic_fp16_config": no argument
//     ([X86InductorLinearDynamicFP16Config]).
//
// Every field is checked: an unknown field, a duplicate key, a value of the
// wrong kind or out of range is an error naming its place in the file
// ("quantizers[1].set_module_type[\"torch.nn.modules.linear.Linear\"].act_qmin: ...").
//
// Other quantizers join through [RegisterQuantizerKind] (a kind's entry
// fields read with [ConfigObject.Config] and [ConfigObject.Configs]) and
// [RegisterConfigFunction], called from an init function in the
// quantizer's own file, as x86_config_file.go does for "x86_inductor".
const QuantizerConfigFormat = "fxquant-quantizer-config/1"

// QuantizerKind builds one quantizer from an entry of a config file's
// "quantizers" list. It reads the entry's fields through e's methods and
// ends with e.Done(), which refuses fields it did not read.
type QuantizerKind func(e *ConfigObject) (Quantizer, error)

// ConfigFunction builds a QuantizationConfig from a config object (the
// keyword arguments beside "function"); it ends with args.Done().
type ConfigFunction func(args *ConfigObject) (*QuantizationConfig, error)

var (
	configRegistryMu sync.RWMutex
	quantizerKinds   = map[string]QuantizerKind{}
	configFunctions  = map[string]ConfigFunction{}
)

// RegisterQuantizerKind makes kind name available to quantizer config
// files. It panics when name is empty or already registered.
func RegisterQuantizerKind(name string, k QuantizerKind) {
	configRegistryMu.Lock()
	defer configRegistryMu.Unlock()
	if name == "" || quantizerKinds[name] != nil || k == nil {
		panic(fmt.Sprintf("convert: RegisterQuantizerKind %q: empty, nil or registered twice", name))
	}
	quantizerKinds[name] = k
}

// RegisterConfigFunction makes config function name available to
// quantizer config files. It panics when name is empty or already
// registered.
func RegisterConfigFunction(name string, f ConfigFunction) {
	configRegistryMu.Lock()
	defer configRegistryMu.Unlock()
	if name == "" || configFunctions[name] != nil || f == nil {
		panic(fmt.Sprintf("convert: RegisterConfigFunction %q: empty, nil or registered twice", name))
	}
	configFunctions[name] = f
}

func init() {
	RegisterQuantizerKind("xnnpack", xnnpackFromConfig)
	RegisterQuantizerKind("embedding", func(e *ConfigObject) (Quantizer, error) { return EmbeddingQuantizer{}, e.Done() })
	RegisterQuantizerKind("int4_groupwise", int4FromConfig)
	RegisterConfigFunction("get_symmetric_quantization_config", symmetricFromConfig)
}

func registered[T any](m map[string]T) []string {
	configRegistryMu.RLock()
	defer configRegistryMu.RUnlock()
	return slices.Sorted(maps.Keys(m))
}

func lookup[T any](m map[string]T, name string) (T, bool) {
	configRegistryMu.RLock()
	defer configRegistryMu.RUnlock()
	v, ok := m[name]
	return v, ok
}

// ReadQuantizerConfigFile reads and parses a quantizer config file; errors
// name the file.
func ReadQuantizerConfigFile(path string) (Quantizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	q, err := ParseQuantizerConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return q, nil
}

// ParseQuantizerConfig parses a quantizer config file (the format is
// described at [QuantizerConfigFormat]) and returns its quantizer: the
// one quantizer listed, or a ComposableQuantizer of them in order.
func ParseQuantizerConfig(data []byte) (Quantizer, error) {
	top, err := parseObject(data, "")
	if err != nil {
		return nil, err
	}
	if f, ok, err := top.String("format"); err != nil {
		return nil, err
	} else if ok && f != QuantizerConfigFormat {
		return nil, fmt.Errorf("format: %q, want %q", f, QuantizerConfigFormat)
	}
	raw, ok := top.raw("quantizers")
	if !ok {
		if err := top.Done(); err != nil {
			return nil, err
		}
		return nil, errors.New("quantizers: missing; want a list of quantizers")
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || isNull(raw) {
		return nil, fmt.Errorf("quantizers: want a list of quantizer objects, got %s", kindOf(raw))
	}
	if len(list) == 0 {
		return nil, errors.New("quantizers: empty list; want at least one quantizer")
	}
	var qs ComposableQuantizer
	for i, r := range list {
		path := fmt.Sprintf("quantizers[%d]", i)
		e, err := parseObject(r, path)
		if err != nil {
			return nil, err
		}
		kind, ok, err := e.String("quantizer")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s.quantizer: missing; want one of %s", path, strings.Join(registered(quantizerKinds), ", "))
		}
		build, ok := lookup(quantizerKinds, kind)
		if !ok {
			return nil, fmt.Errorf("%s.quantizer: unknown quantizer %q; want one of %s", path, kind, strings.Join(registered(quantizerKinds), ", "))
		}
		q, err := build(e)
		if err != nil {
			return nil, err
		}
		qs = append(qs, q)
	}
	if err := top.Done(); err != nil {
		return nil, err
	}
	if len(qs) == 1 {
		return qs[0], nil
	}
	return qs, nil
}

// ConfigObject is one JSON object of a quantizer config file, its fields
// in the order written, with its place in the file for errors.
type ConfigObject struct {
	path   string
	keys   []string
	values map[string]json.RawMessage
	used   map[string]bool
}

// Path is the object's place in the file ("quantizers[0].set_global"),
// "" for the top level.
func (o *ConfigObject) Path() string { return o.path }

// field is the path of field key.
func (o *ConfigObject) field(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// errorf returns an error naming field key.
func (o *ConfigObject) errorf(key, format string, args ...any) error {
	return fmt.Errorf("%s: %s", o.field(key), fmt.Sprintf(format, args...))
}

func (o *ConfigObject) raw(key string) (json.RawMessage, bool) {
	o.used[key] = true
	v, ok := o.values[key]
	return v, ok
}

// Has reports whether field key is present (null included) and marks it
// read.
func (o *ConfigObject) Has(key string) bool {
	_, ok := o.raw(key)
	return ok
}

// Bool returns field key, or def when it is absent.
func (o *ConfigObject) Bool(key string, def bool) (bool, error) {
	v, ok := o.raw(key)
	if !ok {
		return def, nil
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil || isNull(v) {
		return false, o.errorf(key, "want true or false, got %s", kindOf(v))
	}
	return b, nil
}

// Int returns field key, or def when it is absent; it must be an integer.
func (o *ConfigObject) Int(key string, def int64) (int64, error) {
	v, ok := o.raw(key)
	if !ok {
		return def, nil
	}
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil || isNull(v) {
		return 0, o.errorf(key, "want an integer, got %s", kindOf(v))
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		return 0, o.errorf(key, "want an integer, got %s", n)
	}
	return i, nil
}

// String returns field key and whether it is present.
func (o *ConfigObject) String(key string) (string, bool, error) {
	v, ok := o.raw(key)
	if !ok {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil || isNull(v) {
		return "", true, o.errorf(key, "want a string, got %s", kindOf(v))
	}
	return s, true, nil
}

// Config returns field key as a config (null is a nil config, as None in
// Python) and whether it is present.
func (o *ConfigObject) Config(key string) (*QuantizationConfig, bool, error) {
	v, ok := o.raw(key)
	if !ok {
		return nil, false, nil
	}
	c, err := parseConfig(v, o.field(key))
	return c, true, err
}

// KeyedConfig is one entry of an object from names to configs.
type KeyedConfig struct {
	// Key is the entry's name: a module name, a module type, an operator.
	Key string
	// Config is its config; nil for null.
	Config *QuantizationConfig
}

// Configs returns field key, an object from names to configs (null
// allowed), in the order written; an absent field gives none.
func (o *ConfigObject) Configs(key string) ([]KeyedConfig, error) {
	v, ok := o.raw(key)
	if !ok {
		return nil, nil
	}
	m, err := parseObject(v, o.field(key))
	if err != nil {
		return nil, err
	}
	var out []KeyedConfig
	for _, k := range m.keys {
		m.used[k] = true
		if k == "" {
			return nil, fmt.Errorf("%s: empty name", o.field(key))
		}
		c, err := parseConfig(m.values[k], fmt.Sprintf("%s[%q]", o.field(key), k))
		if err != nil {
			return nil, err
		}
		out = append(out, KeyedConfig{Key: k, Config: c})
	}
	return out, nil
}

// Done refuses a field no method read, listing those read.
func (o *ConfigObject) Done() error {
	for _, k := range o.keys {
		if !o.used[k] {
			var known []string
			for u := range o.used {
				known = append(known, u)
			}
			slices.Sort(known)
			return o.errorf(k, "unknown field; want one of %s", strings.Join(known, ", "))
		}
	}
	return nil
}

// parseConfig reads a config object (or null) at path.
func parseConfig(v json.RawMessage, path string) (*QuantizationConfig, error) {
	if isNull(v) {
		return nil, nil
	}
	args, err := parseObject(v, path)
	if err != nil {
		return nil, err
	}
	fn, ok, err := args.String("function")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s.function: missing; want the name of the function that makes the config (%s)", path, strings.Join(registered(configFunctions), ", "))
	}
	f, ok := lookup(configFunctions, fn)
	if !ok {
		return nil, fmt.Errorf("%s.function: unknown config function %q; want one of %s", path, fn, strings.Join(registered(configFunctions), ", "))
	}
	return f(args)
}

// parseObject reads a JSON object keeping its keys' order; a duplicate key
// or anything but an object is an error naming path.
func parseObject(data []byte, path string) (*ConfigObject, error) {
	where := path
	if where == "" {
		where = "config"
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, jsonError(data, err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("%s: want an object, got %s", where, kindOf(data))
	}
	o := &ConfigObject{path: path, values: map[string]json.RawMessage{}, used: map[string]bool{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, jsonError(data, err))
		}
		key := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: %w", o.field(key), jsonError(data, err))
		}
		if _, dup := o.values[key]; dup {
			return nil, fmt.Errorf("%s: duplicate field", o.field(key))
		}
		o.keys = append(o.keys, key)
		o.values[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%s: %w", where, jsonError(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: data after the object", where)
	}
	return o, nil
}

// jsonError adds the line and column to a syntax error.
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := int(min(se.Offset, int64(len(data))))
		line := 1 + bytes.Count(data[:off], []byte("\n"))
		col := off - bytes.LastIndexByte(data[:off], '\n')
		return fmt.Errorf("line %d, column %d: %w", line, col, err)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("unexpected end of JSON")
	}
	return err
}

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

// kindOf names a JSON value's kind for errors.
func kindOf(v json.RawMessage) string {
	t := bytes.TrimSpace(v)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "the string " + string(t)
	case 't', 'f':
		return string(t)
	case 'n':
		return "null"
	}
	return "the number " + string(t)
}

// xnnpackFromConfig builds an XNNPACKQuantizer from an "xnnpack" entry.
func xnnpackFromConfig(e *ConfigObject) (Quantizer, error) {
	q := &XNNPACKQuantizer{}
	c, _, err := e.Config("set_global")
	if err != nil {
		return nil, err
	}
	q.SetGlobal(c)
	names, err := e.Configs("set_module_name")
	if err != nil {
		return nil, err
	}
	for _, k := range names {
		q.SetModuleName(k.Key, k.Config)
	}
	types, err := e.Configs("set_module_type")
	if err != nil {
		return nil, err
	}
	for _, k := range types {
		q.SetModuleType(k.Key, k.Config)
	}
	opsCfg, err := e.Configs("set_operator_type")
	if err != nil {
		return nil, err
	}
	for _, k := range opsCfg {
		t, err := operatorTarget(k.Key)
		if err != nil {
			return nil, fmt.Errorf("%s[%q]: %w", e.field("set_operator_type"), k.Key, err)
		}
		q.SetOperatorType(t, k.Config)
	}
	if q.AnnotateByTarget, err = e.Bool("annotate_by_target", false); err != nil {
		return nil, err
	}
	return q, e.Done()
}

// operatorTarget parses an operator packet or overload the registry knows.
func operatorTarget(s string) (ops.Target, error) {
	t, err := ops.ParseTarget(s)
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case ops.Overload:
		if _, ok := ops.Default().Op(t); !ok {
			return nil, fmt.Errorf("unknown operator %s", t)
		}
	case ops.Packet:
		if len(ops.Default().Overloads(t)) == 0 {
			return nil, fmt.Errorf("unknown operator %s", t)
		}
	default:
		return nil, fmt.Errorf("want an operator such as aten.linear or aten.linear.default, got %q", s)
	}
	return t, nil
}

// symmetricFromConfig is get_symmetric_quantization_config's keyword
// arguments; the int8 ranges must hold 0 (torch's observers assert it).
func symmetricFromConfig(a *ConfigObject) (*QuantizationConfig, error) {
	o := DefaultSymmetricConfigOptions()
	var err error
	if o.PerChannel, err = a.Bool("is_per_channel", false); err != nil {
		return nil, err
	}
	if err := refuseQAT(a); err != nil {
		return nil, err
	}
	if o.Dynamic, err = a.Bool("is_dynamic", false); err != nil {
		return nil, err
	}
	for _, r := range []struct {
		lo, hi   string
		min, max *int64
	}{{"act_qmin", "act_qmax", &o.ActQMin, &o.ActQMax}, {"weight_qmin", "weight_qmax", &o.WeightQMin, &o.WeightQMax}} {
		if *r.min, err = a.Int(r.lo, *r.min); err != nil {
			return nil, err
		}
		if *r.max, err = a.Int(r.hi, *r.max); err != nil {
			return nil, err
		}
		if *r.min < -128 || *r.min > 0 {
			return nil, a.errorf(r.lo, "%d: want a value in -128..0 (int8, and the range must hold 0)", *r.min)
		}
		if *r.max > 127 || *r.max < 0 {
			return nil, a.errorf(r.hi, "%d: want a value in 0..127 (int8, and the range must hold 0)", *r.max)
		}
	}
	return SymmetricQuantizationConfig(o), a.Done()
}

// refuseQAT reads a config function's is_qat, which a config file may only
// set to false: the file configures post-training quantization.
func refuseQAT(a *ConfigObject) error {
	qat, err := a.Bool("is_qat", false)
	if err != nil {
		return err
	}
	if qat {
		return a.errorf("is_qat", "QAT configs are not supported here (this flow prepares for post-training quantization)")
	}
	return nil
}

// int4FromConfig builds an Int4GroupwiseQuantizer from an "int4_groupwise"
// entry.
func int4FromConfig(e *ConfigObject) (Quantizer, error) {
	if !e.Has("group_size") {
		return nil, e.errorf("group_size", "missing; want a positive integer")
	}
	gs, err := e.Int("group_size", 0)
	if err != nil {
		return nil, err
	}
	if gs <= 0 || gs > 1<<30 {
		return nil, e.errorf("group_size", "%d: want a positive integer", gs)
	}
	own, err := e.Bool("own_activation_chains", false)
	if err != nil {
		return nil, err
	}
	return Int4GroupwiseQuantizer{GroupSize: int(gs), OwnActivationChains: own}, e.Done()
}
