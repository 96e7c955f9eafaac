"""Loading inside a real Jupyter kernel: DuckDB behaves differently there (it refuses the
progress-bar setting without ipywidgets), and an Ascend import must still succeed."""

from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.jupyter, pytest.mark.slow]


def test_ascend_import_inside_a_kernel(fixtures, tmp_path):
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        code = (
            f"import os; os.environ['PROFINSIGHT_CACHE'] = {str(tmp_path / 'cache')!r}\n"
            "import json, profinsight\n"
            f"p = profinsight.load({str(fixtures / 'ascend_pt' / 'text_level1')!r})\n"
            "print(json.dumps({'errors': [d.code for d in p.diagnostics if d.severity == 'error'],"
            " 'kernels': int(p.sql(\"select count(*) from device_tasks where kind = 'kernel'\").iloc[0, 0])}))"
        )
        msg_id = kc.execute(code)
        out, err = "", None
        while True:
            m = kc.get_iopub_msg(timeout=180)
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            if m["msg_type"] == "stream":
                out += m["content"]["text"]
            elif m["msg_type"] == "error":
                err = f"{m['content']['ename']}: {m['content']['evalue']}"
            elif m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                break
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert err is None, err
    got = json.loads(out.strip().splitlines()[-1])
    assert got["errors"] == []
    assert got["kernels"] == 2 * 187  # the same count as outside a kernel (187 per rank)
