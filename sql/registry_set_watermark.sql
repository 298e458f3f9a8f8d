-- The partition watermark of one release: the partition column and the highest value of it among
-- the input rows the release covered (JSON); written with the release row, in its transaction.
UPDATE sqlanon_releases
SET watermark = :watermark
WHERE id = :id
