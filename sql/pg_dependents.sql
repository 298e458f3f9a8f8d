-- PostgreSQL: the objects that depend on a table (views, materialized views, foreign keys of
-- other tables), which keep DROP TABLE from running: named before --in-place replaces the table.
SELECT DISTINCT dep FROM (
  SELECT CAST(CAST(r.ev_class AS REGCLASS) AS TEXT) AS dep
  FROM pg_depend AS d JOIN pg_rewrite AS r ON r.oid = d.objid
  WHERE d.classid = CAST('pg_rewrite' AS REGCLASS) AND d.refobjid = CAST(:tbl AS REGCLASS) AND r.ev_class <> d.refobjid
  UNION ALL
  SELECT CAST(CAST(c.conrelid AS REGCLASS) AS TEXT) AS dep
  FROM pg_constraint AS c
  WHERE c.confrelid = CAST(:tbl AS REGCLASS) AND c.conrelid <> c.confrelid
) AS deps ORDER BY dep
