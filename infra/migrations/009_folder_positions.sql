-- The next position in each folder, handed out by one short statement of its
-- own: creates in one folder no longer take turns on the folder's row for a
-- whole transaction (core/content/store.ts). Unlogged: after a crash the table
-- is empty, and each folder's counter starts again from its highest position.
CREATE UNLOGGED TABLE folder_positions (
  parent_uid uuid PRIMARY KEY,
  next integer NOT NULL
);
