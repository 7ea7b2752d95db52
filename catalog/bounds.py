"""The largest hardware figures the planner accepts: one source for the engine and the inventory.

planner/engine/spec.py refuses a spec beyond them, and the inventory refuses to store a GPU type,
machine or NIC beyond them (its validators import these), so no stored figure can make every plan
on it fail, or overflow a sum such as the fleet summary's. Each is well above any real part (the
largest in gpus.json: 192 GiB, 7,700 GB/s HBM, 2,250 dense BF16 TFLOPS, 1,800 GB/s NVLink).
"""

GPU_MEMORY_GIB_MAX = 4096.0  # memory and driver-visible memory of one GPU
GPU_BANDWIDTH_GBS_MAX = 100_000.0  # HBM and NVLink bandwidth of one GPU
GPU_TFLOPS_MAX = 100_000.0  # dense BF16 compute of one GPU
GPUS_PER_NODE_MAX = 64
NIC_SPEED_GBPS_MAX = 10_000.0
