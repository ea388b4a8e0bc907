package node

import "github.com/symphonix/symphonix/agentlink"

// capabilities is what this agent process announces in its hello: each
// capability only when the code behind it runs here, decided in this one
// place.
//
//   - users and pairing: when the chat is served, whose door knows people
//     through the board and shows pairing codes (serve); not for a run at a
//     terminal, nor a flow that is only linked.
//   - health: when health checks run (served, not turned off, with at least
//     one check to run).
//   - pause: always; the agent keeps its pause and obeys the board's, served
//     or run once.
//
// Nothing else is announced: runs, live runs and delegation are not built.
func (p *parts) capabilities() []string {
	var caps []string
	if p.api != nil {
		caps = append(caps, agentlink.CapabilityUsers, agentlink.CapabilityPairing)
	}
	if p.health != nil {
		caps = append(caps, agentlink.CapabilityHealth)
	}
	return append(caps, agentlink.CapabilityPause)
}
