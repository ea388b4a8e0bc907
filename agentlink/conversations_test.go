package agentlink

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
)

func TestReportConversationsWithoutALink(t *testing.T) {
	t.Parallel()
	var l *Link
	err := l.ReportConversations(t.Context(), []ConversationPointer{{Thread: "t", Updated: time.Now()}}, true)
	if !errors.Is(err, ErrNoLink) {
		t.Fatalf("ReportConversations on no board = %v, want ErrNoLink", err)
	}
}

// TestConversationReports: a report is split into messages a board takes
// (at most 1,000 pointers, about 512 KiB), the first full when the report
// is and the rest not; a full report of nothing is one empty message, a
// delta of nothing none; a pointer without a thread or a time is refused.
func TestConversationReports(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	pointers := func(n, people int) []ConversationPointer {
		out := make([]ConversationPointer, n)
		for i := range out {
			out[i] = ConversationPointer{Thread: fmt.Sprintf("t%d", i), Updated: at, Waiting: i%2 == 0}
			for k := range people {
				out[i].People = append(out[i].People, fmt.Sprintf("person-%03d@%s.example.com", k, strings.Repeat("x", 40)))
			}
		}
		return out
	}
	tests := []struct {
		name     string
		pointers []ConversationPointer
		full     bool
		sizes    []int
	}{
		{name: "full, none", full: true, sizes: []int{0}},
		{name: "delta, none", full: false, sizes: nil},
		{name: "full, 2500", pointers: pointers(2500, 0), full: true, sizes: []int{1000, 1000, 500}},
		{name: "delta, 1000", pointers: pointers(1000, 0), full: false, sizes: []int{1000}},
		{name: "full, large pointers", pointers: pointers(300, 30), full: true, sizes: []int{265, 35}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msgs, err := conversationReports(tc.pointers, tc.full)
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int
			total := 0
			for i, m := range msgs {
				sizes = append(sizes, len(m.GetConversations()))
				if n := proto.Size(m); n > reportMaxBytes {
					t.Errorf("message %d is %d bytes, want at most %d", i, n, reportMaxBytes)
				}
				total += len(m.GetConversations())
				if want := tc.full && i == 0; m.GetFull() != want {
					t.Errorf("message %d full = %v, want %v", i, m.GetFull(), want)
				}
				for _, p := range m.GetConversations() {
					if p.GetUpdateTime().AsTime() != at || p.GetThread() == "" {
						t.Errorf("pointer %v, want thread and time %s", p, at)
					}
				}
			}
			if fmt.Sprint(sizes) != fmt.Sprint(tc.sizes) || total != len(tc.pointers) {
				t.Errorf("conversationReports(%d, %v) sizes = %v, want %v", len(tc.pointers), tc.full, sizes, tc.sizes)
			}
		})
	}
	for _, bad := range []ConversationPointer{{Updated: at}, {Thread: "t"}} {
		if _, err := conversationReports([]ConversationPointer{bad}, true); err == nil {
			t.Errorf("conversationReports(%+v) = nil error, want a refusal", bad)
		}
	}
}
