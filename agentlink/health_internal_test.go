package agentlink

import (
	"testing"
	"time"
)

func TestHealthDue(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	ok := Health{Status: HealthOK, Checks: []HealthCheck{{Name: "model", Status: CheckOK, Took: time.Second}}}
	slower := Health{Status: HealthOK, Start: at.Add(time.Minute), Checks: []HealthCheck{{Name: "model", Status: CheckOK, Took: 3 * time.Second}}}
	failed := Health{Status: HealthDegraded, Checks: []HealthCheck{{Name: "model", Status: CheckError, Detail: "401"}}}
	otherDetail := Health{Status: HealthDegraded, Checks: []HealthCheck{{Name: "model", Status: CheckError, Detail: "timeout"}}}
	otherName := Health{Status: HealthOK, Checks: []HealthCheck{{Name: "waiting", Status: CheckOK}}}
	tests := []struct {
		name string
		sent *Health
		h    Health
		now  time.Time
		want bool
	}{
		{"the first round", nil, ok, at, true},
		{"the same outcome, slower, later", &ok, slower, at.Add(HealthEvery - time.Second), false},
		{"the same outcome, five minutes on", &ok, slower, at.Add(HealthEvery), true},
		{"a status changed", &ok, failed, at.Add(time.Second), true},
		{"a detail changed", &failed, otherDetail, at.Add(time.Second), true},
		{"another check", &ok, otherName, at.Add(time.Second), true},
	}
	for _, tt := range tests {
		if got := healthDue(tt.sent, at, tt.h, tt.now); got != tt.want {
			t.Errorf("%s: healthDue = %v, want %v", tt.name, got, tt.want)
		}
	}
}
