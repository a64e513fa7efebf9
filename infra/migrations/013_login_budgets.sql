-- Login throttling by budgets (docs/api.md, "Security"; core/security/throttle.ts): one row per
-- budget (an account, an unknown login string, a client address, a known device) instead of one
-- row per failure, so that a budget hammered a million times is still one row holding at most
-- its limit of timestamps. `failures` are the failed attempts still in the window, and the
-- attempts whose password is being checked (they count as failures until they succeed);
-- `last_failure` is the newest of them: once it has left the window, the row counts nothing
-- and is deleted. Unlogged, as 008's table was: a crash forgets recent failures, which gives an
-- attacker nothing that waiting would not. The failures counted under 008 are forgotten.
DROP TABLE login_failures;
CREATE UNLOGGED TABLE login_failures (
  key text PRIMARY KEY,
  failures timestamptz[] NOT NULL,
  last_failure timestamptz NOT NULL
);
CREATE INDEX login_failures_last_failure ON login_failures (last_failure);
