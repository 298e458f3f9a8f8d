"""Population uniqueness: how many records of the *population* are unique on the quasi-identifiers,
estimated from the class-size histogram of a sample (the table) and the sampling fraction.

Everything here works on the histogram ``{class size: number of classes}`` that SQL returns
(:mod:`sqlanon.risk.measure`); it is a few hundred numbers at most, never rows.

Models (the ones ARX offers; definitions read in ARX's ``org.deidentifier.arx.risk`` and the papers,
written here from the equations):

* **Zayatz** (1991): the share of sample uniques that are population uniques is
  ``P(1|1) f1/u / sum_i P(1|i) f_i/u`` with ``P(1|i)`` the hypergeometric probability of drawing
  exactly one record of a class of size ``i`` in a sample of ``n`` from ``N`` (sample class sizes
  stand in for population class sizes, as in ARX); population uniques = ``f1 * share / pi``.
* **Pitman** (Hoshino 2001): maximum-likelihood ``(theta, alpha)`` of the Pitman sampling formula
  for the observed histogram; population uniques = ``Gamma(theta+1) / Gamma(theta+alpha) * N**alpha``.
* **SNB** (Chen & Keller-McNulty 1998): population class sizes ``1 + NB(alpha, beta)``, sample class
  sizes binomial thinning with ``pi``; ``K`` (non-empty population classes) by the Shlosser-type
  estimator of Haas & Stokes (1998); ``alpha, beta`` by matching the expected numbers of sample
  classes of size 1 and 2; population uniques = ``K * beta**alpha``.
* **Dankar et al.** (2012) decision rule: ``pi <= 0.1``: Pitman (Zayatz when Pitman fails);
  otherwise the smaller of Zayatz and SNB (Zayatz when SNB fails).

>>> r = population_uniqueness({1: 10, 2: 5, 3: 5}, 0.1)
>>> r["model"], r["sample_uniques"], round(r["population_size"])  # Pitman has no estimate here: Zayatz
('zayatz', 10, 350)
>>> r["estimates"]["pitman"] is None
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping

# ---------------------------------------------------------------------------------------------
# special functions (no SciPy): digamma and trigamma by recurrence + asymptotic series


def digamma(x: float) -> float:
    if x <= 0 and float(x).is_integer():
        return math.nan
    if x < 0:  # reflection
        return digamma(1 - x) - math.pi / math.tan(math.pi * x)
    acc = 0.0
    while x < 10:
        acc -= 1 / x
        x += 1
    inv = 1 / x
    inv2 = inv * inv
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132)))))
    return acc + math.log(x) - 0.5 * inv - series


def trigamma(x: float) -> float:
    if x <= 0 and float(x).is_integer():
        return math.nan
    if x < 0:
        return -trigamma(1 - x) + (math.pi / math.sin(math.pi * x)) ** 2
    acc = 0.0
    while x < 10:
        acc += 1 / (x * x)
        x += 1
    inv = 1 / x
    inv2 = inv * inv
    series = inv + inv2 / 2 + inv * inv2 * (1 / 6 - inv2 * (1 / 30 - inv2 * (1 / 42 - inv2 * (1 / 30))))
    return acc + series


def _hypergeom_one(population: float, successes: int, draws: float) -> float:
    """P(X = 1) for X ~ Hypergeometric(N, K, n): ``K * C(N-K, n-1) / C(N, n)`` (in logs)."""
    N, K, n = population, successes, draws
    if K < 1 or n < 1 or N - K < n - 1:
        return 0.0
    lg = math.lgamma
    log_c = lambda a, b: lg(a + 1) - lg(b + 1) - lg(a - b + 1)  # noqa: E731
    return math.exp(math.log(K) + log_c(N - K, n - 1) - log_c(N, n))


# ---------------------------------------------------------------------------------------------
# the models


def zayatz(hist: Mapping[int, int], n: float, N: float) -> float:
    """Estimated number of population uniques (Zayatz 1991, as ARX computes it)."""
    f1 = hist.get(1, 0)
    if not f1:
        return 0.0
    u = sum(hist.values())
    total = sum(count / u * _hypergeom_one(N, size, n) for size, count in hist.items())
    if total <= 0:
        return math.nan
    share = (f1 / u) * _hypergeom_one(N, 1, n) / total
    return f1 * share / (n / N)


def pitman_parameters(hist: Mapping[int, int], n: float, tol: float = 1e-10, max_iter: int = 300) -> tuple[float, float]:
    """ML estimates ``(theta, alpha)`` of the Pitman sampling formula by Newton-Raphson on the
    score equations (closed forms with digamma/trigamma); ``(nan, nan)`` when it does not converge."""
    u = float(sum(hist.values()))
    c1 = float(hist.get(1, 0))
    c2 = float(hist.get(2, 0)) or 1.0
    # starting point: ARX's moment-style guess (Hoshino)
    c = c1 * (c1 - 1) / c2
    denom = 2 * c1 * u + c1 * c - n * c
    theta = (n * u * c - c1 * (n - 1) * (2 * u + c)) / denom if denom else 1.0
    alpha = (theta * (c1 - n) + (n - 1) * c1) / (n * u)
    if not (math.isfinite(theta) and theta > 0):
        theta = 1.0
    if not (math.isfinite(alpha) and 0 < alpha < 1):
        alpha = 0.5
    sizes = [(s, k) for s, k in hist.items() if s > 1]
    for _ in range(max_iter):
        r = theta / alpha
        o1 = (digamma(r + u) - digamma(r + 1)) / alpha  # sum_{i<u} 1/(theta+i alpha)
        d1 = (trigamma(r + 1) - trigamma(r + u)) / (alpha * alpha)  # sum 1/(theta+i alpha)^2
        o3 = ((u - 1) - theta * o1) / alpha  # sum i/(theta+i alpha)
        d5 = (o1 - theta * d1) / alpha  # sum i/(theta+i alpha)^2
        d3 = ((u - 1) - 2 * theta * o1 + theta * theta * d1) / (alpha * alpha)  # sum i^2/(..)^2
        o2 = digamma(theta + n) - digamma(theta + 1)  # sum_{i<n} 1/(theta+i)
        d2 = trigamma(theta + 1) - trigamma(theta + n)
        o4 = sum(k * (digamma(s - alpha) - digamma(1 - alpha)) for s, k in sizes)  # sum_j sum_{l<f_j} 1/(l-alpha)
        d4 = sum(k * (trigamma(1 - alpha) - trigamma(s - alpha)) for s, k in sizes)
        g = (o1 - o2, o3 - o4)  # score
        h11, h12, h22 = d2 - d1, -d5, -d3 - d4  # Hessian of the log-likelihood
        det = h11 * h22 - h12 * h12
        if not math.isfinite(det) or det == 0:
            return math.nan, math.nan
        dt = (h22 * g[0] - h12 * g[1]) / det
        da = (h11 * g[1] - h12 * g[0]) / det
        step = 1.0
        while step > 1e-6 and not (theta - step * dt > 0 and 0 < alpha - step * da < 1):
            step /= 2
        theta, alpha = theta - step * dt, alpha - step * da
        if theta > 1e12:  # the likelihood grows without bound in theta: no estimate
            return math.nan, math.nan
        if abs(g[0]) < tol * max(1.0, abs(o1)) and abs(g[1]) < tol * max(1.0, abs(o3)):
            return theta, alpha
    return math.nan, math.nan


def pitman(hist: Mapping[int, int], n: float, N: float) -> float:
    """Estimated number of population uniques under the Pitman model (Hoshino 2001)."""
    if not hist.get(1, 0):
        return 0.0
    theta, alpha = pitman_parameters(hist, n)
    if not (math.isfinite(theta) and math.isfinite(alpha)) or alpha == 0:
        return math.nan
    try:
        value = math.exp(math.lgamma(theta + 1) - math.lgamma(theta + alpha) + alpha * math.log(N))
    except (ValueError, OverflowError):
        return math.nan
    return value if 0 <= value <= N else math.nan


def shlosser_classes(hist: Mapping[int, int], pi: float) -> float:
    """Estimated number of non-empty population classes (Haas & Stokes 1998, Shlosser type)."""
    u = sum(hist.values())
    f1 = hist.get(1, 0)
    q = pi
    num1 = sum(i * q * q * (1 - q * q) ** (i - 1) * f for i, f in hist.items())
    den1 = sum(((1 + q) ** i - 1) * (1 - q) ** i * f for i, f in hist.items())
    num2 = sum((1 - q) ** i * f for i, f in hist.items())
    den2 = sum(i * q * (1 - q) ** (i - 1) * f for i, f in hist.items())
    if den1 <= 0 or den2 <= 0:
        return float(u)
    return u + f1 * (num1 / den1) * (num2 / den2) ** 2


def snb_expected(K: float, pi: float, a: float, b: float) -> tuple[float, float]:
    """Expected numbers of sample classes of size 1 and 2 under the SNB model: population class
    sizes ``1 + NB(a, b)``, each record sampled with probability ``pi`` (derived from the
    probability generating function ``(1-pi+pi t) (b / (1 - (1-b)(1-pi+pi t)))**a``)."""
    d = (1 - pi) * (1 - b)
    e1 = K * pi * (b / (1 - d)) ** a * (1 + a * d / (1 - d))
    e2 = K * a * b**a * pi * pi * (1 - b) / 2 * (2 - (1 - a) * d) / (1 - d) ** (a + 2)
    return e1, e2


def snb_parameters(hist: Mapping[int, int], pi: float) -> tuple[float, float, float]:
    """``(K, alpha, beta)`` of the SNB model; ``alpha, beta`` solve ``E[c1] = f1, E[c2] = f2`` by
    Newton's method on ``(log alpha, logit beta)`` from a few starts; nan when no start converges."""
    f1, f2 = float(hist.get(1, 0)), float(hist.get(2, 0))
    K = shlosser_classes(hist, pi)
    if f1 <= 0 or f2 <= 0:
        return K, math.nan, math.nan

    def resid(x: float, y: float) -> tuple[float, float]:
        a, b = math.exp(x), 1 / (1 + math.exp(-y))
        e1, e2 = snb_expected(K, pi, a, b)
        return math.log(e1 / f1), math.log(e2 / f2)

    for x0 in (0.0, -2.0, 2.0, -4.0):
        for y0 in (0.0, -3.0, 3.0, -6.0):
            x, y = x0, y0
            try:
                for _ in range(200):
                    r = resid(x, y)
                    if abs(r[0]) < 1e-12 and abs(r[1]) < 1e-12:
                        break
                    h = 1e-7
                    rx, ry = resid(x + h, y), resid(x, y + h)
                    j11, j21 = (rx[0] - r[0]) / h, (rx[1] - r[1]) / h
                    j12, j22 = (ry[0] - r[0]) / h, (ry[1] - r[1]) / h
                    det = j11 * j22 - j12 * j21
                    if det == 0 or not math.isfinite(det):
                        break
                    dx, dy = (j22 * r[0] - j12 * r[1]) / det, (j11 * r[1] - j21 * r[0]) / det
                    scale = min(1.0, 2.0 / max(abs(dx), abs(dy), 1e-300))
                    x, y = x - scale * dx, y - scale * dy
                r = resid(x, y)
                if abs(r[0]) < 1e-9 and abs(r[1]) < 1e-9:
                    return K, math.exp(x), 1 / (1 + math.exp(-y))
            except (ValueError, OverflowError, ZeroDivisionError):
                continue
    return K, math.nan, math.nan


