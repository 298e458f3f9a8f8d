-- An incremental release's lineage (sqlanon.release.lineage): its parent, the lineage's first
-- release, the batch's fingerprint and its figures (JSON).
UPDATE sqlanon_releases
SET parent_id = :parent_id, lineage_root = :lineage_root, batch_fingerprint = :batch_fingerprint, lineage = :lineage
WHERE id = :id
