"""Every English template of the engine's messages, written once and marked for extraction.

`TEMPLATES` maps each message code (planner/engine/messages.py) to its English text, the action
of a pitfall, the short name of a signal, and the DOMAIN.md rules and source articles it cites.
`N_` and `NC_` only mark the strings: `manage.py makemessages` (core/management/commands/
makemessages.py) tells xgettext about them, so every template has one catalog entry, and
planner/presentation/messages.py renders it in the reader's language. Pure Python: the engine's
own tests and the API read English from here too.
"""

from __future__ import annotations

from planner.engine.messages import NC_, Code, Term
from planner.presentation.template_types import Template
from planner.presentation.templates_phrases import PHRASE_TEMPLATES
from planner.presentation.templates_reasons import REASON_TEMPLATES
from planner.presentation.templates_signals import SIGNAL_AND_PITFALL_TEMPLATES

TEMPLATES: dict[Code, Template] = {
    **REASON_TEMPLATES,
    **SIGNAL_AND_PITFALL_TEMPLATES,
    **PHRASE_TEMPLATES,
}


# The words the engine uses as values, with a context that keeps them apart from the same
# English elsewhere in the interface.
TERM_CONTEXT = "engine value"
TERMS: dict[Term, str] = {
    Term.ETHERNET: NC_("engine value", "ethernet"),
    Term.ROCE: NC_("engine value", "RoCE"),
    Term.INFINIBAND: NC_("engine value", "InfiniBand"),
    Term.NVLINK: NC_("engine value", "NVLink"),
    Term.PCIE: NC_("engine value", "PCIe"),
    Term.NONE: NC_("engine value", "none"),
    Term.STEADY: NC_("engine value", "steady"),
    Term.DIURNAL: NC_("engine value", "day/night"),
    Term.BURSTY: NC_("engine value", "bursty"),
    Term.DEDICATED: NC_("engine value", "dedicated"),
    Term.SHARED: NC_("engine value", "shared"),
    Term.TTFT: NC_("engine value", "TTFT"),
    Term.ITL: NC_("engine value", "inter-token latency"),
}
