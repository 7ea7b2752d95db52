"""Read a Hugging Face config.json into an Architecture, family by family.

The families are those vLLM serves: each one says which keys it needs, which keys its
transformers config class defaults (so a config.json may omit them), how its layers attend
(full, sliding window, chunked local, cross-attention) and how its MoE and MLP are shaped.
Multimodal wrappers (Gemma 3, Llama 4, Mistral 3, Qwen2-VL, Kimi-VL, Llava, Mllama) are read
through their `text_config`, and their vision tower is counted into the weights. Anything the
planner cannot size is refused with the exact key that is missing or wrong.

One module per feature: `families` (the table), `reader` (one config with its defaults),
`attention` (windows, norms, positions, sizes), `moe` (experts and MLA), `vision` (the tower
and the wrapped text config), and `parse` (`from_hf_config`, which puts them together).
"""

from catalog.hf_config.families import FAMILIES, KNOWN_TYPES, REPLICATED_VISION, WRAPPERS, Family
from catalog.hf_config.parse import from_hf_config
from catalog.hf_config.reader import MAX_CONFIG_INT

__all__ = [
    "FAMILIES",
    "KNOWN_TYPES",
    "MAX_CONFIG_INT",
    "REPLICATED_VISION",
    "WRAPPERS",
    "Family",
    "from_hf_config",
]
