"""CETR (Weninger et al. 2010): content extraction by tag ratios, on the project's blocks.

Used by the Dragnet seed system (cleaner/label/systems/dragnet.py). As a feature family of the CRF it was
measured within noise and removed (docs/ablation.md).
"""

from __future__ import annotations

import numpy as np


def gaussian_smooth(x: np.ndarray, sigma: float = 1.0) -> np.ndarray:
    if x.size == 0 or sigma <= 0:
        return x.astype(float)
    r = max(1, int(3 * sigma))
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)
    k /= k.sum()
    pad = np.pad(x.astype(float), r, mode="edge")
    return np.convolve(pad, k, mode="valid")


def kmeans_2d(points: np.ndarray, k: int = 3, iterations: int = 15) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic Lloyd's k-means: (assignment, centroids); initial centroids at quantiles of the norm."""
    n = len(points)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros((k, 2))
    order = np.argsort(np.linalg.norm(points, axis=1), kind="stable")
    cent = points[order[np.minimum((np.array([0.1, 0.5, 0.9])[:k] * n).astype(int), n - 1)]].astype(float)
    assign = np.zeros(n, dtype=np.int64)
    for _ in range(iterations):
        d = ((points[:, None, :] - cent[None, :, :]) ** 2).sum(axis=2)
        new = d.argmin(axis=1)
        if _ and np.array_equal(new, assign):
            break
        assign = new
        for c in range(k):
            m = assign == c
            if m.any():
                cent[c] = points[m].mean(axis=0)
    return assign, cent


def cetr(blocks, sigma: float = 1.0, alpha: int = 3) -> dict[str, np.ndarray]:
    """CETR (Weninger et al. 2010) on blocks instead of source lines.

    Tag ratio of a block = its characters / the tags opened or closed before it (1 when
    none); Gaussian-smoothed; the absolute derivative |mean(TR[i..i+alpha]) - TR[i]| of
    the smoothed ratio, smoothed again; and the k-means (k=3) prediction on the 2-D points
    (smoothed ratio, smoothed derivative): content unless in the cluster nearest the origin.
    """
    n = len(blocks)
    tr = np.empty(n)
    for i, b in enumerate(blocks):
        tags = sum(b.opened.values()) + sum(b.closed.values())
        tr[i] = len(b.text) / max(1, tags)
    tr = np.log1p(tr)
    s = gaussian_smooth(tr, sigma)
    if n:
        c = np.concatenate(([0.0], np.cumsum(s)))
        hi = np.minimum(np.arange(n) + alpha + 1, n)
        fwd = (c[hi] - c[np.arange(n)]) / (hi - np.arange(n))
        d = gaussian_smooth(np.abs(fwd - s), sigma)
    else:
        d = np.zeros(0)
    pts = np.stack([s, d], axis=1) if n else np.zeros((0, 2))
    scale = pts.std(axis=0) if n else np.ones(2)
    pts_n = pts / np.where(scale > 0, scale, 1.0)
    assign, cent = kmeans_2d(pts_n)
    noise = int(np.argmin(np.linalg.norm(cent, axis=1))) if n else 0
    return {"tr": tr, "tr_smooth": s, "dtr_smooth": d, "kmeans": (assign != noise).astype(float)}
