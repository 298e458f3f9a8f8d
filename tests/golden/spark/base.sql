-- golden SQL (spark): the source and the base frequency set: the base scan, class labels, grouped sums, pair counts, SafePub's sample
-- regenerate: SQLANON_UPDATE_GOLDEN=1 pytest tests/dialect/test_golden_sql.py

-- name: bad_class_labels
CACHE TABLE `sqlanon_bad` AS
WITH `gen` AS (
  SELECT
    `q0`,
    `q1`,
    SUM(`cnt`) AS `cnt`
  FROM (
    SELECT
      ARRAY(0, 0, 1)[`q0`] AS `q0`,
      ARRAY(0, 0, 1)[`q1`] AS `q1`,
      `cnt`
    FROM `sqlanon_fs0_N`
  ) AS `r`
  GROUP BY
    `q0`,
    `q1`
), `flagged` AS (
  SELECT
    *,
    `cnt` >= 3 AS `ok`
  FROM `gen`
)
SELECT
  ARRAY('[20, 40[', '[40, 60[')[`q0`] AS `q0`,
  ARRAY('130**', '148**')[`q1`] AS `q1`
FROM `flagged`
WHERE
  NOT `ok`

-- name: base_frequency_set
SELECT
  CASE WHEN `src`.`age` IS NULL THEN 3 ELSE COALESCE(`h0`.`code`, -1) END AS `q0`,
  CASE WHEN `src`.`zip` IS NULL THEN 3 ELSE COALESCE(`h1`.`code`, -1) END AS `q1`,
  `src`.`sqlanon_n` AS `cnt`
FROM (
  SELECT
    `src`.`age`,
    `src`.`zip`,
    COUNT(*) AS `sqlanon_n`
  FROM `source` AS `src`
  GROUP BY
    `src`.`age`,
    `src`.`zip`
) AS `src`
LEFT JOIN `sqlanon_h0_N` AS `h0`
  ON `h0`.`level_0` = CAST(`src`.`age` AS STRING)
LEFT JOIN `sqlanon_h1_N` AS `h1`
  ON `h1`.`level_0` = CAST(`src`.`zip` AS STRING)

-- name: grouped_pass
CACHE TABLE `sqlanon_grouped_N` AS
SELECT
  `src`.`age`,
  `src`.`zip`,
  COUNT(*) AS `sqlanon_n`
FROM `source` AS `src`
GROUP BY
  `src`.`age`,
  `src`.`zip`;

SELECT
  CASE WHEN `src`.`age` IS NULL THEN 3 ELSE COALESCE(`h0`.`code`, -1) END AS `q0`,
  CASE WHEN `src`.`zip` IS NULL THEN 3 ELSE COALESCE(`h1`.`code`, -1) END AS `q1`,
  `src`.`sqlanon_n` AS `cnt`
FROM `sqlanon_grouped_N` AS `src`
LEFT JOIN `sqlanon_h0_N` AS `h0`
  ON `h0`.`level_0` = CAST(`src`.`age` AS STRING)
LEFT JOIN `sqlanon_h1_N` AS `h1`
  ON `h1`.`level_0` = CAST(`src`.`zip` AS STRING)

-- name: grouped_sums
SELECT
  CASE GROUPING_ID(`q0`, `q1`, `q2`) WHEN 1 THEN 0 WHEN 2 THEN 1 WHEN 4 THEN 2 END AS `p`,
  CASE GROUPING_ID(`q0`, `q1`, `q2`)
    WHEN 1
    THEN `q0`
    WHEN 2
    THEN `q0`
    WHEN 4
    THEN `q1`
  END AS `a`,
  CASE GROUPING_ID(`q0`, `q1`, `q2`)
    WHEN 1
    THEN `q1`
    WHEN 2
    THEN `q2`
    WHEN 4
    THEN `q2`
  END AS `b`,
  SUM(`cnt`) AS `n`
FROM `t`
GROUP BY
  GROUPING SETS (
    (`q0`, `q1`),
    (`q0`, `q2`),
    (`q1`, `q2`)
  );

SELECT
  CASE GROUPING_ID(`q0`, `q1`, `q2`) WHEN 3 THEN 0 WHEN 5 THEN 1 WHEN 6 THEN 2 END AS `i`,
  CASE GROUPING_ID(`q0`, `q1`, `q2`)
    WHEN 3
    THEN `q0`
    WHEN 5
    THEN `q1`
    WHEN 6
    THEN `q2`
  END AS `code`,
  SUM(`cnt`) AS `n`
FROM `t`
GROUP BY
  GROUPING SETS (
    (`q0`),
    (`q1`),
    (`q2`)
  );

SELECT
  CASE GROUPING_ID(`q2`, `q0`, `q1`) WHEN 1 THEN 0 WHEN 2 THEN 1 END AS `p`,
  CASE GROUPING_ID(`q2`, `q0`, `q1`) WHEN 1 THEN `q2` WHEN 2 THEN `q1` END AS `a`,
  CASE GROUPING_ID(`q2`, `q0`, `q1`) WHEN 1 THEN `q0` WHEN 2 THEN `q2` END AS `b`,
  SUM(`cnt`) AS `n`
FROM `t`
GROUP BY
  GROUPING SETS (
    (`q2`, `q0`),
    (`q1`, `q2`)
  )

-- name: pair_counts
SELECT
  `q0`,
  `q1`,
  CAST(SUM(`cnt`) AS BIGINT) AS `n`
FROM `sqlanon_fs0_N`
GROUP BY
  GROUPING SETS (
    (`q0`, `q1`)
  )

-- name: safepub_sample
SELECT
  `n`.`age`,
  `n`.`zip`
FROM (
  SELECT
    `src`.`age`,
    `src`.`zip`,
    ROW_NUMBER() OVER (
      PARTITION BY `src`.`age`, `src`.`zip`
      ORDER BY `src`.`age` NULLS LAST, `src`.`zip` NULLS LAST
    ) AS `dup`
  FROM people AS `src`
) AS `n`
WHERE
  (
    CAST(XXHASH64(`n`.`age`, `n`.`zip`, `n`.`dup`, 5) AS DOUBLE) + 9.223372036854776e+18
  ) / 1.8446744073709552e+19 < 0.5934
