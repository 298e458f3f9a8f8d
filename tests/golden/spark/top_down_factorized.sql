WITH `p1` AS (
  SELECT
    `g0`,
    `g1`,
    `par`,
    SUM(`cnt`) AS `n`,
    MAX(1) AS `a`
  FROM (
    SELECT
      ARRAY(0, 1, 2)[`q0`] AS `g0`,
      ARRAY(0, 0, 1)[`q1`] AS `g1`,
      ARRAY(0, 0, 1)[`q0`] AS `par`,
      `cnt`
    FROM `sqlanon_td_base_N`
  ) AS `b`
  GROUP BY
    `g0`,
    `g1`,
    `par`
), `m0` AS (
  SELECT
    `c1`,
    `v1`
  FROM VALUES
    (0, 0),
    (0, 1),
    (1, 2) AS v(c1, v1)
), `i0` AS (
  SELECT
    `c1`,
    `w`
  FROM VALUES
    (0, 0) AS v(c1, w)
), `jk` AS (
  SELECT DISTINCT
    `g1`
  FROM `p1`
), `hist` AS (
  SELECT
    `jk`.`g1`,
    MIN(`r1`.`amin`) AS `amin`,
    SUM(`r1`.`n`) AS `nsum`
  FROM `jk`
  INNER JOIN `m0`
    ON `m0`.`c1` = `jk`.`g1`
  INNER JOIN `sqlanon_td_key0_N` AS `r1`
    ON `r1`.`j0` = `m0`.`v1`
  WHERE
    NOT EXISTS(
      SELECT
        1
      FROM `i0`
      WHERE
        `i0`.`c1` = `jk`.`g1` AND `i0`.`w` = `r1`.`j0`
    )
  GROUP BY
    `jk`.`g1`
), `xr` AS (
  SELECT
    `p`.`g0`,
    `p`.`g1`,
    `p`.`par`,
    `p`.`a` * `h`.`amin` AS `ay`,
    `p`.`n` * `h`.`nsum` AS `ax`
  FROM `p1` AS `p`
  INNER JOIN `hist` AS `h`
    ON `p`.`g1` = `h`.`g1`
)
SELECT
  `par`,
  MIN(`ay`) AS `ay`,
  SUM(`ax`) AS `ax`
FROM `xr`
GROUP BY
  `par`;

WITH `p1` AS (
  SELECT
    `g0`,
    `g1`,
    SUM(`cnt`) AS `n`,
    MAX(1) AS `a`
  FROM (
    SELECT
      ARRAY(0, 0, 1)[`q0`] AS `g0`,
      ARRAY(0, 0, 1)[`q1`] AS `g1`,
      `cnt`
    FROM `sqlanon_td_base_N`
  ) AS `b`
  GROUP BY
    `g0`,
    `g1`
), `m0` AS (
  SELECT
    `c1`,
    `v1`
  FROM VALUES
    (0, 0),
    (0, 1),
    (1, 2) AS v(c1, v1)
), `i0` AS (
  SELECT
    `c1`,
    `w`
  FROM VALUES
    (0, 0) AS v(c1, w)
), `jk` AS (
  SELECT DISTINCT
    `g1`
  FROM `p1`
), `hist` AS (
  SELECT
    `jk`.`g1`,
    MIN(`r1`.`amin`) AS `amin`,
    SUM(`r1`.`n`) AS `nsum`
  FROM `jk`
  INNER JOIN `m0`
    ON `m0`.`c1` = `jk`.`g1`
  INNER JOIN `sqlanon_td_key0_N` AS `r1`
    ON `r1`.`j0` = `m0`.`v1`
  WHERE
    NOT EXISTS(
      SELECT
        1
      FROM `i0`
      WHERE
        `i0`.`c1` = `jk`.`g1` AND `i0`.`w` = `r1`.`j0`
    )
  GROUP BY
    `jk`.`g1`
), `xr` AS (
  SELECT
    `p`.`g0`,
    `p`.`g1`,
    `p`.`a` * `h`.`amin` AS `ay`,
    `p`.`n` * `h`.`nsum` AS `ax`
  FROM `p1` AS `p`
  INNER JOIN `hist` AS `h`
    ON `p`.`g1` = `h`.`g1`
)
SELECT
  *
FROM (
  SELECT
    -1 AS `attr`,
    -1 AS `code`,
    MIN(`ay`) AS `ay`,
    SUM(`ax`) AS `ax`
  FROM `xr`
  UNION ALL
  SELECT
    0 AS `attr`,
    `g0` AS `code`,
    MIN(`ay`) AS `ay`,
    SUM(`ax`) AS `ax`
  FROM `xr`
  GROUP BY
    `g0`
) AS `u`
