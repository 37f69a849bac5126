package convert

// ModuleKeys returns the module names given to SetModuleName and the
// module types given to SetModuleType, in the order they were first set,
// so a caller can check them against a graph's nn_module_stack.
func (q *XNNPACKQuantizer) ModuleKeys() (names, types []string) {
	for _, e := range q.moduleName {
		names = append(names, e.key)
	}
	for _, e := range q.moduleType {
		types = append(types, e.key)
	}
	return names, types
}
