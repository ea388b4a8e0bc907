-- Rows of a store the release before versioned migrations made: its
-- schema is 1-schema.sql, the baseline migration, and it has no
-- revisions table. Never edit: the upgrade test reads these rows back
-- after migrating.
INSERT INTO agents (name, description, online, capabilities, runs_dropped, package_name, first_seen, last_seen) VALUES ('billing', 'pays the bills', true, '["chat","triggers"]', 3, 'billing-pkg', '2026-01-02 03:04:05+00', '2026-02-03 04:05:06+00');
INSERT INTO approvals (id, agent, run, node, show, account, digest, state, created_at, decided_at, reason) VALUES ('ap-1', 'billing', 'run-1', 'pay', 'Pay 40 EUR to ACME', 'acme', 'sha256:abc', 'approved', '2026-01-02 03:04:05+00', '2026-02-03 04:05:06+00', 'invoice matches');
INSERT INTO audit_entries (seq, at, actor, action, subject, detail, prev, hash) VALUES (1, '2026-01-02 03:04:05+00', 'user:ann', 'approval.decide', 'ap-1', '{"say":"approve"}', '', 'h1');
INSERT INTO rules (id, agent, node, role, people, quorum, time_limit, require_reason, description, created_at, updated_at, updated_by) VALUES ('r-1', 'billing', 'pay', 'finance', '["ann@example.com","bob@example.com"]', 2, 3600, true, 'two of finance', '2026-01-02 03:04:05+00', '2026-02-03 04:05:06+00', 'user:ann');
INSERT INTO users (id, email, name, role, password_hash, disabled, created_at, updated_at) VALUES ('u-1', 'ann@example.com', 'Ann', 'admin', 'argon2id$x', false, '2026-01-02 03:04:05+00', '2026-02-03 04:05:06+00');
