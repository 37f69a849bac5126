package pt2

import "github.com/fxquant/fxquant/ops/tensor"

// LiftedAttrs returns the stored values of the placeholders that stand
// for state (parameters, buffers and tensor constants), by placeholder
// name, as [fxgraph.VerifyOptions.Lifted] takes them. Inputs without a
// stored tensor (a bare JSON program) are left out.
func (p *Program) LiftedAttrs() map[string]*tensor.Tensor {
	if p == nil || p.Graph == nil {
		return nil
	}
	m := map[string]*tensor.Tensor{}
	placeholderNamed := p.placeholderNames()
	for _, s := range p.Signature.Inputs {
		switch s.Kind {
		case Parameter, Buffer, TensorConstant:
			if v, ok := p.Graph.Attr(s.Target); ok {
				if t, ok := v.(*tensor.Tensor); ok {
					m[placeholderNamed(s.Name)] = t
				}
			}
		}
	}
	return m
}
