package agentflow

// A scope is one frame of names (docs/agentflow.md, "Scopes"): the
// workflow's (input, context, use aliases), the pipeline's (its lets and
// the results of the stages completed so far), a stage's (its declared
// dependencies and its lets), an if block's, a parallel map's (its item)
// and verify's pass when (its checks).
type scope struct {
	parent *scope
	names  map[string]*Type
}

func newScope(parent *scope) *scope { return &scope{parent: parent} }

// declare binds name in s; false when s has it already.
func (s *scope) declare(name string, t *Type) bool {
	if s.names == nil {
		s.names = make(map[string]*Type, 4)
	}
	if _, ok := s.names[name]; ok {
		return false
	}
	s.names[name] = t
	return true
}

// lookup is the type name is bound to in s or the frames enclosing it.
func (s *scope) lookup(name string) (*Type, bool) {
	for ; s != nil; s = s.parent {
		if t, ok := s.names[name]; ok {
			return t, true
		}
	}
	return nil, false
}
