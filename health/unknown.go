package health

import "fmt"

// UnknownError is a check's way of saying it could not tell: its line is
// [Unknown], not [Error]. A check returns one made by [Unknownf], or any
// error wrapping one; errors.As finds it.
type UnknownError struct {
	// Err says why the check could not tell.
	Err error
}

func (e *UnknownError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *UnknownError) Unwrap() error { return e.Err }

// Unknownf returns an [*UnknownError] whose text is formatted as
// fmt.Errorf does (%w included): the check could not tell.
func Unknownf(format string, args ...any) error {
	return &UnknownError{Err: fmt.Errorf(format, args...)}
}
