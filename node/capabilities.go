package node

import "github.com/symphonix/symphonix/agentlink"

// capabilities is what this agent process announces in its hello: each
// capability only when the code behind it runs here, decided in this one
// place.
//
//   - chat: when the chat is served: the board's chat window reaches it
//     through serve's door.
//   - users and pairing: when the chat is served, whose door knows people
//     through the board and shows pairing codes (serve); not for a run at a
//     terminal, nor a flow that is only linked.
//   - health: when health checks run (served, not turned off, with at least
//     one check to run).
//   - pause: always; the agent keeps its pause and obeys the board's, served
//     or run once.
//   - runs and live-runs: when the agent's runs are recorded (a flow this
//     binary runs, linked to a board), served or run once.
//   - fire: when served and recorded; a run at a terminal takes no fired
//     runs.
//   - triggers: when served with a trigger file (the runtime runs it,
//     reports it and obeys the board's pauses of it).
//   - evals: when the folder has an eval suite (*.eval.json): the agent
//     reports what its journal says of the builds' scores, served or run
//     once, and a served agent again whenever an `agent eval` run is kept.
//   - delegation and delegation-cycle: always. Every agent of this build
//     can delegate (an agent node with an agents.json) and refuses a
//     circular delegation before it runs; nothing about a deployment
//     turns either off, and a board asks the capability rather than
//     reading silence as "no cycles here".
func (p *parts) capabilities() []string {
	var caps []string
	if p.api != nil {
		caps = append(caps, agentlink.CapabilityUsers, agentlink.CapabilityPairing, agentlink.CapabilityChat)
	}
	if p.health != nil {
		caps = append(caps, agentlink.CapabilityHealth)
	}
	caps = append(caps, agentlink.CapabilityPause)
	if p.runs != nil {
		caps = append(caps, agentlink.CapabilityRuns, agentlink.CapabilityLiveRuns)
		if p.api != nil {
			caps = append(caps, agentlink.CapabilityFire)
		}
	}
	if p.trig != nil {
		caps = append(caps, agentlink.CapabilityTriggers)
	}
	caps = append(caps, agentlink.CapabilityDelegation, agentlink.CapabilityDelegationCycle)
	if len(p.evals) > 0 {
		caps = append(caps, agentlink.CapabilityEvals)
	}
	return caps
}
