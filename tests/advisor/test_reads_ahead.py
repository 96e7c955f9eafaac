"""The analyses a rule declares it reads (``reads=``) are computed before the rules run: each
declared read must be one the rule really makes, with the same parameters (else the advisor
computes it for nothing, or twice), and the list is in the order the advisor reads them."""

from __future__ import annotations

import pytest

import profinsight
from profinsight.advisor import core
from profinsight.advisor.rules import RULES, Context
from profinsight.advisor.rules.base import Th


class _Recording(Context):
    """A Context that records every analysis a rule reads."""

    def __init__(self, profile):
        super().__init__(profile)
        self.read: list = []

    def view(self, name, **params):
        self.read.append((name, tuple(sorted(params.items()))))
        return super().view(name, **params)


@pytest.mark.parametrize(
    "rel", ["ascend_pt/text_level1", "kineto/gpu_alexnet.json.gz", "kineto/cpu_only.json.gz", "msprof"]
)
def test_every_declared_read_is_made_by_its_rule(fixtures, rel):
    path = fixtures / rel
    if rel == "msprof":
        path = next(p for p in sorted((fixtures / "msprof").iterdir()) if p.is_dir())
    p = profinsight.load(path)
    ths = core.thresholds_for(None)
    declared = 0
    for rid, r in RULES.items():
        ctx = _Recording(p)
        if r.ascend_only and not ctx.is_ascend:
            continue
        r.func(ctx, ths[rid])
        for name, params in r.reads_for(ths[rid]):
            declared += 1
            assert (name, tuple(sorted(params.items()))) in ctx.read, (rid, name, params, ctx.read)
    assert declared >= 7


def test_reads_ahead_are_each_read_once_longest_first_then_in_rule_order():
    run = list(RULES.items())
    ths = core.thresholds_for({"idle_gaps.min_gap_us": 80, "stream_sync.min_gap_us": 50})
    got = core.reads_ahead(run, ths, warm=(("op_summary", (("by", "type"),)), ("utilization", ())))
    assert got == [
        ("idle_gaps", {"min_us": 80.0}),  # the idle_gaps rule's threshold
        ("idle_gaps", {"min_us": 50.0}),  # stream_sync's: another parameter set, another read
        ("step_breakdown", {}),
        ("format_conversions", {}),
        ("utilization", {}),  # compute_bound's; the warm one is the same read
        ("launch_stats", {}),
        ("dataloader", {}),
        ("memory_peaks", {"top": 1}),
        ("op_summary", {"by": "type"}),
    ]
    # a profile without Ascend rules: only the rules that run are read for
    no_ascend = [(rid, r) for rid, r in run if not r.ascend_only]
    assert ("format_conversions", {}) not in core.reads_ahead(no_ascend, core.thresholds_for(None))


def test_a_threshold_parameter_is_passed_as_the_rule_passes_it():
    r = RULES["idle_gaps"]
    assert r.reads == (("idle_gaps", {"min_us": Th("min_gap_us")}),)
    assert r.reads_for({"min_gap_us": 120}) == [("idle_gaps", {"min_us": 120.0})]
    assert isinstance(r.reads_for({"min_gap_us": 120})[0][1]["min_us"], float)
