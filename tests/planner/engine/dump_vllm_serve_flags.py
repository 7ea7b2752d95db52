"""Print every `vllm serve` --flag of the installed vLLM, one per line.

Run with the vLLM venv's python (scripts/ensure-vllm-venv), never ServePlan's.
"""

from vllm.entrypoints.cli.serve import ServeSubcommand
from vllm.utils.argparse_utils import FlexibleArgumentParser

parser = FlexibleArgumentParser()
serve = ServeSubcommand().subparser_init(parser.add_subparsers())
flags = {s for action in serve._actions for s in action.option_strings if s.startswith("--")}
print("\n".join(sorted(flags)))
