"""SafePub: (epsilon, delta)-differential privacy by random sampling and generalization: the
parameters (beta, delta of k, the derived k). The sampling, the scores and the search are in
:mod:`sqlanon.search.lattice.safepub`.

(Bild, Kuhn, Prasser, "SafePub: A Truthful Data Anonymization Algorithm With Strong Privacy
Guarantees", PoPETs 2018(1):67-87), written from the paper and ARX's implementation
(``EDDifferentialPrivacy``, ``ParameterCalculationDouble``, ``DataDependentEDDPAlgorithm``,
``ExponentialMechanism`` and the metrics' ``getScore``).

The mechanism, for a total budget ``epsilon = epsilon_anon + epsilon_search`` and ``delta``:

1. **Sampling.** Every record is kept independently with probability
   ``beta = 1 - exp(-epsilon_anon)``. In SQL: ``u = hash(record, its copy number among identical
   records, seed) / 2^64`` and the record is kept when ``u < beta`` (a temp table in the database).
2. **Search.** Starting at the most general transformation, ``steps`` times: add the pivot's direct
   specializations to the candidates, drop the pivot, and draw the next pivot with the exponential
   mechanism (``P(x) ~ exp(0.5 * epsilon_search / steps * score(x))``, scores divided by their
   sensitivity). The output is the pivot with the best score (as the paper and ARX do).
3. **k-anonymization.** Every class of the chosen transformation smaller than ``k`` is suppressed
   (no budget: suppression is part of the mechanism), ``k`` being the smallest integer with
   ``delta >= d(k)``, ``d(k) = max_{n >= n_m} sum_{j > gamma n}^{n} C(n, j) beta^j (1 - beta)^{n-j}``,
   ``gamma = (e^epsilon_anon - 1 + beta) / e^epsilon_anon``, ``n_m = ceil(k / gamma - 1)`` (Li, Qardaji,
   Su, ASIACCS 2012, Theorem 5; SafePub Sec. 3). The maximum is taken up to the first n where the
   Chernoff bound ``c_n = exp(-n (gamma ln(gamma/beta) - (gamma - beta)))`` falls below it.
   (ARX's loop returns one more than this smallest k; we return the smallest.)

Guarantee (SafePub, Theorems 1-2 with sequential composition): steps 1 and 3 together are
``(epsilon_anon, delta)``-DP (Li et al.); each exponential-mechanism draw is
``epsilon_search / steps``-DP, so the draws together are ``epsilon_search``-DP; the whole release is
``(epsilon_anon + epsilon_search, delta)``-DP **as proved in the paper for its algorithm**, which
outputs the best-scoring pivot. ``safepub_output: last`` returns the last drawn pivot instead,
whose privacy follows from sequential composition alone without that argument. The guarantee
holds only when the seed is secret: with ``seed`` the run is reproducible (tests, benchmarks), and
whoever knows the seed knows the sample.

Score functions (higher is better, already divided by the sensitivity), with ``N`` input rows,
``S`` suppressed rows counting every row *not sampled*, ``k`` as above:

* ``precision`` (Sec. 5.1): ``-(sum_i [R * level_i/height_i + S]) / (d (k - 1))`` (``R`` released
  rows, ``d`` QIs; no division when k = 1);
* ``discernibility`` (Sec. 5.2): ``-(N S + sum over released classes of size^2) / (N (k^2/(k-1) + 1))``
  (``N * 5`` when k = 1);
* ``aecs`` (group size): released classes ``+ 1`` when any row is suppressed or not sampled.
"""

from __future__ import annotations

import math
import secrets

from sqlanon.errors import ConfigError
from sqlanon.privacy.keys import PolicyKey

SCORES = ("precision", "discernibility", "aecs")
DEFAULT_STEPS = 100
DEFAULT_SEARCH_SHARE = 0.1

#: SafePub's policy keys (of the privacy section)
KEYS = (
    PolicyKey("epsilon", float, help="SafePub (epsilon, delta)-differential privacy: total epsilon."),
    PolicyKey("delta", float, help="SafePub: delta."),
    PolicyKey("epsilon_search", float, help="SafePub: part of epsilon spent on choosing the generalization (default 10%)."),
    PolicyKey("safepub_steps", int, help="SafePub: steps of the exponential-mechanism search (default 100)."),
    PolicyKey("seed", int, help="SafePub: seed of its sampling."),
)


# ------------------------------------------------------------------------------------------------
# parameters


def beta(epsilon_anon: float) -> float:
    return 1.0 - math.exp(-epsilon_anon)


def _binom_tail(frm: int, n: int, b: float) -> float:
    """``sum_{j=frm}^{n} C(n, j) b^j (1-b)^{n-j}`` in log space."""
    if frm > n:
        return 0.0
    lb, l1b = math.log(b), math.log1p(-b)
    total = 0.0
    for j in range(max(frm, 0), n + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * lb + (n - j) * l1b)
    return total


def delta_of(k: int, epsilon_anon: float) -> float:
    """``d(k, beta, epsilon)`` of Li, Qardaji, Su: the delta that sampling with beta and suppressing
    classes below k guarantees."""
    b = beta(epsilon_anon)
    gamma = (math.exp(epsilon_anon) - 1.0 + b) / math.exp(epsilon_anon)
    n_m = math.ceil(k / gamma - 1.0)
    d, bound, n = -math.inf, math.inf, max(n_m, 0)
    while d < bound:
        d = max(d, _binom_tail(math.floor(n * gamma) + 1, n, b))
        bound = math.exp(-n * (gamma * math.log(gamma / b) - (gamma - b)))
        n += 1
    return d


def derive_k(epsilon_anon: float, delta: float, limit: int = 100_000) -> int:
    """The smallest k with ``d(k) <= delta``."""
    for k in range(1, limit + 1):
        if delta_of(k, epsilon_anon) <= delta:
            return k
    raise ConfigError(f"no k up to {limit} reaches delta={delta} with epsilon_anon={epsilon_anon}")


# ------------------------------------------------------------------------------------------------
# the derived parameters of a run


class Params:
    """The derived parameters of one run."""

    def __init__(self, policy) -> None:
        self.epsilon = float(policy.epsilon)
        self.delta = float(policy.delta)
        self.epsilon_search = float(policy.epsilon_search) if policy.epsilon_search is not None else DEFAULT_SEARCH_SHARE * self.epsilon
        self.epsilon_anon = self.epsilon - self.epsilon_search
        self.steps = int(policy.safepub_steps) if policy.safepub_steps is not None else DEFAULT_STEPS
        self.beta = beta(self.epsilon_anon)
        self.k = derive_k(self.epsilon_anon, self.delta)
        self.seeded = policy.seed is not None
        self.seed = int(policy.seed) if self.seeded else secrets.randbits(62)
        self.output = str(policy.search_options.get("safepub_output", "best"))
        self.input_rows = 0
        self.sample_rows = 0

    def describe(self) -> dict:
        return {
            "epsilon": self.epsilon, "delta": self.delta, "epsilon_anon": self.epsilon_anon, "epsilon_search": self.epsilon_search,
            "steps": self.steps, "beta": self.beta, "k": self.k, "input_rows": self.input_rows, "sample_rows": self.sample_rows,
            "seeded": self.seeded, "output": self.output,
        }
