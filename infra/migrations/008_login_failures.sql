-- Failed logins, per user (or unknown login string) and per client address,
-- counted here rather than in each process's memory so that every web
-- process throttles the same count (docs/api.md, "Security"). Unlogged: a
-- crash may forget recent failures, which costs an attacker nothing they
-- could not get by waiting, and saves a WAL write per failed login.
CREATE UNLOGGED TABLE login_failures (
  key text NOT NULL,
  at timestamptz NOT NULL
);
CREATE INDEX login_failures_key_at ON login_failures (key, at);
CREATE INDEX login_failures_at ON login_failures (at);
