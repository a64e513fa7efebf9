-- Counters that requests advance never overflow (issue 22): a folder's
-- positions only grow, one a created object (core/content/positions.ts), and
-- an object's history one a transition. At 32 bits a Member creating and
-- deleting its own talks, or taking them through submit and retract, would end
-- them within weeks; at 64 bits, not in any site's lifetime.
ALTER TABLE folder_positions ALTER COLUMN next TYPE bigint;
ALTER TABLE content ALTER COLUMN position TYPE bigint;
ALTER TABLE workflow_history ALTER COLUMN seq TYPE bigint;
-- The catalogue's copy of the position (getObjPositionInParent, a `long` index
-- since this version): its columns are added at start (core/catalog/catalog.ts),
-- so a new database has none yet, and gets it as bigint then.
DO $$ BEGIN IF EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'catalog' AND column_name = 'getObjPositionInParent') THEN ALTER TABLE catalog ALTER COLUMN "getObjPositionInParent" TYPE bigint; END IF; END $$;
