"""Synthetic prompts of the asked token counts, counted by the server's own tokenizer.

Nothing is downloaded: the server's `/tokenize` (vLLM's) counts. Prompts are built from common
English words. Words that the server's tokenizer takes as exactly one token after another word
make a prompt of n tokens out of (n − the anchor's tokens) words in one go; a sample is checked
and, when the tokenizer merges across words after all, every prompt is adjusted word by word.
Without a tokenizer one word is taken as one token and the prompts are marked inexact.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

TokenCounter = Callable[[str], Awaitable[int]]

ANCHOR = "Hello"
_COMMON_WORDS = (
    "the of and to in is that for it as was with be by on not he this are or his from at which "
    "but have an had they you were their one all we can her has there been if more when will "
    "would who so no time year people way day man thing woman life child world school state "
    "family student group country problem hand part place case week company system program "
    "question work government number night point home water room mother area money story fact "
    "month lot right study book eye job word business issue side kind head house service friend"
)
# Single letters too: a small tokenizer (the tests' tiny Llama has 512 tokens) may know few
# whole words, but a letter after a space is one token in most byte-level vocabularies.
WORDS = (*_COMMON_WORDS.split(), *"abcdefghijklmnopqrstuvwxyz")
MIN_POOL = 2  # two words already make every prompt distinct past its first few tokens
ADJUST_ROUNDS = 8
CHECKED_PROMPTS = 4
PARALLEL_COUNTS = 8


@dataclass(frozen=True, slots=True)
class PromptSet:
    prompts: tuple[str, ...]
    exact: bool  # True when the server's tokenizer confirmed every asked count


def _words(rng: random.Random, pool: Sequence[str], n: int) -> list[str]:
    return [rng.choice(pool) for _ in range(max(0, n))]


def _text(prefix: list[str], body: list[str]) -> str:
    return " ".join([ANCHOR, *prefix, *body])


async def _single_token_words(count: TokenCounter) -> tuple[int, list[str]]:
    """Return the anchor's token count and the words that add exactly one token after it."""
    base = await count(ANCHOR)
    sem = asyncio.Semaphore(PARALLEL_COUNTS)

    async def one(word: str) -> bool:
        async with sem:
            return await count(f"{ANCHOR} {word}") == base + 1

    flags = await asyncio.gather(*(one(w) for w in WORDS))
    return base, [w for w, ok in zip(WORDS, flags, strict=True) if ok]


async def _adjust(
    count: TokenCounter,
    target: int,
    words: list[str],
    pool: Sequence[str],
    rng: random.Random,
    prefix: list[str],
    base: int,
) -> tuple[str, bool]:
    """Add or drop words until the server counts `target` tokens (or the rounds run out)."""
    best = _text(prefix, words)
    for _ in range(ADJUST_ROUNDS):
        got = await count(best)
        if got == target:
            return best, True
        # Scale the word count by tokens per word, then step by single words when close.
        per_word = max(1.0, (got - base) / max(len(words), 1))
        step = max(1, round(abs(target - got) / per_word))
        if got < target:
            words = words + _words(rng, pool, step)
        else:
            words = words[: max(0, len(words) - step)]
        best = _text(prefix, words)
    return best, await count(best) == target


async def build_prompts(
    lengths: Sequence[int],
    *,
    shared_prefix_fraction: float = 0.0,
    count: TokenCounter | None = None,
    seed: int = 0,
) -> PromptSet:
    """Return one prompt per asked input length, distinct but for the shared prefix."""
    rng = random.Random(seed)
    base, pool = (1, list(WORDS)) if count is None else await _single_token_words(count)
    if len(pool) < MIN_POOL:
        pool = list(WORDS)
    longest = max(lengths, default=0)
    common = _words(rng, pool, round(shared_prefix_fraction * longest))
    drafts = []
    for n in lengths:
        words = max(0, n - base)
        prefix = common[: round(shared_prefix_fraction * words)]
        drafts.append((n, prefix, _words(rng, pool, words - len(prefix))))
    prompts = [_text(prefix, body) for _, prefix, body in drafts]
    if count is None:
        return PromptSet(tuple(prompts), exact=False)
    sample = range(0, len(drafts), max(1, len(drafts) // CHECKED_PROMPTS))
    checks = await asyncio.gather(*(count(prompts[i]) for i in sample))
    if all(got == drafts[i][0] for i, got in zip(sample, checks, strict=True)):
        return PromptSet(tuple(prompts), exact=True)
    sem = asyncio.Semaphore(PARALLEL_COUNTS)

    async def fix(n: int, prefix: list[str], body: list[str]) -> tuple[str, bool]:
        async with sem:
            return await _adjust(count, n, body, pool, rng, prefix, base)

    fixed = await asyncio.gather(*(fix(*d) for d in drafts))
    return PromptSet(tuple(p for p, _ in fixed), exact=all(ok for _, ok in fixed))
