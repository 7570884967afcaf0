"""Several devices in one process: peer info in devices() and DeviceArray.copy_from.

The library reads CUBEHIP_CPU_DEVICES when it first opens the cpu platform, which this
session's other tests have done with one device, so the checks run in a fresh
interpreter with three cpu devices."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import cubehip

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import cubehip

    ds = cubehip.devices("cpu")
    assert len(ds) == 3, ds
    assert [d.peers for d in ds] == [(1, 2), (0, 2), (0, 1)], [d.peers for d in ds]
    assert cubehip.can_access_peer(0, 2, "cpu") and not cubehip.can_access_peer(1, 1, "cpu")

    devs = [cubehip.Device("cpu", i) for i in range(3)]
    for s in range(3):
        for d in range(3):
            want = (np.arange(1 << 16, dtype=np.float32) * 3 + s * 10 + d)
            a = devs[s].array(want)
            b = devs[d].zeros(want.shape, np.float32)
            b.copy_from(a)
            assert np.array_equal(b.get(), want), (s, d)
            a.release(); b.release()

    a = devs[0].zeros((4,), np.float32)
    try:
        devs[1].zeros((5,), np.float32).copy_from(a)
        raise SystemExit("a shape mismatch was accepted")
    except ValueError:
        pass
    try:
        devs[1].zeros((4,), np.float32).copy_from(np.zeros(4, np.float32))
        raise SystemExit("a numpy source was accepted")
    except TypeError:
        pass
    for d in devs:
        d.close()
    print("peer: ok")
    """
)


def test_copy_from_between_three_cpu_devices():
    env = dict(os.environ)
    env["CUBEHIP_CPU_DEVICES"] = "3"
    env["PYTHONPATH"] = os.pathsep.join([str(Path(cubehip.__file__).parents[1]), env.get("PYTHONPATH", "")])
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "peer: ok" in run.stdout


def test_devices_of_one_cpu_device_have_no_peers():
    assert cubehip.devices("cpu")[0].peers == ()
