"""Upsample: F.interpolate as a layer (nearest or bilinear), with PyTorch's repr."""

from . import functional as F
from .module import Module

__all__ = ["Upsample"]


class Upsample(Module):
    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        if (size is None) == (scale_factor is None):
            raise ValueError("Upsample: only one of size or scale_factor should be defined" if size is not None
                             else "Upsample: either size or scale_factor should be defined")
        if mode not in F._INTERPOLATE_MODES:
            raise ValueError(f"Upsample: mode must be one of {', '.join(map(repr, F._INTERPOLATE_MODES))}, "
                             f"got {mode!r}")
        if mode not in ("nearest", "bilinear"):
            raise NotImplementedError(f"Upsample: mode {mode!r} is not implemented (only 'nearest' and 'bilinear' are)")
        if align_corners is not None and mode == "nearest":
            raise ValueError("Upsample: align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
        self.size = size
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor is not None else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):  # noqa: A002
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"
