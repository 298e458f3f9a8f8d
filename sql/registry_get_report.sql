-- The stored report of one release.
SELECT report FROM sqlanon_releases WHERE id = :id
