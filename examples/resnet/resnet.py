#!/usr/bin/env python3
"""resnet.py: the resnet example (model.cpp, main.cpp) from Python, on anatomy.nn and
anatomy.optim: a 3x3 stem, three stages of BasicBlocks (conv3x3-BN-ReLU, conv3x3-BN, plus the
shortcut: the identity or a strided conv1x1-BN) at 16, 32 and 64 channels, global average pooling
and a linear head, trained with SGD (momentum 0.9) or AdamW and cross_entropy on synthetic images:
class k is a fixed random pattern plus fresh noise. It prints the loss, steps/s, and the accuracy
on fresh images in eval mode (by the running statistics).

    PYTHONPATH=build/python python examples/resnet/resnet.py --steps 100 --image-size 16 --batch 32
"""

import argparse
import math
import sys
import time

import anatomy
from anatomy import nn, optim
from anatomy.nn import functional as F

CLASSES = 10
EVAL_IMAGES = 512


class BasicBlock(nn.Module):
    def __init__(self, in_channels, channels, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.downsample = None
        if stride != 1 or in_channels != channels:
            self.downsample = nn.Sequential(nn.Conv2d(in_channels, channels, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(channels))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.downsample is None else self.downsample(x)))


def stage(in_channels, channels, blocks, stride):
    return nn.Sequential(*[BasicBlock(in_channels if i == 0 else channels, channels, stride if i == 0 else 1)
                           for i in range(blocks)])


class ResNet(nn.Module):
    """The parameters' names are torchvision's ("layer2.0.downsample.0.weight")."""

    def __init__(self, num_classes, blocks):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = stage(16, 16, blocks, 1)
        self.layer2 = stage(16, 32, blocks, 2)
        self.layer3 = stage(32, 64, blocks, 2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.layer3(self.layer2(self.layer1(h)))
        return self.fc(self.flatten(self.avgpool(h)))


class SyntheticImages:
    """Class k: a fixed N(0, 1) pattern [3, size, size] plus N(0, noise^2) noise in every sample."""

    def __init__(self, classes, size, noise, device):
        self.patterns = anatomy.randn(classes, 3, size, size)
        self.noise = noise
        self.device = device

    def batch(self, n):
        labels = anatomy.randint(0, self.patterns.shape[0], (n,))
        images = self.patterns.index_select(0, labels) + anatomy.randn(n, *self.patterns.shape[1:]) * self.noise
        return images.to(self.device), labels.to(self.device)


def as_input(images, channels_last):
    return images.contiguous(memory_format=anatomy.channels_last) if channels_last else images


def _number(kind, check, what):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
        if not (math.isfinite(value) and check(value)):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
        return value
    return parse


def parse_args(argv):
    positive = _number(int, lambda v: v > 0, "positive")
    p = argparse.ArgumentParser(description="trains a small ResNet on synthetic images with anatomy.nn")
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    p.add_argument("--channels-last", action="store_true", help="feed the images in channels_last (NHWC) layout")
    p.add_argument("--optimizer", choices=("sgd", "adamw"), default="sgd",
                   help="sgd (momentum 0.9, weight decay 5e-4) or adamw")
    p.add_argument("--steps", type=positive, default=200, help="training steps")
    p.add_argument("--batch", type=positive, default=64, help="images per step")
    p.add_argument("--lr", type=_number(float, lambda v: v > 0, "positive"), default=None,
                   help="learning rate (default: sgd 0.05, adamw 2e-3)")
    p.add_argument("--image-size", type=_number(int, lambda v: v >= 4, "at least 4"), default=32,
                   help="image height and width")
    p.add_argument("--blocks", type=positive, default=1, help="BasicBlocks per stage")
    p.add_argument("--noise", type=_number(float, lambda v: v >= 0, "not negative"), default=1.0,
                   help="standard deviation of the noise on the class patterns")
    p.add_argument("--seed", type=_number(int, lambda v: v >= 0, "not negative"), default=0)
    p.add_argument("--log-every", type=positive, default=10, help="print the loss every N steps")
    args = p.parse_args(argv)
    try:
        device = anatomy.device(args.device)
    except Exception as e:  # noqa: BLE001 (any refusal of the name is a usage error)
        p.error(f"--device '{args.device}' is not a device (cpu, cuda, cuda:1, ...): {e}")
    if device.type not in ("cpu", "cuda"):
        p.error(f"--device '{args.device}': resnet trains on cpu or cuda")
    if device.type == "cuda" and (device.index or 0) >= anatomy.cuda.device_count():
        p.error(f"--device {args.device}: this machine has {anatomy.cuda.device_count()} CUDA device(s)")
    if args.lr is None:
        args.lr = 0.05 if args.optimizer == "sgd" else 2e-3
    return args, device


def main(argv=None):
    """Trains as the flags say; returns [(step, loss)] of the logged steps and the eval accuracy."""
    args, device = parse_args(sys.argv[1:] if argv is None else argv)
    anatomy.manual_seed(args.seed)
    data = SyntheticImages(CLASSES, args.image_size, args.noise, device)
    model = ResNet(CLASSES, args.blocks).to(device)
    # Made after the model moved to its device (docs/nn.md, "Conversions").
    if args.optimizer == "sgd":
        opt = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    else:
        opt = optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"resnet.py: {n_params} parameters, 3x{args.image_size}x{args.image_size} images of {CLASSES} classes, "
          f"{device}{', channels_last' if args.channels_last else ''}, {args.optimizer}")
    print(f"ln({CLASSES} classes) = {math.log(CLASSES):.4f}")
    losses = []
    start = time.perf_counter()
    model.train()
    for step in range(1, args.steps + 1):
        images, labels = data.batch(args.batch)
        loss = F.cross_entropy(model(as_input(images, args.channels_last)), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % args.log_every == 0 or step in (1, args.steps):
            value = loss.item()
            losses.append((step, value))
            print(f"step {step}/{args.steps}  loss {value:.6f}", flush=True)
    seconds = time.perf_counter() - start
    print(f"trained {args.steps} steps in {seconds:.2f} s: {args.steps / seconds:.2f} steps/s")
    model.eval()
    with anatomy.no_grad():
        images, labels = data.batch(EVAL_IMAGES)
        predicted = model(as_input(images, args.channels_last)).argmax(1)
        accuracy = predicted.eq(labels).double().mean().item()
    print(f"eval: accuracy {accuracy:.4f} on {EVAL_IMAGES} fresh images")
    return losses, accuracy


if __name__ == "__main__":
    main()
