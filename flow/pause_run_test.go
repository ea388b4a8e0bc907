package flow_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/jcs"
)

func TestAskPausesAndResumes(t *testing.T) {
	t.Parallel()
	cp := &flow.MemoryCheckpointer{}
	m := &testModel{}
	clk := newClock()
	g := build(t, loadFile(t, "clarify.json"), flow.BuildOptions{Model: m, Checkpointer: cp, Now: clk.now})

	res, err := g.Invoke(t.Context(), "t1", map[string]any{"topic": "cats"})
	if err != nil {
		t.Fatal(err)
	}
	want := &flow.Pending{Kind: flow.PendingAsk, Node: "clarify", Question: "What about cats interests you most?",
		At: time.Date(2026, 3, 1, 9, 0, 1, 0, time.UTC), Run: res.Run}
	if res.Run == "" {
		t.Fatal("Result.Run is empty")
	}
	// Pending names its run, here and read back from the checkpointer.
	if diff := cmp.Diff(want, res.Pending); diff != "" {
		t.Fatalf("Pending (-want +got):\n%s", diff)
	}
	if len(m.asked) != 0 {
		t.Errorf("the model was asked before the question was answered")
	}
	if diff := cmp.Diff([]string{"t1"}, threads(t, cp)); diff != "" {
		t.Errorf("checkpointer threads (-want +got):\n%s", diff)
	}
	if p, err := g.Pending(t.Context(), "t1"); err != nil || !cmp.Equal(want, p) {
		t.Errorf("Pending(t1) = %+v, %v; want %+v", p, err, want)
	}

	// While it waits, a new run on the thread is refused, and so is an
	// empty answer, which leaves it waiting.
	if _, err := g.Invoke(t.Context(), "t1", nil); !errors.Is(err, flow.ErrWaiting) {
		t.Errorf("Invoke on a waiting thread = %v, want ErrWaiting", err)
	}
	if _, err := g.Resume(t.Context(), "t1", ""); !errors.Is(err, flow.ErrEmptyAnswer) {
		t.Errorf("Resume with \"\" = %v, want ErrEmptyAnswer", err)
	}

	res, err = g.Resume(t.Context(), "t1", "their whiskers")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Finished() {
		t.Fatalf("Resume paused again at %+v", res.Pending)
	}
	if res.State["focus"] != "their whiskers" || res.State["answer"] != "Tell me about their whiskers in cats." {
		t.Errorf("state = %v, want the answer in focus and the llm to have read it", res.State)
	}
	if ts := threads(t, cp); len(ts) != 0 {
		t.Errorf("checkpointer holds %v after the run finished, want nothing", ts)
	}
	if _, err := g.Resume(t.Context(), "t1", "again"); !errors.Is(err, flow.ErrNothingPending) {
		t.Errorf("Resume with nothing pending = %v, want ErrNothingPending", err)
	}
	if _, err := g.Resume(t.Context(), "never", "hello"); !errors.Is(err, flow.ErrNothingPending) {
		t.Errorf("Resume on an unknown thread = %v, want ErrNothingPending", err)
	}
}

