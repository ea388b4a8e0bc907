package board

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// TestStreamEndsWhenRoleFalls: a stream that needs a role ends with
// permission_denied within the poll of its person's role falling below
// it. No procedure served today streams to more than viewers, and a person
// is at least a viewer, so the stream here is registered as one of the
// board's would be, needing admin.
func TestStreamEndsWhenRoleFalls(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db, err := store.Open(ctx, store.SQLiteDSN(t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		b, err := New(ctx, Config{Store: db})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			b.Close()
			db.Close()
		})
		for _, email := range []string{"ann@example.com", "root@example.com"} {
			if _, _, err := b.users.Add(ctx, identity.AddUser{Email: email, Role: identity.RoleAdmin, Actor: "test"}); err != nil {
				t.Fatal(err)
			}
		}
		ann, err := b.users.ByEmail(ctx, "ann@example.com")
		if err != nil {
			t.Fatal(err)
		}
		s, err := b.sessions.Start(ctx, ann.ID, ann.Email, "test")
		if err != nil {
			t.Fatal(err)
		}
		caller, _, err := b.sessions.Verify(ctx, s.Token)
		if err != nil {
			t.Fatal(err)
		}
		ended := make(chan error, 1)
		b.openStreams.add(&openStream{
			procedure: "/test/Watch",
			caller:    caller,
			need:      access{kind: identity.KindOperator, role: identity.RoleAdmin},
			end:       func(cause error) { ended <- cause },
		})
		if _, err := b.users.SetRole(ctx, ann.Email, identity.RoleAdmin, "test"); err != nil { // no change
			t.Fatal(err)
		}
		time.Sleep(3 * b.cfg.RevocationPoll)
		synctest.Wait()
		select {
		case cause := <-ended:
			t.Fatalf("ended before the role fell: %v", cause)
		default:
		}
		if _, err := b.users.SetRole(ctx, ann.Email, identity.RoleApprover, "test"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(b.cfg.RevocationPoll)
		synctest.Wait()
		select {
		case cause := <-ended:
			l, ok := cause.(*lapsedError)
			if !ok || l.err.Code() != connect.CodePermissionDenied || !strings.Contains(l.err.Message(), "needs role admin") {
				t.Errorf("ended with %v, want permission_denied: needs role admin", cause)
			}
		default:
			t.Fatalf("still open a poll after the role fell below admin")
		}
	})
}

// TestStreamProceduresComplete: every procedure of the board's own API
// whose calls stream, by its descriptor, is in streamProcedures, and no
// other is: a new stream is held to its credential (and spared the body
// rate) without anyone remembering to list it. The gRPC services' are
// listed by hand.
func TestStreamProceduresComplete(t *testing.T) {
	t.Parallel()
	for procedure := range policy {
		if !strings.HasPrefix(procedure, "/symphonix.board.") {
			continue
		}
		name := protoreflect.FullName(strings.ReplaceAll(strings.TrimPrefix(procedure, "/"), "/", "."))
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
		if err != nil {
			t.Errorf("%s: no descriptor: %v", procedure, err)
			continue
		}
		m, ok := d.(protoreflect.MethodDescriptor)
		if !ok {
			t.Errorf("%s: %s is not a method", procedure, name)
			continue
		}
		if streams := m.IsStreamingClient() || m.IsStreamingServer(); streams != streamProcedure(procedure) {
			t.Errorf("%s: streams %v, but streamProcedure says %v", procedure, streams, streamProcedure(procedure))
		}
	}
	for procedure, streams := range map[string]bool{
		"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo":      true,
		"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": true,
		"/grpc.health.v1.Health/Watch":                                   true,
		"/grpc.health.v1.Health/Check":                                   false,
	} {
		if _, ok := policy[procedure]; !ok || streamProcedure(procedure) != streams {
			t.Errorf("%s: in the policy %v, streamProcedure %v; want true, %v", procedure, ok, streamProcedure(procedure), streams)
		}
	}
	for procedure := range streamProcedures {
		if _, ok := policy[procedure]; !ok {
			t.Errorf("%s: a stream procedure with no policy", procedure)
		}
	}
	if !streamProcedure(boardv1connect.AgentLinkServiceLinkProcedure) {
		t.Errorf("the link is not a stream")
	}
}
