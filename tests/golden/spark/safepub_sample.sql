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
