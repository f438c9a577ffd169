"""anatomy.Size: the type of Tensor.shape and Tensor.size(), a tuple of ints like torch.Size."""


class Size(tuple):
    """A tensor's sizes: a tuple of ints that prints as anatomy.Size([2, 3])."""

    __slots__ = ()

    def __repr__(self):
        return f"anatomy.Size({list(self)})"

    def numel(self):
        """The number of elements of a tensor of these sizes."""
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        item = super().__getitem__(key)
        return Size(item) if isinstance(key, slice) else item

    def __add__(self, other):
        return Size(tuple.__add__(self, other))
