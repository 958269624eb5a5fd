"""nbval's kernels listen on Unix sockets, not TCP ports (``tests/conftest.py``,
:func:`~tests.conftest.nbval_kernels_on_unix_sockets`): the race that killed a kernel of
``make test`` before it replied to kernel_info, shown here, cannot happen to them."""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path

import pytest

pytest.importorskip("nbval")


@pytest.mark.notebook
def test_nbval_starts_its_kernels_on_unix_sockets(tmp_path):
    from nbval.kernel import CURRENT_ENV_KERNEL_NAME, RunningKernel

    kernel = RunningKernel(CURRENT_ENV_KERNEL_NAME, cwd=str(tmp_path))
    try:
        km = kernel.km
        info = json.loads(Path(km.connection_file).read_text())
        assert info["transport"] == "ipc" and os.path.isabs(info["ip"])
        for channel in ("shell", "iopub", "stdin", "control", "hb"):
            path = f"{info['ip']}-{info[f'{channel}_port']}"
            assert stat.S_ISSOCK(os.stat(path).st_mode), f"{channel}: no Unix socket at {path}"
        msg_id = kernel.execute_cell_input("import os; print(os.getcwd())", allow_stdin=False)
        kernel.await_reply(msg_id, timeout=60)
        msg = kernel.get_message("iopub", timeout=30)
        while msg["msg_type"] != "stream":
            msg = kernel.get_message("iopub", timeout=30)
        assert msg["content"]["text"].strip() == str(tmp_path), "it runs in the notebook's folder"
    finally:
        kernel.stop()
    assert not os.path.exists(f"{info['ip']}-{info['shell_port']}"), "sockets removed on stop"


@pytest.mark.notebook
def test_a_tcp_kernel_whose_port_was_taken_dies_before_kernel_info():
    """The failure the Unix sockets remove: jupyter_client writes a free port into the
    connection file, another process binds it before the kernel has started, and ipykernel,
    which tries a given port once, exits -- "Kernel died before replying to kernel_info"."""
    from jupyter_client.manager import KernelManager
    from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        km = KernelManager(
            kernel_name=CURRENT_ENV_KERNEL_NAME,
            kernel_spec_manager=NbvalKernelspecManager(),
            transport="tcp",
            cache_ports=False,  # else jupyter_client probes new ports and forgets this one
        )
        km.shell_port = taken.getsockname()[1]  # as if another process got there first
        null = open(os.devnull, "w")  # noqa: SIM115 - as nbval starts it; closed below
        km.start_kernel(stderr=null)
        kc = km.client()
        kc.start_channels()
        try:
            with pytest.raises(RuntimeError, match="Kernel died before replying to kernel_info"):
                kc.wait_for_ready(timeout=60)
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
            null.close()  # left open, its ResourceWarning fired in a later test of the worker
