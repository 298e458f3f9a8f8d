SELECT
  2 AS `q0`,
  `q1`,
  CAST(SUM(`y0`) AS BIGINT) AS `y0`,
  CAST(SUM(`y1`) AS BIGINT) AS `y1`,
  CAST(SUM(`cnt`) AS BIGINT) AS `cnt`
FROM `sqlanon_bu_vid_N`
WHERE
  `q0` IN (0, 1)
GROUP BY
  `q1`;

SELECT
  `kind`,
  `cnt`,
  COUNT(*) AS `n`
FROM (
  SELECT
    'o' AS `kind`,
    CASE WHEN `cnt` < 3 THEN `cnt` ELSE 3 END AS `cnt`
  FROM `sqlanon_bu_vid_N`
  WHERE
    `q0` IN (0, 1)
  UNION ALL
  SELECT
    'n',
    CASE WHEN `cnt` < 3 THEN `cnt` ELSE 3 END AS `cnt`
  FROM (
    SELECT
      CAST(SUM(`cnt`) AS BIGINT) AS `cnt`
    FROM `sqlanon_bu_vid_N`
    WHERE
      `q0` IN (0, 1)
    GROUP BY
      `q1`
  ) AS `m`
) AS `g`
GROUP BY
  `kind`,
  `cnt`;

SELECT
  `kind`,
  `cnt`,
  COUNT(*) AS `n`
FROM (
  SELECT
    'o' AS `kind`,
    CASE WHEN `cnt` < 3 THEN `cnt` ELSE 3 END AS `cnt`
  FROM `sqlanon_bu_vid_N`
  WHERE
    `q0` IN (0, 1)
  UNION ALL
  SELECT
    'n',
    CASE WHEN `cnt` < 3 THEN `cnt` ELSE 3 END AS `cnt`
  FROM `sqlanon_bu_vid_N`
  WHERE
    `q0` = 2
) AS `g`
GROUP BY
  `kind`,
  `cnt`
