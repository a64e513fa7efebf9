-- The member properties plone.restapi's @users carries (and Volto's user
-- forms send): a biography, a home page, a location.
ALTER TABLE users ADD COLUMN IF NOT EXISTS description text;
ALTER TABLE users ADD COLUMN IF NOT EXISTS home_page text;
ALTER TABLE users ADD COLUMN IF NOT EXISTS location text;
