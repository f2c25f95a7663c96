#!/usr/bin/python3
"""configs/calibration/cudnn_tiles.py: what it reads off cuDNN's and cuBLAS's kernel names (cases
checked by hand against the naming rules in its docstrings), and that the conv files kept in
configs/calibration carry what their kernels give (a rule change re-derives them: `cudnn_tiles.py
FILE...`). Usage: test_cudnn_tiles.py SOURCE_DIR."""
import glob
import os
import sys

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(src, "configs", "calibration"))
import cudnn_tiles as ct  # noqa: E402

CASES = [
    # sm80 xmma: tilesize MxNxK, stage 5, warps 2x2x1 = 4; warp-level MMA; no cluster.
    ("sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize64x32x64_stage5_warpsize2x2x1_g1_"
     "tensor16x8x16_execute_kernel__5x_cudnn", "64x32x64:4:5", "mma.sync", None),
    # sm90 xmma: one warpgroup (4 warps); stages as many as 227 KiB hold: 232448 // (256*64*2) = 7.
    ("sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_g1_"
     "execute_segment_k_off_kernel__5x_cudnn", "128x128x64:4:7", "wgmma", "2x1"),
    # nvjet: {N}x{M}_{K}x{stages}_{cluster along N}x{along M}.
    ("nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT", "128x256x64:8:4", "wgmma", "2x1"),
    ("nvjet_sm90_hsh_64x56_64x14_4x2_h_bz_TNT", "56x64x64:8:14", "wgmma", "2x4"),
    # CUTLASS 2: 64x128 tile, K 32, 6 stages; 64*128/4096 = 2 -> at least 4 warps.
    ("void cutlass__5x_cudnn::Kernel<cutlass_tensorop_f16_s16816fprop_optimized_f16_64x128_32x6_nhwc_align8>("
     "cutlass_tensorop_f16_s16816fprop_optimized_f16_64x128_32x", "64x128x32:4:6", "mma.sync", None),
    # The first-layer kernel: Turing's HMMA 1688, no tile rule.
    ("sm90_xmma_fprop_image_first_layer_f16f16_f32_f16_nhwckrsc_nhwc_hmma_k64c4r7s7_stride2x2_tile16x64x64_"
     "tensor1688_execute_kernel_kernel__5x_cudnn", None, "mma.sync", None),
]

failures = []
for name, tile, mma, cluster in CASES:
    got = (ct.tile_from_kernels([name]), ct.mma_from_kernels([name]), ct.cluster_from_kernels([name]))
    if got != (tile, mma, cluster):
        failures.append(f"{name[:60]}: got {got}, expected {(tile, mma, cluster)}")
files = sorted(glob.glob(os.path.join(src, "configs", "calibration", "*_cudnn_conv*.json")) +
               glob.glob(os.path.join(src, "configs", "calibration", "*_kernel_probe*_conv.json")))
if len(files) < 6:
    failures.append(f"expected at least 6 conv files in configs/calibration, found {len(files)}")
failures += ct.check(files)
print("\n".join(failures) or f"{len(CASES)} names and {len(files)} files as their kernels say")
sys.exit(1 if failures else 0)
