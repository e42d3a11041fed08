"""In a Jupyter kernel: progress shows in the cell's output, and interrupting the kernel (Ctrl-C)
stops tuning after the test that runs, with every test kept. Needs ipykernel and jupyter_client
(scripts/python-test installs them)."""
import textwrap
import time

import pytest

pytest.importorskip("ipykernel")
manager = pytest.importorskip("jupyter_client.manager")

from conftest import VECTOR_ADD  # noqa: E402


def test_interrupting_the_kernel_stops_tuning_and_keeps_the_tests(tmp_path):
    store = tmp_path / "vector_add.db"
    cell = textwrap.dedent(f"""
        import numpy as np, steer
        n = 100000
        a = np.ones(n, np.float32); b = np.ones(n, np.float32)
        try:
            steer.tune_kernel("vector_add", {VECTOR_ADD!r}, n, [np.zeros_like(a), a, b, np.int32(n)],
                              {{"block_size_x": [16, 32, 48, 64, 96, 128, 192, 256], "unused": list(range(8))}},
                              answer=[a + b, None, None, None], cache={str(store)!r})
        except steer.Interrupted as stopped:
            interrupted = stopped
            raise
    """)
    kernel, client = manager.start_new_kernel(kernel_name="python3")
    try:
        request = client.execute(cell)
        outputs = []
        while not any("tests" in text for text in outputs):  # the first progress line
            message = client.get_iopub_msg(timeout=120)
            if message["parent_header"].get("msg_id") == request and message["msg_type"] == "stream":
                outputs.append(message["content"]["text"])
        kernel.interrupt_kernel()
        reply = client.get_shell_msg(timeout=120)
        assert reply["content"]["status"] == "error"
        assert reply["content"]["ename"] == "Interrupted"
        counts = f"(len(interrupted.results), len(steer.Store({str(store)!r}).results()))"
        for _ in range(50):  # the kernel aborts requests that arrive just after an interrupt
            client.execute("", user_expressions={"counts": counts})
            reply = client.get_shell_msg(timeout=60)
            if reply["content"]["status"] != "aborted":
                break
            time.sleep(0.1)
        assert "user_expressions" in reply["content"], reply["content"]
        value = reply["content"]["user_expressions"]["counts"]
        assert value["status"] == "ok", value
        results, stored = eval(value["data"]["text/plain"])
        assert 1 <= results < 64 and stored == results
    finally:
        client.stop_channels()
        kernel.shutdown_kernel(now=True)
