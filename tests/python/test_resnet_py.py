"""examples/resnet/resnet.py, the small ResNet on anatomy.nn: a CI-sized run on the CPU whose loss
starts near ln(10) and falls well below it, with the eval accuracy far above chance (also with
channels_last and AdamW); bad flags exit with 2."""

import importlib.util
import math
import pathlib

import pytest


ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "resnet" / "resnet.py"
TINY = ["--image-size", "16", "--batch", "16", "--log-every", "1", "--seed", "3", "--steps", "30"]


@pytest.fixture(scope="module")
def resnet():
    spec = importlib.util.spec_from_file_location("resnet", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("extra", [[], ["--channels-last"], ["--optimizer", "adamw"]])
def test_loss_falls_well_below_ln10(resnet, capsys, extra):
    losses, accuracy = resnet.main(TINY + extra)
    assert [s for s, _ in losses] == list(range(1, 31))
    assert abs(losses[0][1] - math.log(10)) < 0.7, losses[0]
    last = sum(v for _, v in losses[-5:]) / 5
    assert last < 0.5 * math.log(10), losses
    assert accuracy > 0.5
    out = capsys.readouterr().out
    assert "step 30/30  loss" in out and "steps/s" in out


def test_parameter_names_are_torchvisions(resnet):
    model = resnet.ResNet(10, 1)
    names = list(model.state_dict())
    assert names[:3] == ["conv1.weight", "bn1.weight", "bn1.bias"]
    assert "layer2.0.downsample.0.weight" in names and "layer2.0.downsample.1.running_var" in names
    assert "layer1.0.downsample.0.weight" not in names  # the first stage keeps its shape: identity shortcut
    assert names[-2:] == ["fc.weight", "fc.bias"]


@pytest.mark.parametrize("args", [["--steps", "0"], ["--batch", "-1"], ["--image-size", "2"], ["--lr", "-1"],
                                  ["--optimizer", "lamb"], ["--device", "tpu"], ["--noise", "nan"],
                                  ["--steps", "many"], ["--bogus"]])
def test_bad_flags_exit_2(resnet, capsys, args):
    with pytest.raises(SystemExit) as e:
        resnet.main(args)
    assert e.value.code == 2
    assert "error" in capsys.readouterr().err
