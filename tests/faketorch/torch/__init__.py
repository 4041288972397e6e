"""A stand-in for the PyTorch CUDA surface clusterctl-gemm uses, for tests/unit/test_gemm_floor.py (no GPU nor
PyTorch here: the real run is bench/device/gemm_floor.sh): GPU i takes SPEED[i] s per
matmul of 8192^3; FAIL names GPUs whose matmul raises. Set by the environment FAKE_GPUS="0.0016,0.0032,x"."""
import contextlib
import os
import types

__version__ = "0.0-fake"
version = types.SimpleNamespace(cuda="12.4")
bfloat16, float16, float32 = "bf16", "fp16", "fp32"
_SPEC = [s for s in os.environ.get("FAKE_GPUS", "").split(",") if s]
backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=False)))
_current = [0]
_clock = {}


class _Props:
    def __init__(self, i):
        self.name, self.uuid, self.pci_bus_id, self.pci_domain_id, self.pci_device_id = \
            "NVIDIA H200", f"{i:08x}-1111-2222-3333-444444444444", 0x18 + i, 0, 0


class _Event:
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self):
        self.t = _clock.get(_current[0], 0.0)

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return (end.t - self.t) * 1000.0


@contextlib.contextmanager
def _device(i):
    old, _current[0] = _current[0], i
    try:
        yield
    finally:
        _current[0] = old


cuda = types.SimpleNamespace(device_count=lambda: len(_SPEC), get_device_properties=_Props, Event=_Event,
                             device=_device)


def randn(*shape, device=0, dtype=None):
    return ("t", device)


def empty(*shape, device=0, dtype=None):
    return ("t", device)


def matmul(a, b, out=None):
    i = a[1]
    if _SPEC[i] == "x":
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    _clock[i] = _clock.get(i, 0.0) + float(_SPEC[i])
