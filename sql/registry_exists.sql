-- Does the registry table exist in this database?
SELECT COUNT(*) > 0 FROM information_schema.tables WHERE table_name = 'sqlanon_releases'
