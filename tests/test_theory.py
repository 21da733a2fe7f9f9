"""The balls-into-bins models of ARCANE sec. 5 and App. B / D.1 (fabricsim.reproduce.theory)."""

from __future__ import annotations

import numpy as np
import pytest
from fabricsim.errors import ScenarioError
from fabricsim.reproduce import theory


def test_evs_imbalance_falls_with_more_evs_and_more_flows():
    small, mid, large = (theory.evs_imbalance(32, e, 32, trials=50).mean() for e in (16, 256, 65536))
    assert small > mid > large > 0
    assert theory.evs_imbalance(1, 256, 32, trials=50).mean() > 3 * mid
    # balls into bins: the imbalance is max / mean - 1 >= 0, and 0 only when every bin is equal
    assert (theory.evs_imbalance(4, 8, 32, trials=50) >= 0).all()


def test_the_packet_stage_sets_a_floor_and_more_switches_a_worse_maximum():
    one_stage = theory.evs_imbalance(8, 65536, 8, trials=50).mean()
    two_stage = theory.evs_imbalance(8, 65536, 8, trials=50, packets=2048).mean()
    assert two_stage > 3 * one_stage  # 2048 packets a flow: the multinomial spread dominates
    assert theory.evs_imbalance(8, 32, 8, trials=50, switches=16).mean() > theory.evs_imbalance(8, 32, 8, trials=50).mean()


def test_ops_queues_conserve_balls():
    n, rounds = 8, 500
    q = theory.ops_queues(n, rounds, lam=1.0, seed=3)
    # every step adds n balls and removes one from every bin that was non-empty
    for t in range(1, rounds):
        served = int((q[t - 1] > 0).sum())
        assert q[t].sum() == q[t - 1].sum() - served + n
    assert (theory.ops_queues(n, 50, seed=7) == theory.ops_queues(n, 50, seed=7)).all()


def test_recycled_balls_stay_bounded_where_ops_grows():
    rec = theory.recycled_queues(16, 4000, seed=2)
    ops = theory.ops_queues(16, 4000, seed=2)
    assert rec[2000:].max() < ops[2000:].max() / 3
    # a full load keeps the total constant once no bin is empty
    full = np.where((rec > 0).all(axis=1))[0]
    assert len(full) > 100
    # coalescing: fewer reports, more random throws, longer queues
    assert theory.recycled_queues(16, 4000, ack_ratio=8, seed=2)[2000:].max() > rec[2000:].max()


def test_bad_model_arguments_are_refused_with_the_field():
    with pytest.raises(ScenarioError, match="theory: ack_ratio"):
        theory.recycled_queues(8, 100, ack_ratio=0)
    with pytest.raises(ScenarioError, match="model"):
        theory.evaluate({"model": "nope"})
    with pytest.raises(ScenarioError, match="max_queue"):
        theory.evaluate({"model": "max_queue", "bins": 8})
    with pytest.raises(ScenarioError, match="theory: rounds"):
        theory.ops_queues(1000, 1_000_000)
    with pytest.raises(ScenarioError, match="theory: trials"):
        theory.evs_imbalance(1, 8, 1000, trials=100_000)
    with pytest.raises(ScenarioError, match="figure"):
        theory.figure({"figure": "nope"})


def test_every_model_figure_has_data():
    for spec in ({"figure": "ops_growth", "ns": [4, 8], "rounds": 300}, {"figure": "recycled", "rounds": 300, "ack_ratios": [1, 4]}):
        fig = theory.figure(spec)
        assert fig.series and all(len(s.x) == len(s.y) > 0 for s in fig.series)
    fig = theory.figure({"figure": "evs_imbalance", "flows": [1, 4], "bits": [2, 8], "trials": 10})
    assert [s.y[0] > s.y[1] for s in fig.series] == [True, True]
