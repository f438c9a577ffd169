"""examples/char_gpt/char_gpt.py, the char-level GPT on anatomy.nn: a tiny configuration trains
on the CPU for 120 steps and its loss falls below the text's unigram entropy (the best a model
without context can do), which the test computes from the shipped text; it prints the same losses,
to the bit, as the C++ char-gpt built beside the package; --save and --resume continue a run bit
for bit (with dropout, and with --checkpointing, which changes no bit), also across the two
programs, whose checkpoints are one format; bad flags and checkpoints exit with 2."""

import collections
import importlib.util
import math
import pathlib
import re
import subprocess
import struct

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


def cpp_binary():
    """The build tree's char-gpt: <build>/python/anatomy/_C*.so -> <build>/examples/char_gpt/char-gpt."""
    binary = pathlib.Path(anatomy._C.__file__).parents[2] / "examples" / "char_gpt" / "char-gpt"
    if not binary.exists():
        pytest.skip(f"the C++ example is not built ({binary})")
    return binary


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
    binary = cpp_binary()
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


# A run small enough for a second, with dropout on (the masks must resume too).
RESUME = ["--layers", "2", "--d-model", "32", "--heads", "4", "--seq", "16", "--batch", "4", "--warmup", "3",
          "--steps", "12", "--log-every", "1"]
LINE = re.compile(r"^step (\d+)/(\d+)  loss ([0-9.]+) \[([0-9a-f]{8})\]", re.M)


def loss_bits(out):
    """{step: the loss's fp32 bits} of every log line."""
    return {int(m.group(1)): m.group(4) for m in LINE.finditer(out)}


def run_python(char_gpt, capsys, *args):
    char_gpt.main(list(args))
    return loss_bits(capsys.readouterr().out)


@pytest.mark.parametrize("extra", [[], ["--checkpointing"], ["--dropout", "0"]])
def test_save_and_resume_continue_bit_for_bit(char_gpt, capsys, tmp_path, extra):
    ck = str(tmp_path / "ck.safetensors")
    whole = run_python(char_gpt, capsys, *RESUME, *extra)
    first = run_python(char_gpt, capsys, *RESUME, *extra, "--stop-after", "5", "--save", ck)
    assert (tmp_path / "ck.safetensors.train.safetensors").exists()
    # The checkpoint records the options: --resume alone continues the run.
    rest = run_python(char_gpt, capsys, "--resume", ck, "--log-every", "1", *extra[:1] if extra == ["--checkpointing"]
                      else [])
    assert sorted(whole) == list(range(1, 13)) and sorted(first) == list(range(1, 6))
    assert sorted(rest) == list(range(6, 13))
    assert {**first, **rest} == whole
    assert len(set(whole.values())) == 12  # the losses move, or equal bits would prove nothing
    # Past the recorded --steps the schedule extends.
    more = run_python(char_gpt, capsys, "--resume", ck, "--steps", "15", "--log-every", "1", *extra[:1]
                      if extra == ["--checkpointing"] else [])
    assert sorted(more) == list(range(6, 16))


def test_checkpointing_changes_no_bit(char_gpt, capsys):
    assert run_python(char_gpt, capsys, *RESUME) == run_python(char_gpt, capsys, *RESUME, "--checkpointing")


def test_checkpoint_holds_the_state_in_the_engine_layout(char_gpt, capsys, tmp_path):
    ck = str(tmp_path / "ck.safetensors")
    run_python(char_gpt, capsys, *RESUME, "--stop-after", "4", "--save", ck)
    model, metadata = anatomy.safetensors.load_file_with_metadata(ck)
    assert metadata["step"] == "4" and metadata["--layers"] == "2" and metadata["--lr"] == "0.001"
    assert metadata["--dropout"] == "0.1" and metadata["--clip"] == "1"
    assert "blocks.1.self_attn.in_proj_weight" in model and "head.bias" in model
    train = anatomy.safetensors.load_file(ck + ".train.safetensors")
    assert train["train.step"].tolist() == [4]
    assert train["state.0.step"].dtype == anatomy.int64 and train["state.0.step"].item() == 4
    assert train["param_groups.1.weight_decay"].item() == 0.0 and train["param_groups.0.beta2"].item() == 0.99
    # The CPU generator's seed is the run's; its offset counts the draws up to step 4.
    assert train["rng.cpu.seed"].tolist() == [1337] and train["rng.cpu.offset"].item() > 0
    seed, offset = struct.unpack("<QQ", bytes(anatomy.get_rng_state().tolist()))
    assert (seed, offset) == (1337, train["rng.cpu.offset"].item())


