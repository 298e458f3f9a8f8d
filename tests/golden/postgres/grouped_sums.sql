SELECT
  0 AS "p",
  "q0" AS "a",
  "q1" AS "b",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q0",
  "q1"
UNION ALL
SELECT
  1 AS "p",
  "q0" AS "a",
  "q2" AS "b",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q0",
  "q2"
UNION ALL
SELECT
  2 AS "p",
  "q1" AS "a",
  "q2" AS "b",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q1",
  "q2";

SELECT
  0 AS "i",
  "q0" AS "code",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q0"
UNION ALL
SELECT
  1 AS "i",
  "q1" AS "code",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q1"
UNION ALL
SELECT
  2 AS "i",
  "q2" AS "code",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q2";

SELECT
  0 AS "p",
  "q2" AS "a",
  "q0" AS "b",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q2",
  "q0"
UNION ALL
SELECT
  1 AS "p",
  "q1" AS "a",
  "q2" AS "b",
  SUM("cnt") AS "n"
FROM "t"
GROUP BY
  "q1",
  "q2"
