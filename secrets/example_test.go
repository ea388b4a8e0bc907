package secrets_test

import (
	"fmt"

	"github.com/symphonix/symphonix/secrets"
)

// What a journal keeps: what a person said, less the named secrets. The
// host name is not named, so it stays; the key is.
func ExampleSet_Without() {
	env := map[string]string{"OPENAI_API_KEY": "sk-test-0123456789abcdef", "HOSTNAME": "build-runner-07"}
	named := secrets.NewSet(secrets.Named([]string{"OPENAI_API_KEY"}, func(name string) string { return env[name] }))
	fmt.Println(named.Without("build-runner-07 says my key is sk-test-0123456789abcdef"))
	// Output:
	// build-runner-07 says my key is REDACTED
}

// What goes to another machine: every value of the environment, and
// whatever is shaped like a credential.
func ExampleSafeDetail() {
	env := []string{"HOSTNAME=build-runner-07", "LANG=C.UTF-8"}
	fmt.Println(secrets.SafeDetail(`Post "https://ada:pw@api.example.com/v1/chat": dial tcp build-runner-07:443: password=hunter2`, env))
	// Output:
	// Post "https://api.example.com/…": dial tcp REDACTED:443: password=REDACTED
}
