"""anatomy.optim: AdamW, SGD and learning-rate schedules in Python, as torch.optim, updating the
parameters in place under no_grad (docs/nn.md, "From Python: anatomy.nn")."""

from . import lr_scheduler
from .adamw import AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "AdamW", "SGD", "lr_scheduler"]
