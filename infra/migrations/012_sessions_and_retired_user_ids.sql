-- Revocation names the session a token carries (its `jti` claim), not the
-- token's text: a verifier accepts several spellings of one signed token, and
-- a logout must end all of them (core/security/sessions.ts). Kept until the
-- session's token would have expired anyway.
CREATE TABLE revoked_sessions (
  jti text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);
-- The tokens revoked so far are known only by a hash of their text, which
-- names no session. While any of them has yet to expire, every user's sessions
-- end (a new token_key each): everyone logs in once more, and no logged-out
-- token comes back.
UPDATE users SET token_key = gen_random_uuid()::text
  WHERE EXISTS (SELECT 1 FROM revoked_tokens WHERE expires_at > now());
DROP TABLE revoked_tokens;

-- A user id, once used, is never given to another user: ownership and local
-- roles name it (docs/api.md, "Security"). Deleting a user retires its id, in
-- the transaction of the delete; ids are compared as logins are, ignoring case.
-- Which ids were deleted before this migration, nothing records.
CREATE TABLE retired_user_ids (
  login_key text PRIMARY KEY,
  retired timestamptz NOT NULL DEFAULT now()
);
