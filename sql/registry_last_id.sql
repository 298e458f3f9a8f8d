-- The id of the newest release.
SELECT MAX(id) FROM sqlanon_releases
