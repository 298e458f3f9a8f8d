SELECT
  "c0",
  "c1",
  "c2",
  SUM("cnt") AS "sup",
  MIN("c0") <> MAX("c0") AS "d0",
  MIN("c1") <> MAX("c1") AS "d1",
  MIN("c2") <> MAX("c2") AS "d2"
FROM "sqlanon_gen_fs_N"
GROUP BY
  GROUPING SETS (
    ("c0", "c1"),
    ("c0", "c2"),
    ("c1", "c2")
  )
HAVING
  SUM("cnt") >= 2;

SELECT
  "c0",
  "c1",
  "c2",
  SUM("cnt") AS "sup"
FROM "sqlanon_gen_fs_N"
GROUP BY
  GROUPING SETS (
    ("c0"),
    ("c1"),
    ("c2")
  )
HAVING
  SUM("cnt") >= 2
