"""Run the simulator until interrupted: `python -m monitoring.simulator [--port P] [--vllm N]`."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading

from .server import DEFAULT_PORT, Simulator


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m monitoring.simulator", description=__doc__)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="base port (0: any free)")
    parser.add_argument("--vllm", type=int, default=3, help="number of simulated vLLM servers")
    parser.add_argument("--no-ray", action="store_true", help="do not simulate a Ray cluster")
    parser.add_argument("--no-faults", action="store_true", help="no restarts, no slow scrapes")
    parser.add_argument(
        "--gpu-machines",
        type=int,
        default=None,
        help="simulated GPU machines (default: demo fleet)",
    )
    parser.add_argument(
        "--gpu-offset", type=int, default=0, help="index of the first GPU machine (load tests)"
    )
    parser.add_argument("--day-s", type=float, default=1800.0, help="length of a simulated day")
    parser.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        help="multiply the OpenAI API's token timings (below 1: a faster server, for load tests)",
    )
    args = parser.parse_args(argv)
    sim = Simulator(
        port=args.port,
        vllm_count=args.vllm,
        ray=not args.no_ray,
        faults=not args.no_faults,
        gpu_machines=args.gpu_machines,
        gpu_offset=args.gpu_offset,
        day_s=args.day_s,
        time_scale=args.time_scale,
    )
    targets = sim.start()
    print(json.dumps([t.as_dict() for t in targets]), flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with contextlib.suppress(KeyboardInterrupt):
        stop.wait()
    sim.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
