package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// boardArgsEnv, when set, makes the test binary the board command itself,
// run with these arguments (one a line) instead of the tests: how a test
// starts a board in a process of its own that it can kill.
const boardArgsEnv = "SYMPHONIX_TEST_BOARD_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(boardArgsEnv); args != "" {
		if err := run(context.Background(), strings.Split(args, "\n"), noEnv, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "board:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
