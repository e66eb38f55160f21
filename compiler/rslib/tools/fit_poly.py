#!/usr/bin/python3
"""Derives the polynomial coefficients used in compiler/rslib/*.c (near-minimax, relative error).

Each approximation g(z) ~= sum_k c_k z^k on [lo, hi] is fitted by weighted least squares on Chebyshev nodes,
refined with Lawson iterations (reweighting by the error) towards the minimax solution, in float64 (the
targets are float32 results, so float64 fitting is ample). Run: /usr/bin/python3 fit_poly.py
"""
import numpy as np


def fit(name, target, lo, hi, degree, weight=None, iters=60):
    n = 4000
    z = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (np.arange(n) + 0.5) / n)
    y = target(z)
    w0 = np.ones_like(z) if weight is None else weight(z)
    A = np.vander(z, degree + 1, increasing=True)
    lw = np.ones_like(z) / n
    for _ in range(iters):
        sw = np.sqrt(lw) * w0
        c, *_ = np.linalg.lstsq(A * sw[:, None], y * sw, rcond=None)
        err = np.abs((A @ c - y) * w0)
        lw = lw * err
        lw /= lw.sum()
    err = np.max(np.abs((A @ c - y) * w0))
    print(f"/* {name}: degree {degree} on [{lo:.6g}, {hi:.6g}], max weighted error {err:.3e} */")
    print("  " + ", ".join(f"{v:.9e}f" if abs(v) > 0 else "0.0f" for v in c))
    return c


if __name__ == "__main__":
    t8 = np.tan(np.pi / 8) ** 2
    # atan(t) = t + t*z*P(z), z = t^2, |t| <= tan(pi/8); P fitted to (atan(t)-t)/(t z),
    # weighted by t*z/atan(t).
    fit("atan P(z)", lambda z: (np.arctan(np.sqrt(z)) - np.sqrt(z)) / (z * np.sqrt(z)), 1e-12, t8, 4,
        weight=lambda z: z * np.sqrt(z) / np.arctan(np.sqrt(z)))
    # asin(x) = x + x*z*P(z), z = x^2 <= 0.25
    fit("asin P(z)", lambda z: (np.arcsin(np.sqrt(z)) - np.sqrt(z)) / (z * np.sqrt(z)), 1e-12, 0.25, 5,
        weight=lambda z: z * np.sqrt(z) / np.arcsin(np.sqrt(z)))
    # exp(r) = 1 + r + r^2*Q(r), |r| <= ln2/2
    h = np.log(2) / 2
    fit("exp Q(r)", lambda r: (np.expm1(r) - r) / (r * r), -h, h, 4,
        weight=lambda r: r * r / np.exp(r))
    # exp2(r) = 1 + r*Q(r), |r| <= 1/2
    fit("exp2 Q(r)", lambda r: np.expm1(r * np.log(2)) / r, -0.5, 0.5, 5, weight=lambda r: r / np.exp2(r))
    # log(1+f) = f - s*(f - R(z)), s = f/(2+f), z = s^2, R(z) = z*(2/3 + ...), i.e. R = 2*atanh(s)/s - 2
    # R'(z) with R = z*R'(z): 2 atanh(s) = 2s + s*R  =>  R = 2 atanh(s)/s - 2
    s2 = (np.sqrt(2) - 1) / (np.sqrt(2) + 1)
    fit("log R'(z)", lambda z: (2 * np.arctanh(np.sqrt(z)) / np.sqrt(z) - 2) / z, 1e-12, s2 ** 2, 3,
        weight=lambda z: z * np.sqrt(z) / (2 * np.arctanh(np.sqrt(z))))
    # tanh(x) = x + x*z*P(z), z = x^2 <= 0.55^2
    fit("tanh P(z)", lambda z: (np.tanh(np.sqrt(z)) - np.sqrt(z)) / (z * np.sqrt(z)), 1e-12, 0.3025, 5,
        weight=lambda z: z * np.sqrt(z) / np.tanh(np.sqrt(z)))
    # native forms: lower degree
    fit("native atan P(z)", lambda z: (np.arctan(np.sqrt(z)) - np.sqrt(z)) / (z * np.sqrt(z)), 1e-12, t8, 2,
        weight=lambda z: z * np.sqrt(z) / np.arctan(np.sqrt(z)))
    fit("native exp2 Q(r)", lambda r: np.expm1(r * np.log(2)) / r, -0.5, 0.5, 3,
        weight=lambda r: r / np.exp2(r))
    fit("native log2 Q(f)", lambda f: np.log2(1 + f) / f, np.sqrt(0.5) - 1, np.sqrt(2) - 1, 5,
        weight=lambda f: f / np.log2(1 + f))
    fit("native sin S(z) on |r|<=pi/4", lambda z: (np.sin(np.sqrt(z)) - np.sqrt(z)) / (z * np.sqrt(z)), 1e-12,
        (np.pi / 4) ** 2, 2, weight=lambda z: z * np.sqrt(z) / np.sin(np.sqrt(z)))
    fit("native cos C(z) on |r|<=pi/4", lambda z: (np.cos(np.sqrt(z)) - 1 + z / 2) / (z * z), 1e-12,
        (np.pi / 4) ** 2, 2, weight=lambda z: z * z / np.cos(np.sqrt(z)))


def fit_erfc():
    """erfc(x) = t * exp(-x^2 + G(t)), t = 1/(1 + x/2), x >= 0.

    G is fitted in absolute error for t in [0.155, 1].
    """
    import math
    n = 3000
    t = 0.5 + 0.5 * np.cos(np.pi * (np.arange(n) + 0.5) / n)
    t = t[t > 0.155]  # x <= 10.9: beyond, erfc underflows every float
    x = 2.0 * (1.0 / t - 1.0)
    with np.errstate(divide="ignore"):
        g = np.array([math.log(math.erfc(v)) for v in x]) - np.log(t) + x * x
    for degree in (12, 14, 16):
        A = np.vander(t, degree + 1, increasing=True)
        lw = np.ones_like(t) / len(t)
        for _ in range(60):
            c, *_ = np.linalg.lstsq(A * np.sqrt(lw)[:, None], g * np.sqrt(lw), rcond=None)
            err = np.abs(A @ c - g)
            lw = lw * err
            lw /= lw.sum()
        print(f"/* erfc G(t): degree {degree}, max abs error {np.max(np.abs(A @ c - g)):.3e} */")
        print("  " + ", ".join(f"{v:.17g}" for v in c))


if __name__ == "__main__":
    fit_erfc()
    h10 = np.log10(2) / 2
    fit("exp10 Q(r)", lambda r: (10.0 ** r - 1) / r, -h10, h10, 5, weight=lambda r: r / 10.0 ** r)
    # float erf: erf(x) = x * P(x^2) for |x| < 1; erf(x) = 1 - exp(Q(x)) for 1 <= |x| < 4 (Q ~ log erfc)
    import math
    fit("erf P(z)", lambda z: np.array([math.erf(math.sqrt(v)) / math.sqrt(v) for v in z]), 1e-12, 1.0, 6,
        weight=lambda z: np.ones_like(z))
    fit("erf Q(u) = log(erfc(u + 2.5)), u in [-1.5, 1.5]",
        lambda u: np.array([math.log(math.erfc(v + 2.5)) for v in u]), -1.5, 1.5, 9)
