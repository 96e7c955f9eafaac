"""Timeline data asked for by window and resolution (engine side: no web imports).

>>> from profinsight import timeline
>>> tree = timeline.tracks(p)
>>> t = timeline.slices(p, start_ns, end_ns, ["r0/stream/2"], width_px=1200)
"""

from .align import alignment
from .index import TimelineIndex, index_of, nesting_depth
from .queries import check_window, counter_columns, counters, details, flows, search, slice_columns, slices, tracks
from .ranges import gaps, range_stats, self_times

__all__ = [
    "tracks",
    "alignment",
    "slices",
    "slice_columns",
    "counters",
    "counter_columns",
    "check_window",
    "flows",
    "search",
    "details",
    "range_stats",
    "gaps",
    "self_times",
    "index_of",
    "TimelineIndex",
    "nesting_depth",
]
