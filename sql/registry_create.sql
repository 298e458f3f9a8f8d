-- The release registry: one row per release written by sqlanon (fixed shape).
CREATE TABLE IF NOT EXISTS sqlanon_releases (
  id INTEGER,
  created_at VARCHAR,
  source VARCHAR,
  target VARCHAR,
  search VARCHAR,
  policy VARCHAR,
  transformation VARCHAR,
  privacy VARCHAR,
  metrics VARCHAR,
  rows BIGINT,
  suppressed_rows BIGINT,
  input_hash VARCHAR,
  sqlanon_version VARCHAR,
  report VARCHAR
)
