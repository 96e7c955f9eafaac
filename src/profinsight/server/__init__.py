"""The HTTP layer: tornado handlers over the engine (``make_handlers``), the standalone app of
``profinsight serve`` (``make_app``) and the store of served profiles (``ProfileStore``).

Wire format of the timeline, measured with ``python benchmarks/timeline_wire.py`` (every slice
track, 1600 px, median of 5, 2-core machine; bytes raw (gzip)):

    profile (events)            window  rows    query ms  JSON bytes         enc ms  Arrow IPC bytes     enc ms
    text_level1 rank0 (4,092)   whole   1,671   14.2      122,635 (25,112)   1.6     173,440 (31,039)    0.1
    text_level1 rank0           1/20    24      11.0      3,042 (962)        0.2     4,056 (1,403)       0.1
    100 MB Ascend (184,140)     whole   10,805  120.8     861,501 (89,199)   14.2    1,141,456 (128,498) 0.5
    100 MB Ascend               1/20    2,516   39.0      188,483 (33,447)   3.0     259,216 (43,351)    0.2

Choice: JSON (columnar per track) is the default.  It is 25-30 % smaller than Arrow IPC, raw or
gzipped (the answer is bounded by tracks x pixels, so it is small either way, and repeated names
cost Arrow more), and its encode time stays a fraction of the query time.  ``format=arrow``
returns the same rows as an Arrow IPC stream for clients that want typed int64 times.
"""

from .app import make_app, token_check
from .handlers import make_handlers
from .store import ProfileStore

__all__ = ["make_app", "make_handlers", "ProfileStore", "token_check"]