def test_checkpoints_cross_between_python_and_cpp(char_gpt, capsys, tmp_path):
    binary = cpp_binary()

    def run_cpp(*args):
        return loss_bits(subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=120,
                                        check=True).stdout)

    whole = run_cpp(*RESUME)
    assert sorted(whole) == list(range(1, 13))
    # C++ saves, Python resumes; Python saves, C++ resumes: the whole run's bits either way.
    cpp_ck, py_ck = str(tmp_path / "cpp.safetensors"), str(tmp_path / "py.safetensors")
    first = run_cpp(*RESUME, "--stop-after", "5", "--save", cpp_ck)
    rest = run_python(char_gpt, capsys, "--resume", cpp_ck, "--log-every", "1")
    assert {**first, **rest} == whole
    first = run_python(char_gpt, capsys, *RESUME, "--stop-after", "7", "--save", py_ck)
    rest = run_cpp("--resume", py_ck, "--log-every", "1")
    assert sorted(rest) == list(range(8, 13)) and {**first, **rest} == whole


@pytest.mark.parametrize("bad, needle", [
    (["--layers", "3"], "--layers 3 differs from the checkpoint's 2"),
    (["--lr", "0.002"], "--lr 0.002 differs"),
    (["--stop-after", "2"], "past the last step 2"),
    (["--steps", "3", "--warmup", "2"], "--warmup 2 differs"),
])
def test_resume_refuses_what_does_not_fit(char_gpt, capsys, tmp_path, bad, needle):
    ck = str(tmp_path / "ck.safetensors")
    run_python(char_gpt, capsys, *RESUME, "--stop-after", "4", "--save", ck)
    with pytest.raises(SystemExit) as e:
        char_gpt.main(["--resume", ck, *bad])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert needle in err, err


def test_resume_refuses_bad_files(char_gpt, capsys, tmp_path):
    other = tmp_path / "other.txt"
    other.write_text("abcabcabcabcabcabcabcabcabcabcabcabc")
    ck = str(tmp_path / "ck.safetensors")
    run_python(char_gpt, capsys, *RESUME, "--stop-after", "4", "--save", ck)
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}      ")
    (tmp_path / "bad.safetensors.train.safetensors").write_bytes(b"")
    text_only = tmp_path / "text.safetensors"
    anatomy.safetensors.save_file({"x": anatomy.zeros(2)}, text_only)
    (tmp_path / "text.safetensors.train.safetensors").write_bytes(b"")
    for args, needle in [(["--resume", str(tmp_path / "absent.safetensors")], "absent.safetensors"),
                         (["--resume", str(bad)], "bad.safetensors"),
                         (["--resume", str(text_only)], "not a char-gpt checkpoint"),
                         (["--resume", ck, "--data", str(other)], "vocabulary")]:
        with pytest.raises(SystemExit) as e:
            char_gpt.main(args)
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert "--resume" in err and needle in err, err
    # The training state of another step than the model file's.
    (tmp_path / "ck.safetensors.train.safetensors").unlink()
    run_python(char_gpt, capsys, *RESUME, "--stop-after", "3", "--save", str(tmp_path / "three.safetensors"))
    (tmp_path / "three.safetensors.train.safetensors").rename(tmp_path / "ck.safetensors.train.safetensors")
    with pytest.raises(SystemExit) as e:
        char_gpt.main(["--resume", ck])
    assert e.value.code == 2 and "not from one save" in capsys.readouterr().err


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
                                 ["--prompt", "\x01"], ["--bogus"], ["--batch", "x"], ["--autocast", "bf16"],
                                 ["--autocast", "fp16"], ["--stop-after", "3000"], ["--lr=1", "--l", "2"]])
def test_bad_flags_exit_with_2(char_gpt, bad, capsys):
    with pytest.raises(SystemExit) as e:
        char_gpt.main(bad)
    assert e.value.code == 2
    assert "error" in capsys.readouterr().err
