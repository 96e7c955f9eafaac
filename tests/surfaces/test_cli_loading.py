"""The terminal's progress line while a command loads its run (:mod:`profinsight.cli.loading`):
the file being read with its bytes, the stage, the ranks ready -- never "0 B read" for a run that
the cache serves."""

from __future__ import annotations

import io

from rich.console import Console

import profinsight
from profinsight.cli.loading import load_status, load_with_progress
from profinsight.cli.units import fmt_bytes
from profinsight.importers.progress import Watcher
from profinsight.samples import sample_path


def test_bytes_in_the_viewers_units():
    assert fmt_bytes(1_312_621_176) == "1.22 GiB"
    assert fmt_bytes(320 * 2**20) == "320.0 MiB"
    assert fmt_bytes(1536) == "1.5 KiB"
    assert fmt_bytes(12) == "12 B"


def test_the_line_follows_the_import():
    w = Watcher({"/run/r0/trace_view.json": 1000, "/run/r0/kernel_details.csv": 200})
    assert load_status(w, 0, 1, "en") == "0 of 1 rank(s) ready"  # nothing started: no "0 B read"
    w.on_stage("importing")
    assert load_status(w, 0, 1, "en") == "importing (first open) · 0 B of 1.2 KiB read (0%)"
    w.on_read("/run/r0/trace_view.json", 500)
    assert load_status(w, 0, 1, "en") == "reading trace_view.json · 500 B of 1.2 KiB read (41%)"
    w.on_read("/run/r0/trace_view.json", 1000)  # read whole: the tables are being built from it
    assert load_status(w, 0, 1, "en") == "building the tables · 1000 B of 1.2 KiB read (83%)"
    w.on_stage("caching")
    w.finished(["/run/r0/trace_view.json", "/run/r0/kernel_details.csv"])  # CSVs count when done
    assert load_status(w, 1, 1, "en") == "writing the cache · 1.2 KiB of 1.2 KiB read (100%)"
    assert load_status(w, 1, 4, "en").endswith(" · 1 of 4 rank(s) ready")
    assert load_status(w, 1, 4, "zh") == "正在写入缓存 · 已读取 1.2 KiB / 1.2 KiB（100%） · 已就绪 1/4 个 rank"


def _terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=140, color_system=None), out


def test_a_cold_load_says_what_it_read_and_a_cached_one_only_its_ranks():
    console, out = _terminal()
    p = load_with_progress(sample_path(), console, lang="en")
    cold = out.getvalue()
    assert "writing the cache" in cold and "read (100%)" in cold
    assert p.row_counts() == profinsight.load(sample_path()).row_counts()
    console, out = _terminal()
    again = load_with_progress(sample_path(), console, lang="en")
    warm = out.getvalue()
    assert "1 of 1 rank(s) ready" in warm and " read (" not in warm
    assert again.row_counts() == p.row_counts()


def test_several_ranks_count_as_they_become_ready(fixtures):
    console, out = _terminal()
    p = load_with_progress(fixtures / "ascend_pt/text_level1", console, lang="en")
    text = out.getvalue()
    assert sorted(p.ranks) == [0, 1]
    assert "2 of 2 rank(s) ready" in text and "read (100%)" in text


def test_a_file_read_whole_is_being_built_from_until_every_rank_has_read_its_copy():
    """The server's status line and the terminal's tell the stage the same way
    (:meth:`Watcher.shown_stage`); two ranks' traces share a file name."""
    w = Watcher({"/run/r0/trace_view.json": 100, "/run/r1/trace_view.json": 100, "/run/r0/op.csv": 10})
    assert w.shown_stage() is None
    w.on_read("/run/r0/trace_view.json", 100)
    assert w.shown_stage() == "reading"  # rank 1's copy of the same name is not read yet
    w.on_read("/run/r1/trace_view.json", 60)
    assert w.shown_stage() == "reading"
    w.on_read("/run/r1/trace_view.json", 100)
    assert w.shown_stage() == "building"
    w.on_stage("caching")
    assert w.shown_stage() == "caching"


def _stages_seen(path, monkeypatch, trace: str) -> list[tuple[str, str | None]]:
    """Each stage an import announces, with the stage a watcher showed just before it; the
    streamed file named ``trace`` is counted whole by the end (CSVs read beside it are counted
    by the loader as their rank finishes)."""
    from profinsight.api import resolve_run
    from profinsight.importers import progress
    from profinsight.store.loader import watched_files

    seen = []
    real = Watcher.on_stage

    def on_stage(self, name):
        seen.append((name, self.shown_stage()))
        real(self, name)

    monkeypatch.setattr(Watcher, "on_stage", on_stage)
    with progress.watch(watched_files(resolve_run(path).sources)) as w:
        profinsight.load(path).row_counts()
        streamed = [k for k in w.sizes if k.endswith("/" + trace)]
        assert streamed and all(w.read_bytes.get(k) == w.sizes[k] for k in streamed)
    return seen


def test_a_trace_read_whole_says_what_comes_next_not_reading(fixtures, tmp_path, monkeypatch):
    """Once the event array is parsed, the line says the tables are being built (never "reading,
    99%" while the import builds them: the bytes after a Kineto trace's array hold no events);
    before the parse it says parsing, not the stage after it."""
    import gzip

    plain = tmp_path / "gpu_2rank_rank0.json"  # a plain copy: its array is read in place
    plain.write_bytes(gzip.decompress((fixtures / "kineto/gpu_2rank_rank0.json.gz").read_bytes()))
    assert _stages_seen(plain, monkeypatch, plain.name) == [
        ("importing", None),
        ("parsing", "importing"),
        ("building", "building"),
        ("caching", "building"),
    ]
    # gzip: the compressed bytes are counted as they are inflated, then the array is parsed
    gz = _stages_seen(fixtures / "kineto/gpu_2rank_rank0.json.gz", monkeypatch, "gpu_2rank_rank0.json.gz")
    assert [name for name, _ in gz] == ["importing", "parsing", "building", "caching"]
    assert dict(gz)["building"] == "parsing"
    # Ascend text: the pieces of trace_view.json are parsed as they are read
    text = _stages_seen(fixtures / "ascend_pt/text_level1/rank0_ascend_pt", monkeypatch, "trace_view.json")
    assert [name for name, _ in text] == ["importing", "building", "caching"]
    assert dict(text)["building"] == "building"