def snb(hist: Mapping[int, int], n: float, N: float) -> float:
    """Estimated number of population uniques under the SNB model: ``K * beta**alpha``."""
    if not hist.get(1, 0):
        return 0.0
    K, a, b = snb_parameters(hist, n / N)
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.nan
    value = K * b**a
    return value if 0 <= value <= N else math.nan


def _valid(x: float) -> bool:
    return math.isfinite(x) and x != 0


def dankar(hist: Mapping[int, int], n: float, N: float, estimates: dict | None = None) -> tuple[float, str]:
    """Dankar et al.'s decision rule: ``(population uniques, model chosen)``."""
    est = estimates if estimates is not None else {}
    get = lambda name, fn: est.setdefault(name, fn(hist, n, N))  # noqa: E731
    if not hist.get(1, 0):
        return 0.0, "none (no sample uniques)"
    if n / N <= 0.1:
        p = get("pitman", pitman)
        if _valid(p):
            return p, "pitman"
        return get("zayatz", zayatz), "zayatz"
    s, z = get("snb", snb), get("zayatz", zayatz)
    if _valid(s):
        return (z, "zayatz") if z < s else (s, "snb")
    return z, "zayatz"


def population_uniqueness(hist: Mapping[int, int], fraction: float) -> dict:
    """All estimates for a sample with class-size histogram ``hist`` drawn with sampling fraction
    ``fraction`` (0 < fraction <= 1) from a population of ``n / fraction`` records."""
    hist = {int(s): int(c) for s, c in hist.items() if c}
    n = float(sum(s * c for s, c in hist.items()))
    N = n / fraction
    out: dict = {"sampling_fraction": fraction, "sample_size": int(n), "population_size": N, "sample_uniques": hist.get(1, 0)}
    if n == 0:
        out.update(model=None, uniques=0.0, fraction=0.0, estimates={})
        return out
    if fraction >= 1:  # the table is the population: its uniques are the population uniques
        u = float(hist.get(1, 0))
        out.update(model="census", uniques=u, fraction=u / N, estimates={"pitman": None, "zayatz": None, "snb": None})
        return out
    estimates: dict = {}
    value, model = dankar(hist, n, N, estimates)
    for name, fn in (("pitman", pitman), ("zayatz", zayatz), ("snb", snb)):
        estimates.setdefault(name, fn(hist, n, N))
    out["model"] = model
    out["uniques"] = value if math.isfinite(value) else None
    out["fraction"] = value / N if math.isfinite(value) else None
    out["estimates"] = {name: ({"uniques": v, "fraction": v / N} if math.isfinite(v) else None) for name, v in estimates.items()}
    return out
