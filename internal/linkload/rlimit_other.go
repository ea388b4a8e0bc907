//go:build !unix

package linkload

// raiseFileLimit does nothing where there is no such limit to raise.
func raiseFileLimit() (uint64, error) { return 1 << 20, nil }
