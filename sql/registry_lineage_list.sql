-- The lineage columns of every release (registries with incremental releases have them).
SELECT id, parent_id, lineage_root, batch_fingerprint, lineage
FROM sqlanon_releases
ORDER BY id DESC
