"""The exponential mechanism (McSherry & Talwar, FOCS 2007), drawn exactly: no floating point
between the utilities and the choice.

A textbook implementation draws ``x`` with probability ``exp(epsilon u(x) / 2) / Z`` computed in
floating point. Rounding then makes the probabilities depend on the data in ways the proof does not
cover: a weight far below the largest underflows to exactly zero (a candidate possible on one
dataset becomes impossible on its neighbour, which no finite epsilon allows), and the sum ``Z``
absorbs small terms unevenly. Ilvento ("Implementing the Exponential Mechanism with Base-2
Differential Privacy", CCS 2020) shows such failures; ARX's ``ExponentialMechanismReliable``
avoids them with a rational base and big integers. This module avoids them without big powers, by
rejection sampling with an exact coin for ``exp(-gamma)``:

1. **Utilities are exact**: :class:`fractions.Fraction` or int, of sensitivity 1; epsilon is
   taken as the exact rational value of the float given.
2. **Propose** a candidate ``x`` uniformly (``randrange``: rejection sampling on random bits,
   exactly uniform) and **accept** it with probability ``exp(-gamma)``,
   ``gamma = epsilon / 2 * (max u - u(x)) >= 0``; otherwise propose again. The accepted candidate
   has probability exactly ``exp(epsilon u(x) / 2) / Z``.
3. **The coin** ``Bernoulli(exp(-gamma))`` is Canonne, Kamath & Steinke's (NeurIPS 2020, "The
   Discrete Gaussian for Differential Privacy", Algorithms 1-2): for ``gamma`` in ``[0, 1]``, draw
   ``Bernoulli(gamma / 1), Bernoulli(gamma / 2), ...`` until the first failure and answer whether
   the number of draws was odd; for ``gamma > 1``, ``floor(gamma)`` coins for ``exp(-1)`` and one
   for ``exp(-(gamma - floor(gamma)))`` must all succeed. Each ``Bernoulli(n / d)`` is
   ``randrange(d) < n``: only integers, only exact comparisons.

So the privacy of a draw is the textbook ``epsilon`` exactly, with no rounding of the utilities and
no approximation of ``e``. Cost: about ``m / sum_x exp(-gamma_x)`` proposals (at most ``m``, the
number of candidates, when one candidate dominates), each a few fraction operations.

What this does not cover: the random bits come from ``random.SystemRandom`` (the operating
system's generator) or, seeded, from ``random.Random`` (tests only: reproducible, not secret); the
number of proposals depends on the utilities, so whoever can time the process learns about them.

>>> import random
>>> from fractions import Fraction
>>> draw(random.Random(3), [Fraction(0), Fraction(-10**6)], 2.0)   # exp(-10^6) stays possible
0
"""

from __future__ import annotations

from fractions import Fraction
from collections.abc import Sequence


def bernoulli(rng, p: Fraction) -> bool:
    """``True`` with probability ``p`` (a fraction in ``[0, 1]``), exactly."""
    return rng.randrange(p.denominator) < p.numerator


def bernoulli_exp(rng, gamma: Fraction) -> bool:
    """``True`` with probability ``exp(-gamma)``, ``gamma >= 0`` rational, exactly (Canonne,
    Kamath, Steinke 2020, Algorithms 1-2)."""
    if gamma < 0:
        raise ValueError(f"bernoulli_exp needs gamma >= 0, got {gamma}")
    whole = gamma.numerator // gamma.denominator
    one = Fraction(1)
    for _ in range(whole):
        if not _bernoulli_exp_unit(rng, one):
            return False
    return _bernoulli_exp_unit(rng, gamma - whole)


def _bernoulli_exp_unit(rng, gamma: Fraction) -> bool:
    """``exp(-gamma)`` for ``gamma`` in ``[0, 1]``: draw ``Bernoulli(gamma / k)`` for
    ``k = 1, 2, ...`` until the first failure, at ``k = K``; answer ``K`` odd.
    ``P(K = k) = gamma^(k-1)/(k-1)! - gamma^k/k!``, whose sum over odd ``k`` is ``exp(-gamma)``."""
    k = 1
    while bernoulli(rng, gamma / k):
        k += 1
    return k % 2 == 1


def _exact(values: Sequence) -> list[Fraction]:
    out = []
    for u in values:
        if isinstance(u, float):
            raise TypeError("utilities must be exact (Fraction or int), not float")
        out.append(Fraction(u))
    return out


def draw(rng, utilities: Sequence, epsilon: float) -> int:
    """The index of the candidate drawn with probability ``exp(epsilon/2 * u) / Z``, exactly."""
    if not utilities:
        raise ValueError("the exponential mechanism needs at least one candidate")
    if not epsilon > 0 or epsilon == float("inf"):
        raise ValueError(f"the exponential mechanism needs a finite epsilon > 0, got {epsilon}")
    exact = _exact(utilities)
    top = max(exact)
    half = Fraction(epsilon) / 2
    gammas = [half * (top - u) for u in exact]
    while True:
        i = rng.randrange(len(gammas))
        if bernoulli_exp(rng, gammas[i]):
            return i
