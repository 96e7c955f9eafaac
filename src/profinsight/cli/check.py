"""Performance budgets for CI: compare RUN with --baseline and exit 1 when a budget is exceeded.

  profinsight check RUN --baseline BASE --max-step-regression 5%
  profinsight check RUN --max-op-share MatMul=0.4 --max-op-share Transpose=5%

RUN and BASE are profile paths or registered experiment names.  The step time is the mean
device step (``step_us``), or the host step (``host_step_us``) for traces without device
activity.  An op share is the operator type's share of compute time (``op_summary(by="type")``).
Exit codes: 0 within budget, 1 a budget exceeded, 2 bad input."""

from __future__ import annotations

import argparse

from ..errors import ProfileError
from ..i18n import resolve_lang, t
from .common import add_output, add_paths, dumps, emit, load_profile, output_format

HELP = "exit 1 when RUN exceeds a budget (step regression vs --baseline, op shares)"
FORMATS = ["table", "json"]


def add_arguments(p) -> None:
    add_paths(p)
    p.add_argument("--baseline", metavar="BASE", help="baseline run: a profile path or an experiment name")
    p.add_argument(
        "--max-step-regression",
        metavar="PCT",
        help="allowed step-time increase over the baseline: '5%%' or a fraction '0.05'",
    )
    p.add_argument(
        "--max-op-share",
        metavar="TYPE=SHARE",
        action="append",
        default=[],
        help="allowed share of compute time of an operator type: 'MatMul=0.2' or 'MatMul=20%%' (repeatable)",
    )
    add_output(p, FORMATS)
    p.add_argument("--lang", choices=["en", "zh"], help="language of the messages (default: from the locale)")


def parse_fraction(text: str, what: str) -> float:
    t = str(text).strip()
    try:
        value = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        raise ProfileError(f"bad {what} {text!r}", fix="write a percentage like 5% or a fraction like 0.05") from None
    if value < 0:
        raise ProfileError(f"bad {what} {text!r}: must not be negative")
    return value


def _op_budgets(items) -> list[tuple[str, float]]:
    out = []
    for item in items:
        kind, sep, share = item.rpartition("=")
        if not sep or not kind:
            raise ProfileError(f"bad --max-op-share {item!r}", fix="write TYPE=SHARE, e.g. MatMul=0.2")
        out.append((kind, parse_fraction(share, "--max-op-share")))
    return out


def _load(path_args, prefer):
    ns = argparse.Namespace(paths=path_args, sample=False, prefer=prefer)
    return load_profile(ns)


def evaluate(run_prof, base_prof, max_step_regression, op_budgets, lang: str | None = None) -> list[dict]:
    """One result per budget: {budget, limit, value, ok, message}; the words in ``lang``."""
    from ..collection.registry import mean_step

    results = []
    if max_step_regression is not None:
        if base_prof is None:
            raise ProfileError("--max-step-regression needs --baseline")
        run_step, run_src = mean_step(run_prof)
        base_step, base_src = mean_step(base_prof)
        if run_step is None or base_step is None:
            raise ProfileError(
                "no step times to compare (neither device steps nor ProfilerStep# spans)",
                fix="profile with a schedule and call prof.step() / run.step() every step",
            )
        if run_src != base_src:
            raise ProfileError(
                f"cannot compare {run_src} of the run with {base_src} of the baseline",
                fix="compare runs of the same kind (both with device activity, or both host-only)",
            )
        change = run_step / base_step - 1 if base_step else 0.0
        ok = change <= max_step_regression
        results.append(
            {
                "budget": "step-regression",
                "limit": max_step_regression,
                "value": change,
                "ok": ok,
                "run_us": run_step,
                "baseline_us": base_step,
                "step_source": run_src,
                "message": t(
                    f"check.step.{'ok' if ok else 'fail'}",
                    lang,
                    src=run_src,
                    run=run_step,
                    base=base_step,
                    change=change,
                    limit=max_step_regression,
                    excess=change - max_step_regression,
                ),
            }
        )
    if op_budgets:
        ops = run_prof.op_summary(by="type")
        shares = {}
        if len(ops):
            for typ, s in zip(ops["type"].astype(str), ops["share_of_compute_ratio"]):
                shares[typ] = shares.get(typ, 0.0) + (0.0 if s is None or s != s else float(s))
        lower = {k.lower(): k for k in shares}
        for kind, limit in op_budgets:
            key = kind if kind in shares else lower.get(kind.lower())
            share = shares.get(key, 0.0) if key else 0.0
            ok = share <= limit
            seen = "" if key else t("check.op.not_found", lang)
            results.append(
                {
                    "budget": f"op-share:{kind}",
                    "limit": limit,
                    "value": share,
                    "ok": ok,
                    "message": t(
                        f"check.op.{'ok' if ok else 'fail'}",
                        lang,
                        kind=kind,
                        share=share,
                        seen=seen,
                        limit=limit,
                        excess=share - limit,
                    ),
                }
            )
    return results


def run(args) -> int:
    step_limit = (
        None if args.max_step_regression is None else parse_fraction(args.max_step_regression, "--max-step-regression")
    )
    op_budgets = _op_budgets(args.max_op_share)
    if step_limit is None and not op_budgets:
        raise ProfileError(
            "no budget given", fix="add --max-step-regression 5% (with --baseline) or --max-op-share TYPE=0.2"
        )
    if step_limit is not None and not args.baseline:
        raise ProfileError("--max-step-regression needs --baseline BASE")
    prof = load_profile(args)
    base = _load([args.baseline], args.prefer) if args.baseline else None
    lang = resolve_lang(getattr(args, "lang", None))
    results = evaluate(prof, base, step_limit, op_budgets, lang)
    failed = [r for r in results if not r["ok"]]
    if output_format(args, FORMATS) == "json":
        emit(dumps({"ok": not failed, "results": results}), args)
    else:
        lines = [f"{'FAIL' if not r['ok'] else 'ok  '} {r['budget']}: {r['message']}" for r in results]
        lines.append(t("check.fail", lang, n=len(failed), of=len(results)) if failed else t("check.ok", lang))
        emit("\n".join(lines), args)
    return 1 if failed else 0
