WITH `anon` AS (
  SELECT
    `q0`,
    `q1`
  FROM `sqlanon_bu_vid_N`
  WHERE
    `cnt` = 1
)
SELECT DISTINCT
  0 AS `lvl`,
  `q0` AS `v`
FROM `anon`
UNION ALL
SELECT DISTINCT
  1 AS `lvl`,
  `q1` AS `v`
FROM `anon`;

WITH `anon` AS (
  SELECT
    `q0`,
    `q1`
  FROM `sqlanon_bu_vid_N`
  WHERE
    `cnt` = 1
), `heads1` AS (
  SELECT DISTINCT
    `q0`
  FROM `anon`
), `seg1` AS (
  SELECT
    COUNT(DISTINCT `v`.`q1`) AS `k`
  FROM `sqlanon_bu_vid_N` AS `v`
  INNER JOIN `heads1` AS `h`
    ON `v`.`q0` = `h`.`q0`
  WHERE
    `v`.`q1` IN (1, 2)
  GROUP BY
    `h`.`q0`
)
SELECT
  1 AS `lvl`,
  MIN(`k`) AS `min_k`,
  COUNT(*) AS `segments`
FROM `seg1`;

SELECT
  `cnt`,
  COUNT(*)
FROM `sqlanon_bu_vid_N`
WHERE
  `cnt` < 3
GROUP BY
  `cnt`
