package board

import "github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"

// streams are the procedures whose calls stay open: the link, the watches,
// gRPC reflection and health's Watch. Their bodies are not held to a rate
// (bodyrate.go): a link sends when it has something to say.
var streams = map[string]bool{
	boardv1connect.AgentLinkServiceLinkProcedure:                     true,
	boardv1connect.AgentServiceWatchAgentsProcedure:                  true,
	boardv1connect.ApprovalServiceWatchApprovalsProcedure:            true,
	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo":      true,
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": true,
	"/grpc.health.v1.Health/Watch":                                   true,
}

// streamProcedure says whether calls to procedure stay open.
func streamProcedure(procedure string) bool { return streams[procedure] }
