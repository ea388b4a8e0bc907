package agents

// Lookups is how many registry lookups r has made, for the tests that a
// name that is not a name, or not allowed, is never looked up.
func Lookups(r *Registry) int64 { return r.lookups.Load() }
