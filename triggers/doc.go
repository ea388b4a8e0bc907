// Package triggers is what starts a flow without a person: schedules
// (five-field cron in an IANA time zone) and webhooks, declared in a
// triggers.json beside the flow, and where each run's result is
// delivered. The file names the flow; an occurrence only fills the flow's
// inputs, by the flow's own template rules, so an external payload can
// never choose what runs. docs/triggers.md describes the file and the
// runtime.
package triggers
