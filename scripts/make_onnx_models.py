#!/usr/bin/python3
"""Test models for npusim's ONNX reader (frontends/onnx): torch.onnx.export of torchvision networks.

Run with Debian's Python (`/usr/bin/python3`), which has python3-torch, python3-torchvision and
python3-onnx (`scripts/setup --models` installs them). Weights are random (nothing is downloaded):
MAC counts and shapes do not depend on them. Models already in the folder are kept unless --force.

  make_onnx_models.py OUT_DIR [--only resnet18,vit_b_16] [--force] [--list]

Writes into OUT_DIR (batch 1, 3x224x224 images; see docs/format_onnx.md):
  resnet18.onnx, resnet50.onnx, mobilenet_v2.onnx   opset 13 (BatchNormalization folded by the exporter)
  vit_b_16.onnx                                     opset 17 (LayerNormalization; GELU as its Erf form)
  transformer_encoder.onnx                          opset 13 (LayerNorm as ReduceMean/Sub/Pow/... ; GELU as Erf)
The tests (tests/unit/onnx/onnx_models_test.cpp) look for them in build/onnx_models/:
  cmake --build build --target onnx_models     # or: scripts/make_onnx_models.py build/onnx_models
"""
import argparse
import os
import sys
import time


def build(name):
    import torch
    import torchvision

    if name in ("resnet18", "resnet50", "mobilenet_v2", "vit_b_16"):
        ctor = getattr(torchvision.models, name, None)
        if ctor is None:
            return None, None, None
        return ctor(weights=None), torch.randn(1, 3, 224, 224), (17 if name == "vit_b_16" else 13)
    if name == "transformer_encoder":
        # 2 layers, d_model 256, 4 heads, FFN 1024, GELU; [seq 64, batch 1, 256] (batch_first False).
        layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, dropout=0.1,
                                                 activation="gelu")
        return torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False), \
            torch.randn(64, 1, 256), 13
    raise ValueError(name)


MODELS = ["resnet18", "resnet50", "mobilenet_v2", "vit_b_16", "transformer_encoder"]


def export(name, path):
    import torch

    model, x, opset = build(name)
    if model is None:
        print(f"make_onnx_models: {name}: this torchvision has no {name}, skipped")
        return False
    model.eval()
    tmp = path + ".tmp"
    t0 = time.time()
    torch.onnx.export(model, (x,), tmp, opset_version=opset, do_constant_folding=True,
                      training=torch.onnx.TrainingMode.EVAL, input_names=["input"], output_names=["output"])
    os.replace(tmp, path)
    print(f"make_onnx_models: {path} (opset {opset}, {os.path.getsize(path) / 1e6:.1f} MB, "
          f"{time.time() - t0:.1f} s)")
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", nargs="?", help="folder to write the .onnx files into")
    ap.add_argument("--only", default="", help="comma-separated subset of: " + ", ".join(MODELS))
    ap.add_argument("--force", action="store_true", help="re-export models that exist already")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    a = ap.parse_args()
    if a.list:
        print("\n".join(MODELS))
        return 0
    if not a.out:
        ap.error("the output folder is required")
    names = [n for n in a.only.split(",") if n] or MODELS
    for n in names:
        if n not in MODELS:
            ap.error(f"unknown model {n!r}; known: {', '.join(MODELS)}")
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as e:
        print(f"make_onnx_models: needs python3-torch and python3-torchvision (scripts/setup --models): {e}",
              file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    for n in names:
        path = os.path.join(a.out, n + ".onnx")
        if os.path.exists(path) and not a.force:
            print(f"make_onnx_models: {path} exists, kept")
            continue
        export(n, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
