package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeTriggerListenAndBind: agent serve takes the trigger listener's
// address from TRIGGER_BIND, and --trigger-listen wins over it; without
// either it is 127.0.0.1, wherever the chat's --listen puts the chat; a
// webhook there starts a run, answered 200.
func TestServeTriggerListenAndBind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"flow.json": `{"version": "0.17", "name": "greeter", "inputs": ["who"], "outputs": ["greeting"],
  "state": {"who": {"type": "string"}, "greeting": {"type": "string"}},
  "nodes": [{"id": "greet", "type": "llm", "output": "greeting", "prompt": "Greet {{who}}."}],
  "edges": [{"from": "greet", "to": "END"}], "start": "greet"}`,
		"triggers.json": `{"flow": "flow.json", "triggers": [{"id": "hi", "kind": "webhook", "path": "/hi", "input": {"who": "{{body.who}}"}}]}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, flag := range []string{"TRIGGER_BIND", "--trigger-listen", "--listen"} {
		env := map[string]string{"TRIGGER_BIND": "127.0.0.1"}
		args := []string{"serve", dir}
		want := regexp.MustCompile(`agent greeter: triggers: webhooks on (http://127\.0\.0\.1:\d+)`)
		switch flag {
		case "--listen":
			// The chat elsewhere on loopback, and no TRIGGER_BIND: the
			// trigger listener stays on 127.0.0.1.
			delete(env, "TRIGGER_BIND")
			args = append(args, "--listen", "127.0.0.2:0")
		case "--trigger-listen":
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			env["TRIGGER_BIND"] = "127.0.0.2" // not where the flag says
			args = append(args, "--trigger-listen", addr)
			want = regexp.MustCompile(`agent greeter: triggers: webhooks on (http://` + regexp.QuoteMeta(addr) + `)`)
		}
		ctx, cancel := context.WithCancel(t.Context())
		var out syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &out)
		}()
		deadline := time.Now().Add(30 * time.Second)
		var url string
		for {
			if m := want.FindStringSubmatch(out.String()); m != nil {
				url = m[1]
				break
			}
			select {
			case err := <-done:
				t.Fatalf("%s: agent serve ended: %v\n%s", flag, err, out.String())
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no webhooks line:\n%s", flag, out.String())
			}
		}
		if flag == "--listen" && !regexp.MustCompile(`(?m)^serving \S+ on http://127\.0\.0\.2:\d+`).MatchString(out.String()) {
			t.Fatalf("--listen: the chat is not on 127.0.0.2:\n%s", out.String())
		}
		resp, err := http.Post(url+"/hi", "application/json", strings.NewReader(`{"who": "Ada"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: the webhook answered %d, want 200", flag, resp.StatusCode)
		}
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("agent serve after cancel: %v", err)
		}
	}
}
