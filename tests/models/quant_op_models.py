#!/usr/bin/env python3
"""Writes single-op uint8 and int16 .tflite models (legacy per-tensor uint8 models, 16-bit activations), for
litert_compare.py --generate (ctest litert_quant_ops): Kiln's kernels for these types held byte for byte to
LiteRT's reference resolver op by op. The int8 models are int8_op_models.py's, whose model writer this reuses.

usage: quant_op_models.py OUT_DIR   (run with the Python of the LiteRT environment bench/litert_env.sh makes)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from int8_op_models import resize_ops  # noqa: E402


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    resize_ops(out, np.uint8, "qu8")
    resize_ops(out, np.int16, "q16")


if __name__ == "__main__":
    main()
