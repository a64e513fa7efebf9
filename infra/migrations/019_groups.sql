-- Groups of users (Plone's portal_groups), with global roles their members
-- hold, and Plone's blocking of acquired local roles (`__ac_local_roles_block__`)
-- on content. Group ids and user ids share one namespace of principals: both
-- are `user:<id>` in local roles and allowedRolesAndUsers, as in Plone.
ALTER TABLE content ADD COLUMN IF NOT EXISTS local_roles_block boolean NOT NULL DEFAULT false;

CREATE TABLE groups (
  id text PRIMARY KEY,
  title text NOT NULL DEFAULT '',
  description text NOT NULL DEFAULT '',
  email text NOT NULL DEFAULT '',
  roles text[] NOT NULL DEFAULT '{}',
  created timestamptz NOT NULL DEFAULT now()
);

-- Members are users only (nested groups are not kept); a deleted user or group leaves its groups.
CREATE TABLE group_members (
  group_id text NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
  user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  PRIMARY KEY (group_id, user_id)
);
CREATE INDEX group_members_user ON group_members (user_id);

-- The groups a Plone site is created with (AuthenticatedUsers is virtual: every logged-in user).
INSERT INTO groups (id, title, roles) VALUES
  ('Administrators', 'Administrators', '{Manager}'),
  ('Site Administrators', 'Site Administrators', '{Site Administrator}'),
  ('Reviewers', 'Reviewers', '{Reviewer}')
ON CONFLICT (id) DO NOTHING;
