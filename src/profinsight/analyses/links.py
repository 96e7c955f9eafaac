"""Slow links that are really slow, and the links whose transfers are too small to say.

A transfer's time is a fixed cost (the link's latency: a few microseconds per transfer) plus its
bytes over the bandwidth.  Only when the bytes dominate does bytes / time measure the link's
bandwidth: 120 bytes in 7.5 us is 0.016 GB/s on a perfectly healthy HCCS link.  So:

* **bandwidth-bound** rows of the rank-to-rank matrix (``comm_matrix``) are the ones that move at
  least ``min_bytes`` (default **1 MB = 10^6 bytes**).  At the on-node (HCCS, SDMA engine) speed
  of ~19 GB/s a megabyte takes ~52 us against a fixed cost of ~1.5 us; over RDMA (~12 GB/s,
  ~7 us fixed) ~83 us against 7 us: the latency is under a tenth of the time.  Only these rows
  judge a link's bandwidth (``slow_links``).
* **latency-bound** rows (fewer bytes) are reported by ``link_latency``: time per transfer, and
  against the median of the links of the same transport.

A matrix row holds the bytes and transit time of one op type on one link in one step (the
``total`` summary): many small ops that add up to a megabyte count as bandwidth-bound; the
vendor's per-packet sizes are not in the canonical tables.

**Expected bandwidth per link type** (``expected``, GB/s = 10^9 bytes/s): HCCS 19.3 (on-node,
one SDMA stream, the vendor's communication cost model), RDMA 12.0 (one stream, after protocol
headers).  Other transports have no nominal figure and are judged against their peers only.  A
link is slow when its bandwidth over its bandwidth-bound rows is below ``max_ratio`` of the
expected figure of its type, or below ``max_ratio`` of the median of the links of its type (three
or more links).  Pass ``expected="HCCS=56,RDMA=25"`` for other hardware.
"""

from __future__ import annotations

import pandas as pd

from ..errors import ProfileError
from ..i18n import evidence
from ..registry import Chart, Param, analysis
from .communication import EXPECTED_GBPS, SUMMARIES

MIN_BYTES = 1_000_000
EXPECTED = ",".join(f"{t.upper()}={gbps:g}" for t, gbps in EXPECTED_GBPS.items())  # "HCCS=19.3,RDMA=12"

_LINK_COLS = {
    "src_rank": "source rank",
    "dst_rank": "destination rank",
    "transport": "HCCS, RDMA, PCIE, ...",
    "bandwidth_gbps": "bytes / transit time of the link's bandwidth-bound rows (GB/s = bytes/ns)",
    "expected_gbps": "the expected bandwidth of the link type (the expected parameter; empty where unknown)",
    "bandwidth_vs_expected_ratio": "bandwidth_gbps / expected_gbps",
    "median_gbps": "median of bandwidth_gbps over the links of the same transport",
    "bandwidth_vs_median_ratio": "bandwidth_gbps / median_gbps",
    "n_links": "links of the transport with bandwidth-bound rows",
    "bytes": "bytes of the bandwidth-bound rows",
    "transit_us": "their transit time",
    "below": "what the link is below: 'expected', 'median' or both",
    "op_types": "op types that used the link",
    "steps": "steps where the link is also slow on that step's rows alone",
    "evidence": "the finding in words",
    "label": "'src->dst transport'",
}


def expected_table(text: str) -> dict[str, float]:
    """``"HCCS=19.3,RDMA=12"`` -> ``{"HCCS": 19.3, "RDMA": 12.0}`` (upper-case transports)."""
    out = {}
    for part in filter(None, (p.strip() for p in str(text or "").split(","))):
        name, _, value = part.partition("=")
        try:
            out[name.strip().upper()] = float(value)
        except ValueError:
            raise ProfileError(f"expected must read like {EXPECTED!r}, not {text!r}") from None
    return out


