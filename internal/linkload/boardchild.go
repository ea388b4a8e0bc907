package linkload

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/store"
)

// BoardChild is RunStorm's board: it serves the store in EnvData on EnvAddr,
// as `board` does (taking the store's lock, marking every agent offline),
// writes a "listening" Event once it accepts links, and answers commands
// from stdin until stdin ends, when it stops gracefully. The parent ends it
// with SIGKILL when it means to. It logs errors to stderr.
func BoardChild(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
	dir, addr, shared := os.Getenv(EnvData), os.Getenv(EnvAddr), os.Getenv(EnvDSN)
	if dir == "" || addr == "" {
		return fmt.Errorf("%s and %s must be set", EnvData, EnvAddr)
	}
	ping, err := time.ParseDuration(os.Getenv(EnvPing))
	if err != nil {
		return fmt.Errorf("%s: %w", EnvPing, err)
	}
	if os.Getenv(EnvBare) == "1" {
		return bareChild(ctx, addr, ping, stdin, stdout)
	}
	stopProfile, err := startProfile(os.Getenv(EnvCPUProfile))
	if err != nil {
		return err
	}
	defer stopProfile()
	dsn := shared
	if dsn == "" {
		dsn = store.SQLiteDSN(dir)
		lock, err := store.TakeLock(dsn)
		if err != nil {
			return err
		}
		defer lock.Release()
	}
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	b, err := board.New(ctx, board.Config{
		Store:        db,
		PingInterval: ping,
		Logger:       slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		return err
	}
	ln, err := listenAgain(addr)
	if err != nil {
		b.Close()
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- b.Serve(ctx, ln) }()
	out := &events{enc: json.NewEncoder(stdout)}
	listening := Event{Kind: "listening", At: time.Now().UnixNano()}
	if shared != "" {
		base := Measure() // what a board of no agents holds
		listening.Memory = &base
	}
	out.send(listening)
	dumpOnSignal(filepath.Join(dir, "goroutines.txt"))

	cmds := make(chan string)
	go func() {
		defer close(cmds)
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			cmds <- sc.Text()
		}
	}()
	for {
		select {
		case err := <-served:
			return err
		case cmd, ok := <-cmds:
			if !ok {
				cancel()
				return <-served
			}
			switch cmd {
			case cmdMeasure:
				m := Measure()
				n, err := db.Agent.Query().Where(agent.Online(true), agent.Board(b.ID())).Count(ctx)
				if err != nil {
					out.send(Event{Kind: "error", Error: err.Error()})
					continue
				}
				out.send(Event{Kind: "report", Memory: &m, Up: n})
			case cmdStopProfile:
				pprof.StopCPUProfile()
				out.send(Event{Kind: "profiled"})
			case cmdCount, cmdCountHere:
				q := db.Agent.Query().Where(agent.Online(true))
				if cmd == cmdCountHere {
					q = q.Where(agent.Board(b.ID()))
				}
				n, err := q.Count(ctx)
				if err != nil {
					out.send(Event{Kind: "error", Error: err.Error()})
					continue
				}
				out.send(Event{Kind: "count", Up: n})
			default:
				out.send(Event{Kind: "error", Error: fmt.Sprintf("unknown command %q", cmd)})
			}
		}
	}
}

// startProfile starts a CPU profile written to path, if path is not ""; the
// function it returns stops it.
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// listenAgain listens on addr. The port of a board just killed is free at
// once (SO_REUSEADDR), but it is patient with a slow kernel.
func listenAgain(addr string) (net.Listener, error) {
	for i := 0; ; i++ {
		ln, err := net.Listen("tcp", addr)
		if err == nil || i == 100 {
			return ln, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}
