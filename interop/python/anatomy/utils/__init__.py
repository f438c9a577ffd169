"""anatomy.utils: checkpoint (activation checkpointing), as torch.utils.checkpoint."""

from . import checkpoint

__all__ = ["checkpoint"]