def _matrix(profile, summary: str) -> pd.DataFrame:
    from .communication import comm_matrix

    m = pd.DataFrame(comm_matrix(profile, summary=summary))
    if m.empty:
        return m
    m = m[(m["src_rank"] != m["dst_rank"]) & (m["transport"].astype(str).str.upper() != "LOCAL")].copy()
    m["bytes"] = m["bytes"].astype("float64")
    m["transit_us"] = m["transit_us"].astype("float64")
    m = m[(m["bytes"] > 0) & (m["transit_us"] > 0)]
    m["transport"] = m["transport"].astype(str)
    return m


_KEYS = ["src_rank", "dst_rank", "transport"]


def _per_link(df: pd.DataFrame, expected: dict, max_ratio: float) -> pd.DataFrame:
    g = df.groupby(_KEYS, dropna=False).agg(bytes=("bytes", "sum"), transit_us=("transit_us", "sum")).reset_index()
    g["bandwidth_gbps"] = g["bytes"] / (g["transit_us"] * 1e3)
    g["median_gbps"] = g.groupby("transport")["bandwidth_gbps"].transform("median")
    g["n_links"] = g.groupby("transport")["bandwidth_gbps"].transform("size")
    g["expected_gbps"] = g["transport"].str.upper().map(expected).astype("float64")
    low_exp = g["bandwidth_gbps"] < max_ratio * g["expected_gbps"]
    low_med = (g["n_links"] >= 3) & (g["bandwidth_gbps"] < max_ratio * g["median_gbps"])
    g["below"] = [" and ".join(w for w, on in (("expected", e), ("median", m)) if on) for e, m in zip(low_exp, low_med)]
    return g


@analysis(
    "slow_links",
    title="Slow links",
    params=(
        Param("max_ratio", float, 0.5, help="a link is slow below this fraction of its expected or median bandwidth"),
        Param("summary", str, "total", choices=SUMMARIES, help="comm_matrix summary rows to use"),
        Param("min_bytes", int, MIN_BYTES, help="rows that move fewer bytes are latency-bound and not judged here"),
        Param("expected", str, EXPECTED, help="expected bandwidth per link type, GB/s"),
        Param("lang", str, "en", ("en", "zh"), "language of the evidence sentence (the figures are the same)"),
    ),
    chart=Chart("bar", "label", ("bandwidth_vs_median_ratio",), title="Bandwidth / median of the transport"),
    columns=_LINK_COLS,
)
def slow_links(
    profile,
    max_ratio: float = 0.5,
    summary: str = "total",
    min_bytes: int = MIN_BYTES,
    expected: str = EXPECTED,
    lang: str = "en",
) -> pd.DataFrame:
    """Links of the rank-to-rank matrix whose bandwidth, measured only on bandwidth-bound
    transfers (at least ``min_bytes`` per matrix row, 1 MB by default), is below ``max_ratio`` of
    the expected bandwidth of the link type (HCCS 19.3, RDMA 12 GB/s) or of the median of the
    links of the same type, with evidence: bandwidth, expected, median, bytes, transit time, op
    types and the steps where it holds (in ``lang``).  Small transfers are latency-bound:
    ``link_latency``."""
    exp = expected_table(expected)
    m = _matrix(profile, summary)
    if m.empty:
        return pd.DataFrame(columns=list(_LINK_COLS))
    m = m[m["bytes"] >= min_bytes]
    if m.empty:
        return pd.DataFrame(columns=list(_LINK_COLS))
    links = _per_link(m, exp, max_ratio)
    slow = links[links["below"] != ""]
    if slow.empty:
        return pd.DataFrame(columns=list(_LINK_COLS))
    by_step: dict[tuple, list[int]] = {}
    for step, part in m.groupby("step", dropna=True):
        pl = _per_link(part, exp, max_ratio)
        for k in pl.loc[pl["below"] != "", _KEYS].itertuples(index=False, name=None):
            by_step.setdefault(k, []).append(int(step))
    ops = m.groupby(_KEYS, dropna=False)["op_type"].agg(lambda v: ", ".join(sorted(set(map(str, v)))))
    rows = [
        _link_row(r, by_step.get(k, []), ops.get(k, ""), lang)
        for k, (_, r) in zip(slow[_KEYS].itertuples(index=False, name=None), slow.iterrows())
    ]
    df = pd.DataFrame(rows, columns=list(_LINK_COLS))
    return df.sort_values("bandwidth_vs_median_ratio", kind="stable").reset_index(drop=True)


