//go:build !unix

package linkload

// dumpOnSignal does nothing where there is no SIGUSR1.
func dumpOnSignal(string) {}