func TestAskForAFile(t *testing.T) {
	t.Parallel()
	f := load(t, `{
		"version": "0.9", "start": "photo",
		"state": { "photo": { "type": "file", "accept": "image/*" } },
		"nodes": [ { "id": "photo", "type": "ask", "ask": "Send me the photo.", "output": "photo" } ],
		"edges": [ { "from": "photo", "to": "END" } ]
	}`)
	cp := &flow.MemoryCheckpointer{}
	g := build(t, f, flow.BuildOptions{Checkpointer: cp})
	res, err := g.Invoke(t.Context(), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Pending.Expects != "file" || res.Pending.Accept != "image/*" {
		t.Errorf("Pending = %+v, want it to expect a file of image/*", res.Pending)
	}
	file := map[string]any{"id": "8f2.png", "name": "cat.png", "mediaType": "image/png", "url": "/files/8f2.png", "bytes": float64(84213)}
	res, err = g.Resume(t.Context(), "t", file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(file, res.State["photo"]); diff != "" {
		t.Errorf("photo (-want +got):\n%s", diff)
	}
}

const approvalFlow = `{
	"version": "0.5", "start": "draft",
	"state": { "order": {}, "reasons": { "reducer": "append", "default": [] }, "secret": {}, "receipt": {}, "cancelled": {} },
	"nodes": [
		{ "id": "draft", "handler": "draftOrder" },
		{ "id": "place", "handler": "placeOrder",
		  "approval": { "ask": "Place order {{order.id}}?", "show": ["order"], "onReject": "cancel", "why": "reasons" } },
		{ "id": "cancel", "handler": "cancelOrder" }
	],
	"edges": [
		{ "from": "draft", "to": "place" },
		{ "from": "place", "to": "END" },
		{ "from": "cancel", "to": "END" }
	]
}`

// orderDesk is the approval flow's registry, counting what ran.
func orderDesk(c *counter) flow.Registry {
	return flow.Registry{Handlers: map[string]flow.Handler{
		"draftOrder": counted(c, "draft", set(flow.Update{
			"order":   map[string]any{"id": "A-7", "total": 5000, "currency": "EUR"},
			"reasons": []any{"  the customer asked twice", "stock is there  "},
			"secret":  "api-key",
		})),
		"placeOrder":  counted(c, "place", set(flow.Update{"receipt": "R-1"})),
		"cancelOrder": counted(c, "cancel", set(flow.Update{"cancelled": true})),
	}}
}

func TestApproval(t *testing.T) {
	t.Parallel()
	order := map[string]any{"id": "A-7", "total": float64(5000), "currency": "EUR"}
	account := "the customer asked twice\nstock is there"
	// The digest, made independently: what is shown, and the case for it.
	digest, err := jcs.Digest([]byte(`{"show":{"order":{"currency":"EUR","id":"A-7","total":5000}},"account":"the customer asked twice\nstock is there"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		answer     any
		placed     bool
		wantResult flow.State
	}{
		{"yes", true, flow.State{"receipt": "R-1"}},
		{map[string]any{"approved": true}, true, flow.State{"receipt": "R-1"}},
		{" OK ", true, flow.State{"receipt": "R-1"}},
		{"no", false, flow.State{"cancelled": true}},
		{map[string]any{"approved": false}, false, flow.State{"cancelled": true}},
		{"yes please", false, flow.State{"cancelled": true}}, // anything unrecognised is a no
	} {
		t.Run(jsonOf(tt.answer), func(t *testing.T) {
			t.Parallel()
			var c counter
			cp := &flow.MemoryCheckpointer{}
			g := build(t, load(t, approvalFlow), flow.BuildOptions{Registry: orderDesk(&c), Checkpointer: cp})
			res, err := g.Invoke(t.Context(), "order-desk", nil)
			if err != nil {
				t.Fatal(err)
			}
			p := res.Pending
			if p == nil {
				t.Fatal("Invoke finished, want it to pause for approval")
			}
			if p.Kind != flow.PendingApproval || p.Node != "place" || p.Question != "Place order A-7?" {
				t.Errorf("Pending = %+v", p)
			}
			// show names channels, not the whole state: no secret.
			if diff := cmp.Diff(map[string]any{"order": order}, p.Show); diff != "" {
				t.Errorf("Show (-want +got):\n%s", diff)
			}
			if p.Account != account {
				t.Errorf("Account = %q, want %q", p.Account, account)
			}
			if p.Digest != digest {
				t.Errorf("Digest = %s, want %s", p.Digest, digest)
			}
			if c.get("place") != 0 {
				t.Fatal("the node ran before it was approved")
			}

			res, err = g.Resume(t.Context(), "order-desk", tt.answer)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Finished() {
				t.Fatalf("Resume paused at %+v", res.Pending)
			}
			if placed := c.get("place") == 1; placed != tt.placed {
				t.Errorf("placeOrder ran = %v, want %v", placed, tt.placed)
			}
			if cancelled := c.get("cancel") == 1; cancelled == tt.placed {
				t.Errorf("cancelOrder ran = %v, want %v", cancelled, !tt.placed)
			}
			for k, v := range tt.wantResult {
				if !cmp.Equal(v, res.State[k]) {
					t.Errorf("state[%s] = %v, want %v", k, res.State[k], v)
				}
			}
			if ts := threads(t, cp); len(ts) != 0 {
				t.Errorf("checkpointer holds %v, want nothing", ts)
			}
		})
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestApprovalRejectedEndsTheBranch(t *testing.T) {
	t.Parallel()
	for _, onReject := range []string{"END", ""} {
		cp := &flow.MemoryCheckpointer{}
		f := loadFile(t, "crm-mcp.json")
		f.Nodes[0].Approval.OnReject = onReject
		box := &toolBox{}
		g := build(t, f, flow.BuildOptions{Checkpointer: cp, Tools: box.call})
		res, err := g.Invoke(t.Context(), "crm", map[string]any{"email": "  ada@example.com "})
		if err != nil {
			t.Fatal(err)
		}
		if res.Pending == nil || res.Pending.Account != "ada@example.com" {
			t.Fatalf("onReject %q: Pending = %+v, want an approval whose account is the email, trimmed", onReject, res.Pending)
		}
		res, err = g.Resume(t.Context(), "crm", "no")
		if err != nil || !res.Finished() {
			t.Fatalf("onReject %q: Resume(no) = %+v, %v; want the run finished", onReject, res, err)
		}
		if len(box.called()) != 0 || res.State["customer"] != nil {
			t.Errorf("onReject %q: tools called = %v, want none: a refused node never ran", onReject, box.called())
		}
	}
}

func TestApprovalResumedByAnotherGraph(t *testing.T) {
	t.Parallel()
	// One checkpointer, two Graphs built separately from the same flow:
	// the second stands for the agent after a restart.
	cp := &flow.MemoryCheckpointer{}
	var before, after counter
	g1 := build(t, loadFile(t, "place-order.json"), flow.BuildOptions{Registry: placeOrder(&before), Checkpointer: cp})
	res, err := g1.Invoke(t.Context(), "thread-9", map[string]any{"order": map[string]any{"sku": "x", "qty": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pending == nil {
		t.Fatal("Invoke finished, want a pause")
	}
	paused := *res.Pending

	g2 := build(t, loadFile(t, "place-order.json"), flow.BuildOptions{Registry: placeOrder(&after), Checkpointer: cp})
	p, err := g2.Pending(t.Context(), "thread-9")
	if err != nil || p == nil || p.Digest != paused.Digest || !p.At.Equal(paused.At) {
		t.Fatalf("g2.Pending = %+v, %v; want the same question, digest and time as g1 paused with", p, err)
	}
	res, err = g2.Resume(t.Context(), "thread-9", "approve")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Finished() || res.State["receipt"] != "placed 2 x" {
		t.Errorf("Resume = %+v, want it finished with the order placed", res)
	}
	if before.get("place") != 0 || after.get("place") != 1 || before.get("draft") != 1 || after.get("draft") != 0 {
		t.Errorf("calls before %v, after %v; want draft on g1 only and place on g2 only", before.n, after.n)
	}
	if ts := threads(t, cp); len(ts) != 0 {
		t.Errorf("checkpointer holds %v, want nothing", ts)
	}
}

func placeOrder(c *counter) flow.Registry {
	return flow.Registry{Handlers: map[string]flow.Handler{
		"draftOrder": counted(c, "draft", set(nil)),
		"placeOrder": counted(c, "place", func(_ context.Context, s flow.State) (flow.Update, error) {
			o := s["order"].(map[string]any)
			return flow.Update{"receipt": "placed " + jsonOf(o["qty"]) + " " + o["sku"].(string)}, nil
		}),
		"cancelOrder": counted(c, "cancel", set(nil)),
	}}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	var c counter
	cp := &flow.MemoryCheckpointer{}
	g := build(t, loadFile(t, "place-order.json"), flow.BuildOptions{Registry: placeOrder(&c), Checkpointer: cp})
	if _, err := g.Invoke(t.Context(), "t", map[string]any{"order": map[string]any{"sku": "x", "qty": 1}}); err != nil {
		t.Fatal(err)
	}
	if err := g.Cancel(t.Context(), "t"); err != nil {
		t.Fatal(err)
	}
	if c.get("place")+c.get("cancel") != 0 {
		t.Errorf("calls = %v: a cancelled run takes no onReject and runs nothing", c.n)
	}
	if err := g.Cancel(t.Context(), "t"); !errors.Is(err, flow.ErrNothingPending) {
		t.Errorf("Cancel again = %v, want ErrNothingPending", err)
	}
}

func TestParallelPausesAnsweredOneByOne(t *testing.T) {
	t.Parallel()
	f := load(t, `{
		"version": "0.8", "start": "split",
		"state": { "a": {}, "b": {}, "done": { "reducer": "append", "default": [] } },
		"nodes": [
			{ "id": "split", "handler": "nothing" },
			{ "id": "askA", "type": "ask", "ask": "A?", "output": "a" },
			{ "id": "askB", "type": "ask", "ask": "B?", "output": "b" },
			{ "id": "work", "handler": "work" },
			{ "id": "join", "handler": "join" }
		],
		"edges": [
			{ "from": "split", "to": "askA" }, { "from": "split", "to": "askB" }, { "from": "split", "to": "work" },
			{ "from": "askA", "to": "join" }, { "from": "askB", "to": "join" }, { "from": "work", "to": "join" },
			{ "from": "join", "to": "END" }
		]
	}`)
	var c counter
	reg := flow.Registry{Handlers: map[string]flow.Handler{
		"nothing": set(nil),
		"work":    counted(&c, "work", set(flow.Update{"done": "work"})),
		"join": counted(&c, "join", func(_ context.Context, s flow.State) (flow.Update, error) {
			return flow.Update{"done": jsonOf(s["a"]) + jsonOf(s["b"])}, nil
		}),
	}}
	cp := &flow.MemoryCheckpointer{}
	g := build(t, f, flow.BuildOptions{Registry: reg, Checkpointer: cp})
	res, err := g.Invoke(t.Context(), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Pending == nil || res.Pending.Node != "askA" {
		t.Fatalf("Pending = %+v, want askA first", res.Pending)
	}
	// A second Graph answers the second question: what ran is kept.
	g2 := build(t, f, flow.BuildOptions{Registry: reg, Checkpointer: cp})
	res, err = g2.Resume(t.Context(), "t", "one")
	if err != nil {
		t.Fatal(err)
	}
	if res.Pending == nil || res.Pending.Node != "askB" {
		t.Fatalf("Pending = %+v, want askB next", res.Pending)
	}
	res, err = g.Resume(t.Context(), "t", "two")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"work", `"one""two"`}, res.State["done"]); diff != "" {
		t.Errorf("done (-want +got):\n%s", diff)
	}
	if c.get("work") != 1 || c.get("join") != 1 {
		t.Errorf("calls = %v, want work and join once each", c.n)
	}
}

func TestResumedRunThatFailsIsForgotten(t *testing.T) {
	t.Parallel()
	cp := &flow.MemoryCheckpointer{}
	reg := placeOrder(&counter{})
	reg.Handlers["placeOrder"] = fail("payment declined")
	g := build(t, loadFile(t, "place-order.json"), flow.BuildOptions{Registry: reg, Checkpointer: cp})
	if _, err := g.Invoke(t.Context(), "t", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Resume(t.Context(), "t", "yes"); err == nil {
		t.Fatal("Resume = nil error, want the node's failure")
	}
	if ts := threads(t, cp); len(ts) != 0 {
		t.Errorf("checkpointer holds %v after the run failed, want nothing", ts)
	}
}

func TestCheckpointIsVersionedJSON(t *testing.T) {
	t.Parallel()
	cp := &flow.MemoryCheckpointer{}
	g := build(t, loadFile(t, "place-order.json"), flow.BuildOptions{Registry: placeOrder(&counter{}), Checkpointer: cp})
	if _, err := g.Invoke(t.Context(), "t", map[string]any{"order": map[string]any{"sku": "x"}}); err != nil {
		t.Fatal(err)
	}
	data, _, err := cp.Get(t.Context(), "t")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		V     int            `json:"v"`
		State map[string]any `json:"state"`
		Tasks []struct {
			Node, Status string
			Pending      *flow.Pending
		} `json:"tasks"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("checkpoint is not JSON: %v", err)
	}
	if c.V != flow.CheckpointVersion || len(c.Tasks) != 1 || c.Tasks[0].Node != "place" || c.Tasks[0].Status != "waiting" || c.Tasks[0].Pending == nil {
		t.Errorf("checkpoint = %s", data)
	}
	// Another version is refused, not half-read.
	if err := cp.Put(t.Context(), "t", []byte(`{"v": 99, "tasks": []}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Resume(t.Context(), "t", "yes"); !errors.Is(err, flow.ErrCheckpoint) {
		t.Errorf("Resume of version 99 = %v, want ErrCheckpoint", err)
	}
}