def _link_row(r, steps: list[int], ops: str, lang: str = "en") -> dict:
    ratio_med = float(r["bandwidth_gbps"] / r["median_gbps"])
    exp = float(r["expected_gbps"])
    ratio_exp = float(r["bandwidth_gbps"] / exp) if exp == exp else float("nan")
    row = {
        "src_rank": int(r["src_rank"]),
        "dst_rank": int(r["dst_rank"]),
        "transport": r["transport"],
        "bandwidth_gbps": float(r["bandwidth_gbps"]),
        "expected_gbps": exp,
        "bandwidth_vs_expected_ratio": ratio_exp,
        "median_gbps": float(r["median_gbps"]),
        "bandwidth_vs_median_ratio": ratio_med,
        "n_links": int(r["n_links"]),
        "bytes": float(r["bytes"]),
        "transit_us": float(r["transit_us"]),
        "below": r["below"],
        "op_types": ops,
        "steps": ", ".join(map(str, steps)),
        "evidence": None,
        "label": f"{int(r['src_rank'])}->{int(r['dst_rank'])} {r['transport']}",
    }
    row["evidence"] = evidence.link(row, lang)
    return row


_LATENCY_COLS = {
    "src_rank": "source rank",
    "dst_rank": "destination rank",
    "transport": "HCCS, RDMA, ...",
    "n_transfers": "latency-bound matrix rows of the link (one op type in one step each)",
    "bytes": "their bytes",
    "transit_us": "their transit time",
    "per_transfer_us": "transit_us / n_transfers: the time a small transfer takes",
    "median_per_transfer_us": "median of per_transfer_us over the links of the same transport",
    "per_transfer_vs_median_ratio": "per_transfer_us / median_per_transfer_us",
    "op_types": "op types",
    "evidence": "in words",
}


@analysis(
    "link_latency",
    title="Latency-bound transfers per link",
    params=(
        Param("min_bytes", int, MIN_BYTES, help="rows below this many bytes are latency-bound"),
        Param("summary", str, "total", choices=SUMMARIES, help="comm_matrix summary rows to use"),
        Param("lang", str, "en", ("en", "zh"), "language of the evidence sentence (the figures are the same)"),
    ),
    chart=Chart("bar", "label", ("per_transfer_us",), title="Time per small transfer (us)"),
    columns={**_LATENCY_COLS, "label": "'src->dst transport'"},
)
def link_latency(profile, min_bytes: int = MIN_BYTES, summary: str = "total", lang: str = "en") -> pd.DataFrame:
    """The links' small transfers (matrix rows under ``min_bytes``, 1 MB by default): their time
    is the link's latency, not its bandwidth, so they are reported as time per transfer and
    compared with the links of the same transport -- never as a low bandwidth.  ``lang`` words
    the evidence."""
    m = _matrix(profile, summary)
    cols = [*_LATENCY_COLS, "label"]
    if m.empty:
        return pd.DataFrame(columns=cols)
    m = m[m["bytes"] < min_bytes]
    if m.empty:
        return pd.DataFrame(columns=cols)
    g = m.groupby(_KEYS, dropna=False).agg(
        n_transfers=("bytes", "size"),
        bytes=("bytes", "sum"),
        transit_us=("transit_us", "sum"),
        op_types=("op_type", lambda v: ", ".join(sorted(set(map(str, v))))),
    )
    g = g.reset_index()
    g["per_transfer_us"] = g["transit_us"] / g["n_transfers"]
    g["median_per_transfer_us"] = g.groupby("transport")["per_transfer_us"].transform("median")
    g["per_transfer_vs_median_ratio"] = g["per_transfer_us"] / g["median_per_transfer_us"]
    g["evidence"] = [evidence.latency(r, min_bytes, lang) for _, r in g.iterrows()]
    g["label"] = g["src_rank"].astype(str) + "->" + g["dst_rank"].astype(str) + " " + g["transport"]
    g = g.sort_values(["per_transfer_vs_median_ratio", "per_transfer_us"], ascending=False, kind="stable")
    return g[cols].reset_index(drop=True)
