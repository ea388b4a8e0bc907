package agentlink

// recent is a map that remembers its newest n keys.
type recent[V any] struct {
	n     int
	m     map[string]V
	order []string
}

func newRecent[V any](n int) *recent[V] {
	return &recent[V]{n: n, m: map[string]V{}}
}

func (r *recent[V]) get(k string) (V, bool) {
	v, ok := r.m[k]
	return v, ok
}

func (r *recent[V]) put(k string, v V) {
	if _, ok := r.m[k]; !ok {
		r.order = append(r.order, k)
		if len(r.order) > r.n {
			delete(r.m, r.order[0])
			r.order = r.order[1:]
		}
	}
	r.m[k] = v
}
