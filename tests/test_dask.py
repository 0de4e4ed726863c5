"""Data-parallel gradients with Dask: per-shard gradients on worker processes sum to the whole gradient.

The recipe of docs/guide/parallel.rst, checked: a LocalCluster of two worker processes (one thread
each), started here; each shard's gradient computed on a worker with `grad` and with a
`compiled_grad` shipped there; the shards' gradients summed and compared with the gradient
of the whole dataset in this process.
"""
import logging
import os

import numpy as np
import pytest

import tapegrad

distributed = pytest.importorskip(
    "dask.distributed",
    reason="dask is not installed: pip install -e '.[dask]' (the test extra installs it)")


def test_sum_of_shard_gradients_equals_the_whole_gradient(rng):
    """grad and a shipped compiled_grad on two worker processes give the single-process gradient, summed."""
    X = rng.normal(size=(600, 4))
    y = np.tanh(X @ np.array([1.0, -2.0, 0.5, 0.0])) + 0.1 * rng.normal(size=600)
    params = {"w": rng.normal(size=4), "b": 0.3}

    def loss(params, X, y):  # a sum over samples, so the loss of the whole is the sum of the shards'
        return np.sum((np.tanh(X @ params["w"] + params["b"]) - y) ** 2)

    def shard_grad(shard, params):
        return os.getpid(), tapegrad.grad(loss, params, *shard)[1][1]

    def shard_compiled_grad(shard, params, g):
        _, (_, dparams, *_) = g(params, *shard)
        return os.getpid(), dparams, g.cache_info()

    whole_loss, (_, want, *_) = tapegrad.grad(loss, params, X, y)
    parts = [(X[i], y[i]) for i in np.array_split(np.arange(len(y)), 6)]
    g = tapegrad.compiled_grad(loss)
    g(params, *parts[0])  # an eager grad
    g(params, *parts[0])  # traced here, compiled as g is sent: the workers get the program and do not trace

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster) as client:
        shards = client.scatter(parts)
        plain = client.gather(client.map(shard_grad, shards, params=params))
        compiled = client.gather(client.map(shard_compiled_grad, shards, params=params, g=g))

    for results in (plain, compiled):
        assert {pid for pid, *_ in results} - {os.getpid()}, "the shards ran in worker processes"
        total = {"w": sum(r[1]["w"] for r in results), "b": sum(r[1]["b"] for r in results)}
        np.testing.assert_allclose(total["w"], want["w"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(total["b"], want["b"], rtol=1e-12, atol=1e-12)
        assert total["w"].shape == (4,) and isinstance(total["b"], float)
    # every shard has one signature, the one compiled in this process: no worker traced
    assert all(info["misses"] == 1 and info["hits"] >= 1 for *_, info in compiled)
