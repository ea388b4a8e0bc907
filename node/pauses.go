package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/pause"
)

// pauseCheckEvery is how often a running agent looks at its pause file
// for a change made on this machine (agent pause, agent resume); a request
// for new work looks as well.
const pauseCheckEvery = time.Second

// pauses is a running agent's pause: read from its folder when it starts,
// read again whenever the file changes, and written when the board pauses
// or resumes the agent. Every change is said on a line and told to the
// board. It is safe for concurrent use.
type pauses struct {
	dir  string
	name string
	out  io.Writer
	log  *slog.Logger

	mu    sync.Mutex
	state pause.State
	seen  fs.FileInfo // the file as last read; nil: there was none
	bad   error       // why the file could not be read, said once
	link  *agentlink.Link
	// onChange, when set before run, hears every change, on a goroutine of
	// its own.
	onChange func()

	// board holds the newest Pause from the board not yet acted on; wake
	// says there is one.
	boardMu sync.Mutex
	board   *agentlink.Pause
	wake    chan struct{}
}

// openPauses reads the pause of the agent in dir. A pause file that
// cannot be read is an error naming it: the agent is not started on a
// word it cannot read.
func openPauses(dir, name string, out io.Writer, log *slog.Logger) (*pauses, error) {
	p := &pauses{dir: dir, name: name, out: out, log: log, wake: make(chan struct{}, 1)}
	fi, _ := os.Stat(pause.Path(dir))
	s, err := pause.Read(dir)
	if err != nil {
		return nil, fmt.Errorf("%w (fix it, or `agent resume %s` writes it anew)", err, dir)
	}
	p.state, p.seen = s, fi
	return p, nil
}

// Current is the pause as it stands: the file is looked at again, and a
// change made on this machine taken up, said and told to the board.
func (p *pauses) Current() pause.State {
	p.mu.Lock()
	defer p.mu.Unlock()
	fi, err := os.Stat(pause.Path(p.dir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		p.unreadable(err)
		return p.state
	}
	if sameFile(p.seen, fi) {
		return p.state
	}
	s, err := pause.Read(p.dir)
	if err != nil {
		p.unreadable(err)
		return p.state
	}
	p.seen, p.bad = fi, nil
	if !s.Equal(p.state) {
		p.state = s
		p.changed(s, "")
	}
	return p.state
}

// unreadable says, once until the file can be read again, that it
// cannot be: the agent goes on with the word it read last.
func (p *pauses) unreadable(err error) {
	if p.bad == nil || p.bad.Error() != err.Error() {
		p.log.Warn("the pause file cannot be read: the last word read stands", "err", err, "paused", p.state.Paused)
	}
	p.bad = err
}

// sameFile reports whether the file is as it was: both absent, or the same
// file, unchanged in size and time.
func sameFile(a, b fs.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// changed says s on a line and tells the board; note is added to the line.
// p.mu is held.
func (p *pauses) changed(s pause.State, note string) {
	fmt.Fprintf(p.out, "agent %s: %s%s\n", p.name, s.Say(), note)
	if p.onChange != nil {
		go p.onChange() // p.mu is held, and it may ask Current
	}
	if p.link != nil {
		if err := p.link.ReportPause(stateOf(s)); err != nil {
			p.log.Warn("the pause not told to the board", "err", err)
		}
	}
}

// stateOf is s as the link tells it.
func stateOf(s pause.State) agentlink.PauseState {
	origin := ""
	switch s.Origin {
	case pause.Local:
		origin = agentlink.OriginLocal
	case pause.Board:
		origin = agentlink.OriginBoard
	}
	return agentlink.PauseState{Paused: s.Paused, Reason: s.Reason, By: s.By, At: s.Time, Origin: origin}
}

// use tells l the pause now and on every change after; the link says it
// again after every welcome.
func (p *pauses) use(l *agentlink.Link) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.link = l
	return l.ReportPause(stateOf(p.state))
}

// fromBoard takes a Pause from the board (agentlink.Config.OnPause): it
// never blocks; the newest is acted on by run.
func (p *pauses) fromBoard(b agentlink.Pause) {
	p.boardMu.Lock()
	p.board = &b
	p.boardMu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run looks at the file every pauseCheckEvery and acts on the board's
// pauses as they come, until ctx ends.
func (p *pauses) run(ctx context.Context) {
	tick := time.NewTicker(pauseCheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			p.Current()
		case <-p.wake:
			p.boardMu.Lock()
			b := p.board
			p.board = nil
			p.boardMu.Unlock()
			if b != nil {
				p.obey(*b)
			}
		}
	}
}

// obey keeps the board's pause b in the folder, with origin board, and
// answers with the state it came to. A pause that cannot be written is
// obeyed all the same, for as long as this process lives, and said.
func (p *pauses) obey(b agentlink.Pause) {
	at := b.At
	if at.IsZero() {
		at = time.Now()
	}
	s := pause.State{
		Paused: b.Paused,
		Reason: agentlink.Clip(b.Reason, pause.MaxReason),
		By:     agentlink.Clip(b.By, pause.MaxBy),
		Time:   at.UTC(),
		Origin: pause.Board,
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.Equal(p.state) {
		// Said already (the board repeats a pause after a welcome until it
		// hears the agent took it up): answer, and write nothing.
		if p.link != nil {
			if err := p.link.ReportPause(stateOf(s)); err != nil {
				p.log.Warn("the pause not told to the board", "err", err)
			}
		}
		return
	}
	note := ""
	if err := pause.Write(p.dir, s); err != nil {
		p.log.Error("the board's pause not kept in the folder: obeyed until the agent stops", "err", err)
		note = fmt.Sprintf(" (not kept for a restart: %v)", err)
	} else {
		p.seen, _ = os.Stat(pause.Path(p.dir))
	}
	p.state = s
	p.changed(s, note)
}
