table "action_link_uses" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "approval_id" {
    null = false
    type = varchar
  }
  column "person" {
    null = false
    type = varchar
  }
  column "used_at" {
    null = false
    type = timestamptz
  }
  column "expires_at" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
  index "actionlinkuse_expires_at" {
    columns = [column.expires_at]
  }
}
table "agents" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "name" {
    null = false
    type = varchar
  }
  column "description" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "online" {
    null    = false
    type    = boolean
    default = sql("false")
  }
  column "session" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "capabilities" {
    null = true
    type = jsonb
  }
  column "protocol" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "build" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "tools" {
    null = true
    type = jsonb
  }
  column "tools_on" {
    null = true
    type = jsonb
  }
  column "tools_spoken" {
    null    = false
    type    = boolean
    default = sql("false")
  }
  column "tools_set_at" {
    null = true
    type = timestamptz
  }
  column "tools_set_by" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "health_status" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "health_checks" {
    null = true
    type = bytea
  }
  column "health_started" {
    null = true
    type = timestamptz
  }
  column "health_received" {
    null = true
    type = timestamptz
  }
  column "paused" {
    null    = false
    type    = boolean
    default = sql("false")
  }
  column "pause_reason" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "pause_by" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "pause_time" {
    null = true
    type = timestamptz
  }
  column "pause_origin" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "pause_delivered" {
    null    = false
    type    = boolean
    default = sql("false")
  }
  column "inputs" {
    null = true
    type = bytea
  }
  column "runs_dropped" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "package_name" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "package_version" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "package_digest" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "triggers" {
    null = true
    type = bytea
  }
  column "triggers_time" {
    null = true
    type = timestamptz
  }
  column "trigger_pauses" {
    null = true
    type = bytea
  }
  column "cycle_count" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "cycle_last" {
    null = true
    type = timestamptz
  }
  column "first_seen" {
    null = false
    type = timestamptz
  }
  column "last_seen" {
    null = false
    type = timestamptz
  }
  column "board" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  primary_key {
    columns = [column.id]
  }
  index "agents_name_key" {
    unique  = true
    columns = [column.name]
  }
  index "agent_online" {
    columns = [column.online]
  }
  index "agent_package_digest" {
    columns = [column.package_digest]
  }
}
table "agent_builds" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "agent" {
    null = false
    type = varchar
  }
  column "build" {
    null = false
    type = varchar
  }
  column "package_name" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "package_version" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "first_seen" {
    null = false
    type = timestamptz
  }
  column "last_seen" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
  index "agentbuild_agent_build" {
    unique  = true
    columns = [column.agent, column.build]
  }
  index "agentbuild_agent_last_seen" {
    columns = [column.agent, column.last_seen]
  }
}
table "alert_rules" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "agent" {
    null = false
    type = varchar
  }
  column "condition" {
    null = false
    type = varchar
  }
  column "window" {
    null = false
    type = bigint
  }
  column "description" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "created_at" {
    null = false
    type = timestamptz
  }
  column "updated_at" {
    null = false
    type = timestamptz
  }
  column "updated_by" {
    null = false
    type = varchar
  }
  primary_key {
    columns = [column.id]
  }
}
table "approvals" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "agent" {
    null = false
    type = varchar
  }
  column "run" {
    null = false
    type = varchar
  }
  column "thread" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "run_id" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "node" {
    null = false
    type = varchar
  }
  column "ask" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "show" {
    null = false
    type = text
  }
  column "account" {
    null    = false
    type    = text
    default = sql("''")
  }
  column "digest" {
    null = false
    type = varchar
  }
  column "rule_id" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "state" {
    null = false
    type = varchar
  }
  column "created_at" {
    null = false
    type = timestamptz
  }
  column "decided_at" {
    null = true
    type = timestamptz
  }
  column "expires_at" {
    null = true
    type = timestamptz
  }
  column "say" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "decision_digest" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "decided_by" {
    null = true
    type = jsonb
  }
  column "reason" {
    null    = false
    type    = text
    default = sql("''")
  }
  column "votes" {
    null = true
    type = jsonb
  }
  column "delivered_at" {
    null = true
    type = timestamptz
  }
  column "traceparent" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "decision_traceparent" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "receipt" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "consent_id" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "escalation_level" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  primary_key {
    columns = [column.id]
  }
  index "approval_one_pending" {
    unique  = true
    columns = [column.agent, column.run, column.node]
    where   = "state = 'pending'"
  }
  index "approval_agent_run_node_created_at" {
    columns = [column.agent, column.run, column.node, column.created_at]
  }
  index "approval_created_at_id_state" {
    columns = [column.created_at, column.id, column.state]
  }
  index "approval_state_created_at_id" {
    columns = [column.state, column.created_at, column.id]
  }
  index "approval_state_expires_at" {
    columns = [column.state, column.expires_at]
  }
  index "approval_agent_created_at_id_state" {
    columns = [column.agent, column.created_at, column.id, column.state]
  }
  index "approval_agent_state_created_at_id" {
    columns = [column.agent, column.state, column.created_at, column.id]
  }
  index "approval_agent_run_id_node" {
    columns = [column.agent, column.run_id, column.node]
  }
  index "approval_agent_delivered_at_say" {
    columns = [column.agent, column.delivered_at, column.say]
  }
  index "approval_decided_at_state_created_at" {
    columns = [column.decided_at, column.state, column.created_at]
  }
}
table "audit_entries" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "seq" {
    null = true
    type = bigint
  }
  column "at" {
    null = false
    type = timestamptz
  }
  column "actor" {
    null = false
    type = varchar
  }
  column "action" {
    null = false
    type = varchar
  }
  column "subject" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "detail" {
    null    = false
    type    = text
    default = sql("'{}'")
  }
  column "content" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "prev" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "hash" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  primary_key {
    columns = [column.id]
  }
  index "audit_entries_seq_key" {
    unique  = true
    columns = [column.seq]
  }
}
table "board_leases" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "started_at" {
    null = false
    type = timestamptz
  }
  column "expires_at" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
}
table "consents" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "agent" {
    null = false
    type = varchar
  }
  column "digest" {
    null = false
    type = varchar
  }
  column "rule_id" {
    null = false
    type = varchar
  }
  column "approval_id" {
    null = false
    type = varchar
  }
  column "created_by" {
    null = false
    type = varchar
  }
  column "created_at" {
    null = false
    type = timestamptz
  }
  column "expires_at" {
    null = false
    type = timestamptz
  }
  column "uses_allowed" {
    null = false
    type = bigint
  }
  column "uses" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "revoked_at" {
    null = true
    type = timestamptz
  }
  column "revoked_by" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  primary_key {
    columns = [column.id]
  }
  index "consent_agent_digest" {
    columns = [column.agent, column.digest]
  }
  index "consent_created_at_id" {
    columns = [column.created_at, column.id]
  }
}
table "conversations" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "agent" {
    null = false
    type = varchar
  }
  column "thread" {
    null = false
    type = varchar
  }
  column "updated_at" {
    null = false
    type = timestamptz
  }
  column "waiting" {
    null    = false
    type    = boolean
    default = sql("false")
  }
  column "people" {
    null = true
    type = jsonb
  }
  column "reported_at" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
  index "conversation_agent_thread" {
    unique  = true
    columns = [column.agent, column.thread]
  }
}
table "delegation_failures" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "agent" {
    null = false
    type = varchar
  }
  column "run_id" {
    null = false
    type = varchar
  }
  column "node" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "target" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "code" {
    null = false
    type = varchar
  }
  column "message" {
    null    = false
    type    = text
    default = sql("''")
  }
  column "chain" {
    null = true
    type = jsonb
  }
  column "invocation_id" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "time" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
  index "delegationfailure_agent_time" {
    columns = [column.agent, column.time]
  }
  index "delegationfailure_agent_code_time" {
    columns = [column.agent, column.code, column.time]
  }
}
table "eval_scores" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "agent" {
    null = false
    type = varchar
  }
  column "suite" {
    null = false
    type = varchar
  }
  column "build" {
    null = false
    type = varchar
  }
  column "score_time" {
    null = false
    type = timestamptz
  }
  column "score" {
    null = false
    type = double_precision
  }
  column "passed" {
    null = false
    type = boolean
  }
  column "cases" {
    null = false
    type = bigint
  }
  column "completed" {
    null = false
    type = bigint
  }
  column "scored" {
    null = false
    type = bigint
  }
  column "times" {
    null = false
    type = bigint
  }
  column "criteria" {
    null = true
    type = jsonb
  }
  column "threshold" {
    null = true
    type = double_precision
  }
  column "source" {
    null = false
    type = varchar
  }
  column "received" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
  index "evalscore_agent_suite_build" {
    unique  = true
    columns = [column.agent, column.suite, column.build]
  }
  index "evalscore_agent_suite_score_time" {
    columns = [column.agent, column.suite, column.score_time]
  }
}
table "fleet_samples" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "resolution" {
    null = false
    type = varchar
  }
  column "at" {
    null = false
    type = timestamptz
  }
  column "minutes" {
    null    = false
    type    = bigint
    default = sql("1")
  }
  column "agents_online" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "approvals_pending" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "health_ok" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "health_degraded" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "health_unknown" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "health_none" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "decisions" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "latency_p50_ms" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "latency_p99_ms" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "runs_started" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "runs_ended" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "runs_failed" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  primary_key {
    columns = [column.id]
  }
  index "fleetsample_resolution_at" {
    unique  = true
    columns = [column.resolution, column.at]
  }
}
table "health_rounds" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "agent" {
    null = false
    type = varchar
  }
  column "status" {
    null = false
    type = varchar
  }
  column "checks" {
    null = false
    type = bytea
  }
  column "started" {
    null = false
    type = timestamptz
  }
  column "received" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
  index "healthround_agent_received" {
    columns = [column.agent, column.received]
  }
  index "healthround_received" {
    columns = [column.received]
  }
}
table "notifications" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "approval_id" {
    null = false
    type = varchar
  }
  column "event" {
    null = false
    type = varchar
  }
  column "target" {
    null = false
    type = varchar
  }
  column "body" {
    null = false
    type = bytea
  }
  column "created_at" {
    null = false
    type = timestamptz
  }
  column "next_at" {
    null = false
    type = timestamptz
  }
  column "attempts" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "sent_at" {
    null = true
    type = timestamptz
  }
  column "failed" {
    null    = false
    type    = boolean
    default = sql("false")
  }
  column "last_error" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  primary_key {
    columns = [column.id]
  }
  index "notification_sent_at_failed_next_at" {
    columns = [column.sent_at, column.failed, column.next_at]
  }
  index "notification_approval_id" {
    columns = [column.approval_id]
  }
}
table "package_chunks" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "digest" {
    null = false
    type = varchar
  }
  column "seq" {
    null = false
    type = bigint
  }
  column "data" {
    null = false
    type = bytea
  }
  primary_key {
    columns = [column.id]
  }
  index "packagechunk_digest_seq" {
    unique  = true
    columns = [column.digest, column.seq]
  }
}
table "package_scopes" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "publishers" {
    null = true
    type = jsonb
  }
  column "threshold" {
    null    = false
    type    = bigint
    default = sql("1")
  }
  column "set_by" {
    null = false
    type = varchar
  }
  column "set_at" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
}
table "package_versions" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "name" {
    null = false
    type = varchar
  }
  column "scope" {
    null = false
    type = varchar
  }
  column "version" {
    null = false
    type = varchar
  }
  column "digest" {
    null = false
    type = varchar
  }
  column "kind" {
    null = false
    type = varchar
  }
  column "description" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "size" {
    null = false
    type = bigint
  }
  column "files" {
    null = false
    type = bigint
  }
  column "manifest" {
    null = false
    type = bytea
  }
  column "envelope" {
    null = false
    type = bytea
  }
  column "signers" {
    null = true
    type = jsonb
  }
  column "published_by" {
    null = false
    type = varchar
  }
  column "published_at" {
    null = false
    type = timestamptz
  }
  column "yanked_at" {
    null = true
    type = timestamptz
  }
  column "yanked_by" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "yank_reason" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  primary_key {
    columns = [column.id]
  }
  index "package_versions_digest_key" {
    unique  = true
    columns = [column.digest]
  }
  index "packageversion_name_version" {
    unique  = true
    columns = [column.name, column.version]
  }
  index "packageversion_scope" {
    columns = [column.scope]
  }
}
table "pair_codes" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "code_hash" {
    null = false
    type = varchar
  }
  column "agent" {
    null = false
    type = varchar
  }
  column "thread" {
    null = false
    type = varchar
  }
  column "created_at" {
    null = false
    type = timestamptz
  }
  column "expires_at" {
    null = false
    type = timestamptz
  }
  column "wrong_tries" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "used_at" {
    null = true
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
  index "pair_codes_code_hash_key" {
    unique  = true
    columns = [column.code_hash]
  }
  index "paircode_agent_thread" {
    columns = [column.agent, column.thread]
  }
}
table "pairings" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "agent" {
    null = false
    type = varchar
  }
  column "thread" {
    null = false
    type = varchar
  }
  column "user_id" {
    null = false
    type = varchar
  }
  column "email" {
    null = false
    type = varchar
  }
  column "name" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "created_at" {
    null = false
    type = timestamptz
  }
  column "delivered_at" {
    null = true
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
  index "pairing_agent_delivered_at" {
    columns = [column.agent, column.delivered_at]
  }
  index "pairing_user_id" {
    columns = [column.user_id]
  }
}
table "publisher_keys" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "public_key" {
    null = false
    type = bytea
  }
  column "publisher" {
    null = false
    type = varchar
  }
  column "added_by" {
    null = false
    type = varchar
  }
  column "added_at" {
    null = false
    type = timestamptz
  }
  column "revoked_at" {
    null = true
    type = timestamptz
  }
  column "revoked_by" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "revoke_reason" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  primary_key {
    columns = [column.id]
  }
  index "publisherkey_publisher" {
    columns = [column.publisher]
  }
}
table "rate_buckets" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "tokens" {
    null = false
    type = double_precision
  }
  column "at" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
}
table "rate_hits" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "limiter" {
    null = false
    type = varchar
  }
  column "key" {
    null = false
    type = varchar
  }
  column "at" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
  index "ratehit_limiter_key_at" {
    columns = [column.limiter, column.key, column.at]
  }
  index "ratehit_at" {
    columns = [column.at]
  }
}
table "receipt_keys" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "private_key" {
    null = false
    type = bytea
  }
  column "not_before" {
    null = false
    type = timestamptz
  }
  column "retired_at" {
    null = true
    type = timestamptz
  }
  column "created_at" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
}
table "relays" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "agent" {
    null = false
    type = varchar
  }
  column "board" {
    null = false
    type = varchar
  }
  column "request_id" {
    null = false
    type = varchar
  }
  column "request" {
    null = false
    type = bytea
  }
  column "within_ms" {
    null = false
    type = bigint
  }
  column "created_at" {
    null = false
    type = timestamptz
  }
  column "claimed" {
    null    = false
    type    = boolean
    default = sql("false")
  }
  column "answered" {
    null    = false
    type    = boolean
    default = sql("false")
  }
  column "answer" {
    null = true
    type = bytea
  }
  column "code" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "message" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  primary_key {
    columns = [column.id]
  }
  index "relay_board_claimed" {
    columns = [column.board, column.claimed]
  }
  index "relay_created_at" {
    columns = [column.created_at]
  }
}
table "rules" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "agent" {
    null = false
    type = varchar
  }
  column "node" {
    null = false
    type = varchar
  }
  column "role" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "people" {
    null = true
    type = jsonb
  }
  column "quorum" {
    null    = false
    type    = bigint
    default = sql("1")
  }
  column "time_limit" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "require_reason" {
    null    = false
    type    = boolean
    default = sql("false")
  }
  column "allow_self_approval" {
    null    = false
    type    = boolean
    default = sql("false")
  }
  column "description" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "created_at" {
    null = false
    type = timestamptz
  }
  column "updated_at" {
    null = false
    type = timestamptz
  }
  column "updated_by" {
    null = false
    type = varchar
  }
  column "no_standing_consent" {
    null    = false
    type    = boolean
    default = sql("false")
  }
  column "standing_consent_max_amount" {
    null    = false
    type    = double_precision
    default = sql("0")
  }
  column "escalation" {
    null = true
    type = jsonb
  }
  primary_key {
    columns = [column.id]
  }
  index "rule_agent_node" {
    unique  = true
    columns = [column.agent, column.node]
  }
}
table "runs" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "agent" {
    null = false
    type = varchar
  }
  column "run_id" {
    null = false
    type = varchar
  }
  column "thread" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "started_by" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "started_by_who" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "build" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "state" {
    null = false
    type = varchar
  }
  column "start_time" {
    null = false
    type = timestamptz
  }
  column "end_time" {
    null = true
    type = timestamptz
  }
  column "duration_ns" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "step_count" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "tokens_input" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "tokens_output" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "tokens_cached" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "tokens_total" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "error" {
    null    = false
    type    = text
    default = sql("''")
  }
  column "pause" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "paused_at" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "approval_id" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "input" {
    null = true
    type = bytea
  }
  column "output" {
    null = true
    type = bytea
  }
  column "withheld" {
    null = true
    type = jsonb
  }
  column "steps_truncated" {
    null    = false
    type    = boolean
    default = sql("false")
  }
  column "trigger" {
    null = true
    type = bytea
  }
  column "parent_run_id" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "parent_node" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "invocation_id" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "delegated_agent" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "chain" {
    null = true
    type = jsonb
  }
  column "seq" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "updated_at" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
  index "run_agent_run_id" {
    unique  = true
    columns = [column.agent, column.run_id]
  }
  index "run_start_time" {
    columns = [column.start_time]
  }
  index "run_agent_start_time" {
    columns = [column.agent, column.start_time]
  }
  index "run_state_start_time" {
    columns = [column.state, column.start_time]
  }
  index "run_agent_thread_start_time" {
    columns = [column.agent, column.thread, column.start_time]
  }
  index "run_end_time" {
    columns = [column.end_time]
  }
  index "run_agent_parent_run_id_start_time" {
    columns = [column.agent, column.parent_run_id, column.start_time]
  }
}
table "run_details" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "run" {
    null = false
    type = bigint
  }
  column "steps" {
    null = false
    type = bytea
  }
  primary_key {
    columns = [column.id]
  }
  index "run_details_run_key" {
    unique  = true
    columns = [column.run]
  }
}
table "run_steps" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "run" {
    null = false
    type = bigint
  }
  column "seq" {
    null = false
    type = bigint
  }
  column "node" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "kind" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "copy" {
    null    = false
    type    = bigint
    default = sql("-1")
  }
  column "start_time" {
    null = true
    type = timestamptz
  }
  column "duration_ns" {
    null    = false
    type    = bigint
    default = sql("-1")
  }
  column "outcome" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "error" {
    null    = false
    type    = text
    default = sql("''")
  }
  column "pause" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "approval_id" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "tokens_input" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "tokens_output" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "tokens_cached" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  column "tokens_total" {
    null    = false
    type    = bigint
    default = sql("0")
  }
  primary_key {
    columns = [column.id]
  }
  index "runstep_run_seq" {
    columns = [column.run, column.seq]
  }
}
table "sessions" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "user_id" {
    null = false
    type = varchar
  }
  column "csrf_hash" {
    null = false
    type = varchar
  }
  column "source" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "created_at" {
    null = false
    type = timestamptz
  }
  column "expires_at" {
    null = false
    type = timestamptz
  }
  column "ended_at" {
    null = true
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
  index "session_user_id" {
    columns = [column.user_id]
  }
}
table "settings" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "value" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "updated_at" {
    null = false
    type = timestamptz
  }
  column "updated_by" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  primary_key {
    columns = [column.id]
  }
}
table "signing_keys" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "private_key" {
    null = false
    type = bytea
  }
  column "created_at" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
}
table "tokens" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "kind" {
    null = false
    type = varchar
  }
  column "name" {
    null = false
    type = varchar
  }
  column "role" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "issued_at" {
    null = false
    type = timestamptz
  }
  column "expires_at" {
    null = false
    type = timestamptz
  }
  column "revoked_at" {
    null = true
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
  index "token_revoked_at" {
    columns = [column.revoked_at]
  }
}
table "users" {
  schema = schema.public
  column "id" {
    null = false
    type = varchar
  }
  column "email" {
    null = false
    type = varchar
  }
  column "name" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "role" {
    null = false
    type = varchar
  }
  column "password_hash" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "verify_hash" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "disabled" {
    null    = false
    type    = boolean
    default = sql("false")
  }
  column "setup_hash" {
    null    = false
    type    = varchar
    default = sql("''")
  }
  column "setup_expires_at" {
    null = true
    type = timestamptz
  }
  column "created_at" {
    null = false
    type = timestamptz
  }
  column "updated_at" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
  index "users_email_key" {
    unique  = true
    columns = [column.email]
  }
}
table "verifications" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "agent" {
    null = false
    type = varchar
  }
  column "email" {
    null = false
    type = varchar
  }
  column "user_id" {
    null = false
    type = varchar
  }
  column "at" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
  index "verification_agent_email" {
    unique  = true
    columns = [column.agent, column.email]
  }
}
table "votes" {
  schema = schema.public
  column "id" {
    null = false
    type = bigint
    identity {
      generated = BY_DEFAULT
    }
  }
  column "approval_id" {
    null = false
    type = varchar
  }
  column "person" {
    null = false
    type = varchar
  }
  column "reason" {
    null    = false
    type    = text
    default = sql("''")
  }
  column "at" {
    null = false
    type = timestamptz
  }
  primary_key {
    columns = [column.id]
  }
  index "vote_approval_id_person" {
    unique  = true
    columns = [column.approval_id, column.person]
  }
}
schema "public" {
}
