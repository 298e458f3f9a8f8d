-- The release a re-run repeats: the first release recorded with the same release key (the same
-- model, policy, input rows and transformation); NULL when this is a new release.
SELECT MIN(id) FROM sqlanon_releases WHERE release_key = :release_key AND rerun_of IS NULL AND id <> :id
