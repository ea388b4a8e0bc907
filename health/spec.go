package health

import (
	"context"
	"errors"
)

// Spec is one custom check, as health.json declares it: exactly one of TCP,
// HTTP and Command.
type Spec struct {
	// Name is the check's name, as Register takes it.
	Name string
	// TCP is a "host:port" to open a TCP connection to (and close).
	TCP string
	// HTTP is a URL to GET, and the status it must answer.
	HTTP *HTTPSpec
	// Command is a program and its arguments, run without a shell; it must
	// exit 0.
	Command []string
	// Dir is the folder Command runs in (Load sets the agent's folder): a
	// relative program path such as "./check.sh" is found there. Empty: the
	// agent's working directory.
	Dir string
}

// HTTPSpec is an HTTP check: a GET of URL that must answer Status.
type HTTPSpec struct {
	// URL is an http or https URL.
	URL string
	// Status is the status the answer must have; 0 is 200.
	Status int
}

// Check returns the check s declares, for [Checker.Register]. It heeds its
// context: a connection, request or command still under way when the
// context ends is abandoned (a command is killed, with the processes it
// started).
func (s Spec) Check() func(context.Context) error {
	switch {
	case s.TCP != "" && s.HTTP == nil && len(s.Command) == 0:
		return tcpCheck(s.TCP)
	case s.TCP == "" && s.HTTP != nil && len(s.Command) == 0:
		return httpCheck(*s.HTTP)
	case s.TCP == "" && s.HTTP == nil && len(s.Command) > 0:
		return commandCheck(s.Command, s.Dir)
	}
	return func(context.Context) error {
		return errors.New("the check declares none or more than one of tcp, http and command")
	}
}
