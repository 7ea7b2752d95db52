"""Parse `vllm serve` argument vectors with vLLM's own parser; print one error per bad vector.

Reads a JSON list of argv lists (each starting after `vllm`, i.e. ["serve", MODEL, ...]) on
stdin. Run with the vLLM venv's python (scripts/ensure-vllm-venv), never ServePlan's.
"""

import json
import sys

from vllm.entrypoints.cli.serve import ServeSubcommand
from vllm.utils.argparse_utils import FlexibleArgumentParser

failures = 0
for argv in json.load(sys.stdin):
    parser = FlexibleArgumentParser(exit_on_error=False)
    ServeSubcommand().subparser_init(parser.add_subparsers(dest="subparser"))
    try:
        args = parser.parse_args(argv)
    except (SystemExit, Exception) as exc:  # argparse errors, or a flag's own check
        failures += 1
        print(f"{argv}: {exc!r}")
        continue
    if args.model_tag != argv[1]:
        failures += 1
        print(f"{argv}: parsed model {args.model_tag!r}")
sys.exit(1 if failures else 0)
