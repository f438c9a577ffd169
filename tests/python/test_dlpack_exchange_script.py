"""bench/python/dlpack_exchange.py --quick runs (with torch or NumPy as the peer) and prints its
table, its verdict on the round trip, and the same rows as JSON."""

import json
import os
import pathlib
import re
import subprocess
import sys

import numpy
import pytest

import anatomy

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "bench" / "python" / "dlpack_exchange.py"
QUICK_SIZES = ["1 KiB", "4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB"]


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=dict(os.environ),
                          timeout=300)


def test_quick_run_prints_a_table_a_verdict_and_json(tmp_path):
    out_file = tmp_path / "dlpack.json"
    result = run("--quick", "--json", str(out_file))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    head = re.match(r"^DLPack exchange with (torch|numpy) \S+ on (cpu|cuda): host time per call, "
                    r"median of 5 runs of 1000 calls \(us\)$", lines[0])
    assert head, lines[0]
    peer, device = head.groups()
    assert lines[1].split() == ["size", f"anatomy.from_dlpack({peer})", f"{peer}.from_dlpack(anatomy)", "round",
                                "trip"]
    number = r"\d+\.\d{3}"
    rows = [re.match(rf"^ +(\d+ [KM]iB) +({number}) +({number}) +({number})$", line) for line in lines[3:-1]]
    assert all(rows), lines[3:-1]
    assert [r.group(1) for r in rows] == QUICK_SIZES
    verdict = re.match(r"^round trip from 1 KiB to 1 MiB: (\S+) to (\S+) us, max/min (\S+): (flat|NOT flat) "
                       r"\(max/min <= 1.5\), (within|ABOVE) 2 us; every result shared x's memory$", lines[-1])
    assert verdict, lines[-1]

    data = json.loads(out_file.read_text())
    assert (data["peer"], data["device"], data["number"], data["repeats"]) == (peer, device, 1000, 5)
    assert [r["bytes"] for r in data["rows"]] == [1024 * 4**k for k in range(6)]
    for r, printed in zip(data["rows"], rows):
        assert r["zero_copy"] is True
        for key, column in (("to_anatomy_us", 2), ("from_anatomy_us", 3), ("round_trip_us", 4)):
            assert 0 < r[key] < 1e4 and f"{r[key]:.3f}" == printed.group(column)
    summary = data["round_trip"]
    times = [r["round_trip_us"] for r in data["rows"]]
    assert (summary["min_us"], summary["max_us"]) == (min(times), max(times))
    assert summary["flat"] == (verdict.group(4) == "flat") == (max(times) / min(times) <= 1.5)
    assert summary["within_limit"] == (verdict.group(5) == "within") == (max(times) <= 2.0)


def test_bad_counts_are_a_usage_error():
    result = run("--quick", "--number", "0")
    assert result.returncode == 2 and "--number and --repeats must be at least 1" in result.stderr


def test_a_copy_fails_the_zero_copy_check(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    import dlpack_exchange

    peer = dlpack_exchange.numpy_peer(numpy)
    assert [r["zero_copy"] for r in dlpack_exchange.exchange_rows(anatomy, peer, [1024, 4096], 10, 1)] == [True] * 2
    copying = dict(peer, from_dlpack=lambda a: numpy.array(numpy.from_dlpack(a)))
    with pytest.raises(RuntimeError, match=r"peer_from_dlpack\(a\) at 1 KiB: the result is not x's memory"):
        dlpack_exchange.exchange_rows(anatomy, copying, [1024], 10, 1)
