-- Binds tokens to the user record they were issued for (API.md §3): a token
-- carries its user's token_key, and the auth hook accepts it only while the
-- row still has that key. Every new row gets a new key (a deleted and
-- re-created user does not inherit old tokens), and a password change draws a
-- new one (plugins/app/users.ts), which ends all tokens of that user at once.
-- The default is volatile, so each existing row gets a key of its own.
ALTER TABLE users ADD COLUMN token_key text NOT NULL DEFAULT gen_random_uuid()::text;
