"""Inference on a linear-chain CRF: the Viterbi labels and every block's label marginals, from a page's
(blocks, labels) state scores and the model's (labels, labels) transition weights.

This is the readable reference of `cleaner/label/compiled_chain.pyx`, the compiled inference that labels pages
(scripts/build_native.py builds it into cleaner/_native/label/). The two are written step for step alike and
compute every float in the same order with the same operations, so they agree to the last bit
(tests/test_chain.py); the reference runs only where no build is there (`cleaner --version` says which).

Both follow CRFsuite's own inference (crf1d_context.c, read for its order of operations), which trained the
models and labelled pages until stop 47, so that the labels are CRFsuite's and the marginals equal its to
rounding (1e-12 on the shared pages, tests/test_chain.py):

* Viterbi over the scores themselves: for each block and label j, the best predecessor i is the *first* i
  (in label order) with the highest `best[t-1][i] + trans[i][j]`; the path ends at the first label with the
  highest final score. Ties therefore go as CRFsuite's strict `<` sends them.
* Marginals by forward-backward over the exponentiated scores, each forward row scaled to sum 1 (scale
  factor c[t] = 1 / sum), the backward rows scaled by the same factors; P(y at t) = alpha[t][y] * beta[t][y]
  / c[t]. Sums run over labels in label order, as CRFsuite's vector loops do.
"""

from __future__ import annotations

import math


def viterbi(state: list[list[float]], trans: list[list[float]]) -> list[int]:
    """The best label sequence (label ids) for `state[t][y]` scores and `trans[i][j]` weights."""
    n = len(state)
    if n == 0:
        return []
    labels = len(trans)
    best = list(state[0])
    back: list[list[int]] = [[0] * labels]
    for t in range(1, n):
        row = state[t]
        cur = [0.0] * labels
        came = [0] * labels
        for j in range(labels):
            top = -math.inf
            arg = 0
            for i in range(labels):
                score = best[i] + trans[i][j]
                if top < score:
                    top = score
                    arg = i
            came[j] = arg
            cur[j] = top + row[j]
        back.append(came)
        best = cur
    top = -math.inf
    last = 0
    for i in range(labels):
        if top < best[i]:
            top = best[i]
            last = i
    path = [0] * n
    path[n - 1] = last
    for t in range(n - 1, 0, -1):
        last = back[t][last]
        path[t - 1] = last
    return path


def marginals(state: list[list[float]], trans: list[list[float]]) -> list[list[float]]:
    """P(label y at block t) for every block and label: rows of `len(trans)` probabilities."""
    n = len(state)
    if n == 0:
        return []
    labels = len(trans)
    exp_state = [[math.exp(s) for s in row] for row in state]
    exp_trans = [[math.exp(w) for w in row] for row in trans]
    # forward, each row scaled to sum 1
    alpha = [list(exp_state[0])]
    scale = [_scale(alpha[0])]
    for t in range(1, n):
        prev = alpha[t - 1]
        cur = [0.0] * labels
        for i in range(labels):
            a = prev[i]
            weights = exp_trans[i]
            for j in range(labels):
                cur[j] += a * weights[j]
        row = exp_state[t]
        for j in range(labels):
            cur[j] *= row[j]
        scale.append(_scale(cur))
        alpha.append(cur)
    # backward, scaled by the forward rows' factors
    beta = [[0.0] * labels for _ in range(n)]
    beta[n - 1] = [scale[n - 1]] * labels
    for t in range(n - 2, -1, -1):
        nxt = beta[t + 1]
        row = exp_state[t + 1]
        carried = [nxt[j] * row[j] for j in range(labels)]
        cur = beta[t]
        for i in range(labels):
            weights = exp_trans[i]
            total = 0.0
            for j in range(labels):
                total += weights[j] * carried[j]
            cur[i] = total * scale[t]
    return [[alpha[t][y] * beta[t][y] / scale[t] for y in range(labels)] for t in range(n)]


def _scale(row: list[float]) -> float:
    """Scale `row` in place to sum 1 and return the factor (1 for a row that sums to 0)."""
    total = 0.0
    for x in row:
        total += x
    factor = 1.0 / total if total != 0.0 else 1.0
    for j in range(len(row)):
        row[j] *= factor
    return factor
