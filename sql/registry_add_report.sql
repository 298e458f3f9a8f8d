-- Registries made before reports were stored gain the column (a no-op on newer ones).
ALTER TABLE sqlanon_releases ADD COLUMN IF NOT EXISTS report VARCHAR
