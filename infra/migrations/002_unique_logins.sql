-- Logins are matched case-insensitively by user id or e-mail: neither may be ambiguous.
CREATE UNIQUE INDEX users_login_id ON users (lower(id));
CREATE UNIQUE INDEX users_login_email ON users (lower(email));
