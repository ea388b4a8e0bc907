package waiting_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/symphonix/symphonix/waiting"
)

func ExampleOpenOrMemory() {
	dir, _ := os.MkdirTemp("", "agent")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	runs, desc := waiting.OpenOrMemory(ctx, dir, waiting.Config{})
	defer runs.(io.Closer).Close()
	fmt.Println(strings.Replace(desc, dir, "<agent folder>", 1))

	_ = runs.Put(ctx, "thread-1", []byte("the engine's checkpoint"))
	cp, ok, _ := runs.Get(ctx, "thread-1")
	fmt.Println(string(cp), ok)
	// Output:
	// waiting runs are kept in <agent folder>/.symphonix/waiting.db
	// the engine's checkpoint true
}
