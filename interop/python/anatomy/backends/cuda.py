"""anatomy.backends.cuda.matmul: the cuBLAS products' switches (torch.backends.cuda.matmul)."""

from anatomy.backends._switch import Switch, Switches


class MatmulSwitches(Switches):
    """fp32 products on TF32 tensor cores (off by default), fp16/bf16 split-k reductions in the
    half type (on), fp16 accumulation (off)."""

    allow_tf32 = Switch("allow_tf32_matmul", "set_allow_tf32_matmul")
    allow_fp16_reduced_precision_reduction = Switch(
        "allow_fp16_reduced_precision_reduction", "set_allow_fp16_reduced_precision_reduction"
    )
    allow_bf16_reduced_precision_reduction = Switch(
        "allow_bf16_reduced_precision_reduction", "set_allow_bf16_reduced_precision_reduction"
    )
    allow_fp16_accumulation = Switch("allow_fp16_accumulation", "set_allow_fp16_accumulation")


matmul = MatmulSwitches()

__all__ = ["matmul"]
