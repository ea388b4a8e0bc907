// Command apidoc writes the API reference, docs/api.md, from a buf image of
// proto/ (with its comments) and the board's policy table (board.AccessOf),
// so that the reference says who may call each method exactly as the board
// enforces it. go generate ./... runs it after buf generate (in the root
// package) and ent's generation, since it compiles the board:
//
//	apidoc -o docs/api.md -- npx --yes @bufbuild/buf@1.75.0 build -o -
//
// The command after -- writes the image, with its source info, to its
// stdout; -image FILE reads one from a file instead.
package main

//go:generate go run . -o ../../docs/api.md -- npx --yes @bufbuild/buf@1.75.0 build ../.. -o -

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "apidoc:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("apidoc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the reference to this file (default: stdout)")
	image := fs.String("image", "", "read the buf image from this file rather than from the command after --")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cmd := fs.Args()
	var data []byte
	switch {
	case *image != "" && len(cmd) > 0:
		return errors.New("give -image or a command after --, not both")
	case *image != "":
		var err error
		if data, err = os.ReadFile(*image); err != nil {
			return err
		}
	case len(cmd) > 0:
		var buf bytes.Buffer
		c := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
		c.Stdout, c.Stderr = &buf, stderr
		if err := c.Run(); err != nil {
			return fmt.Errorf("%s: %w", cmd[0], err)
		}
		data = buf.Bytes()
	default:
		return errors.New("no image: give -image FILE, or after -- a command that writes one to stdout")
	}
	doc, err := render(data, Package, boardAccess)
	if err != nil {
		return err
	}
	if *out == "" {
		_, err = stdout.Write(doc)
		return err
	}
	return os.WriteFile(*out, doc, 0o644)
}
