-- The partition watermark of every release that has one (a dbt incremental model's).
SELECT id, watermark FROM sqlanon_releases WHERE watermark IS NOT NULL
