-- Record one release; :placeholders are filled by sqlanon.registry (values, never identifiers).
-- The columns are named: columns added later (ensure(): ADD COLUMN IF NOT EXISTS) stay NULL here.
INSERT INTO sqlanon_releases (
  id, created_at, source, target, search, policy, transformation, privacy, metrics, rows,
  suppressed_rows, input_hash, sqlanon_version, report
)
SELECT
  COALESCE(MAX(id), 0) + 1, :created_at, :source, :target, :search, :policy, :transformation,
  :privacy, :metrics, :rows, :suppressed_rows, :input_hash, :sqlanon_version, :report
FROM sqlanon_releases
