"""examples/char_gpt/char_gpt.py, the char-level GPT on anatomy.nn: a tiny configuration trains
on the CPU for 120 steps and its loss falls below the text's unigram entropy (the best a model
without context can do), which the test computes from the shipped text; it prints the same losses,
to the bit, as the C++ char-gpt built beside the package; bad flags exit with 2."""

import collections
import importlib.util
import math
import pathlib
import re
import subprocess

import pytest

import anatomy

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "char_gpt" / "char_gpt.py"
TINY = ["--steps", "120", "--layers", "2", "--d-model", "32", "--heads", "2", "--seq", "32", "--batch", "16",
        "--warmup", "10", "--lr", "3e-3", "--log-every", "10", "--dropout", "0"]


@pytest.fixture(scope="module")
def char_gpt():
    spec = importlib.util.spec_from_file_location("char_gpt", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def unigram_entropy(path):
    data = path.read_bytes()
    counts = collections.Counter(data)
    return -sum(c / len(data) * math.log(c / len(data)) for c in counts.values())


def test_tiny_model_learns_below_unigram_entropy(char_gpt, capsys):
    losses = char_gpt.main(TINY)
    entropy = unigram_entropy(ROOT / "examples" / "char_gpt" / "gpl-3.0.txt")
    assert 3.0 < entropy < 3.3
    vocab = len(set((ROOT / "examples" / "char_gpt" / "gpl-3.0.txt").read_bytes()))
    first, last = losses[0][1], [v for _, v in losses[-3:]]
    assert first > entropy  # step 10: not yet past the unigram model
    assert first < math.log(vocab) + 0.3
    assert sum(last) / len(last) < entropy - 0.15, losses
    out = capsys.readouterr().out
    assert "step 120/120  loss" in out and "steps/s" in out


def test_same_losses_as_the_cpp_example(char_gpt, capsys):
    # The build tree's char-gpt: <build>/python/anatomy/_C*.so -> <build>/examples/char_gpt/char-gpt.
    binary = pathlib.Path(anatomy._C.__file__).parents[2] / "examples" / "char_gpt" / "char-gpt"
    if not binary.exists():
        pytest.skip(f"the C++ example is not built ({binary})")
    for extra in ([], ["--dropout", "0", "--clip", "0.5", "--weight-decay", "0.3", "--seed", "7", "--sample", "30",
                       "--temperature", "0.8", "--prompt", "The "]):
        args = ["--steps", "25", "--layers", "2", "--d-model", "32", "--heads", "4", "--seq", "16", "--batch", "4",
                "--warmup", "3", "--log-every", "1", *extra]
        cpp = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=120, check=True).stdout
        char_gpt.main(args)
        python = capsys.readouterr().out
        steps = re.compile(r"^step .*$", re.M)
        assert len(steps.findall(cpp)) == 25 and ("--sample" in extra) == ("--- sample" in cpp)
        # The same batches, dropout masks, initial weights and updates: the loss bits agree, and
        # the same draws give the same sample.
        assert steps.findall(python) == steps.findall(cpp)
        assert python.partition("--- sample")[2] == cpp.partition("--- sample")[2]


def test_sample_is_repeatable(char_gpt, capsys):
    args = ["--steps", "3", "--layers", "1", "--d-model", "16", "--heads", "2", "--seq", "16", "--batch", "2",
            "--warmup", "1", "--sample", "12", "--temperature", "0.8", "--prompt", "The "]
    char_gpt.main(args)
    first = capsys.readouterr().out
    char_gpt.main(args)
    second = capsys.readouterr().out
    sample = first.split("---\n")[1].split("\n--- end")[0]
    assert sample.startswith("The ") and len(sample) == 16
    assert first.split("trained")[0] == second.split("trained")[0] and sample in second


@pytest.mark.parametrize("bad", [["--steps", "0"], ["--lr", "nan"], ["--heads", "3"], ["--warmup", "2000"],
                                 ["--device", "tpu"], ["--dropout", "1"], ["--data", "/nonexistent"],
                                 ["--prompt", "\x01"], ["--bogus"], ["--batch", "x"]])
def test_bad_flags_exit_with_2(char_gpt, bad, capsys):
    with pytest.raises(SystemExit) as e:
        char_gpt.main(bad)
    assert e.value.code == 2
    assert "error" in capsys.readouterr().err
