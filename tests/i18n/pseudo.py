"""A pseudo-locale built at test time: every translation is "⟦" + msgid + "⟧".

Text that reaches a page without going through gettext shows up without the markers, so a
page rendered in this locale exposes every string nobody marked for translation.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import polib
from django.apps import apps
from django.conf import settings
from django.utils.translation import to_locale

from core.i18n_compile import compile_po

PSEUDO_CODE = "qps-ploc"
PSEUDO_LOCALE = to_locale(PSEUDO_CODE)  # "qps_Ploc"
OPEN, CLOSE = "⟦", "⟧"
CATALOG = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"


def pseudo(text: str) -> str:
    """Return `text` wrapped in the pseudo markers (placeholders stay as they are)."""
    return f"{OPEN}{text}{CLOSE}"


def _source_catalogs() -> list[Path]:
    """Return our catalog and the English catalogs of Django and every installed app."""
    import django

    sources = [CATALOG, _msgids_of(Path(django.__file__).parent / "conf" / "locale")]
    sources += [_msgids_of(Path(app.path) / "locale") for app in apps.get_app_configs()]
    return [p for p in sources if p is not None and p.exists()]


def _msgids_of(locale_dir: Path) -> Path | None:
    """Return a catalog of `locale_dir` holding every msgid: English's, else any language's."""
    english = locale_dir / "en" / "LC_MESSAGES" / "django.po"
    if english.exists():
        return english
    return next(iter(sorted(locale_dir.glob("*/LC_MESSAGES/django.po"))), None)


def build_pseudo_catalog(locale_dir: Path) -> Path:
    """Write and compile the pseudo django.po/.mo under `locale_dir`; return the .mo path."""
    out = polib.POFile()
    out.metadata = {
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
        "Language": PSEUDO_LOCALE,
        "Plural-Forms": "nplurals=2; plural=(n != 1);",
    }
    seen: set[tuple[str | None, str]] = set()
    for source in _source_catalogs():
        for entry in polib.pofile(str(source)):
            key = (entry.msgctxt, entry.msgid)
            if entry.obsolete or not entry.msgid or key in seen:
                continue
            seen.add(key)
            kwargs = {"msgid": entry.msgid, "msgctxt": entry.msgctxt}
            if entry.msgid_plural:
                kwargs["msgid_plural"] = entry.msgid_plural
                kwargs["msgstr_plural"] = {
                    0: pseudo(entry.msgid),
                    1: pseudo(entry.msgid_plural),
                }
            elif "," in entry.msgid and ", " not in entry.msgid:
                # Choice lists such as yesno's "yes,no,maybe": each item is shown on its own.
                kwargs["msgstr"] = ",".join(pseudo(item) for item in entry.msgid.split(","))
            else:
                kwargs["msgstr"] = pseudo(entry.msgid)
            out.append(polib.POEntry(**kwargs))
    target = locale_dir / PSEUDO_LOCALE / "LC_MESSAGES"
    target.mkdir(parents=True, exist_ok=True)
    po_path = target / "django.po"
    out.save(str(po_path))
    mo_path = target / "django.mo"
    compile_po(po_path, mo_path)
    return mo_path


# --- visible text ---------------------------------------------------------------------------

SKIPPED_ELEMENTS = {"script", "style", "code", "pre", "kbd", "samp", "textarea", "template"}
VOID_ELEMENTS = {
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
    "track", "wbr",
}  # fmt: skip
# Attributes a reader sees or hears (tooltips, placeholders, screen readers), and the data-*
# attributes our JavaScript shows as text (chart titles, empty states, button feedback).
VISIBLE_ATTRIBUTES = {
    "title", "placeholder", "aria-label", "alt", "aria-description",
    "data-title", "data-empty", "data-empty-never", "data-empty-down", "data-copied-label",
    "data-confirm", "data-hline-name",
}  # fmt: skip
BUTTON_INPUTS = {"submit", "button", "reset"}


class VisibleText(HTMLParser):
    """Collect (where, text) pairs a reader sees, skipping code and translate="no" subtrees."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []  # (tag, skipped)
        self.found: list[tuple[str, str]] = []

    @property
    def skipping(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def _path(self) -> str:
        return ">".join(tag for tag, _ in self.stack[-3:])

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        skipped = (
            self.skipping or tag in SKIPPED_ELEMENTS or (values.get("translate") or "") == "no"
        )
        if not skipped:
            for name, value in attrs:
                if value and (
                    name in VISIBLE_ATTRIBUTES
                    or (name == "value" and tag == "input" and values.get("type") in BUTTON_INPUTS)
                ):
                    self.found.append((f"{tag}[{name}]", value))
        if tag not in VOID_ELEMENTS:
            self.stack.append((tag, skipped))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID_ELEMENTS and self.stack and self.stack[-1][0] == tag:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        # Browsers forgive unclosed elements: pop to the matching open tag, if any.
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        if not self.skipping and data.strip():
            self.found.append((self._path(), data))


def visible_text(html: str) -> list[tuple[str, str]]:
    """Return the (element path, text) pairs of `html` a reader sees."""
    parser = VisibleText()
    parser.feed(html)
    parser.close()
    return parser.found


_INNERMOST = re.compile(f"{OPEN}[^{OPEN}{CLOSE}]*{CLOSE}")
_SEP = "\x00"


def strip_marked(text: str) -> str:
    """Remove every ⟦…⟧ span, innermost first (a translation may embed other translations)."""
    previous = None
    while previous != text:
        previous, text = text, _INNERMOST.sub(lambda m: " " + _SEP * m[0].count(_SEP), text)
    return text


def unmarked_fragments(found: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """Return (where, original text, text left unmarked) for every piece of `found`.

    The pieces are joined before the markers are removed: a translation holding markup
    ({% blocktranslate %}See <code>x</code> here{% endblocktranslate %}) opens its marker in
    one text node and closes it in a later one.
    """
    if not found:
        return []
    joined = _SEP.join(text for _, text in found)
    left = strip_marked(joined).split(_SEP)
    return [(where, text, rest) for (where, text), rest in zip(found, left, strict=True)]


# Words that are not English prose to a reader of any language: product and vendor names,
# units, protocol and engine names. Anything else made only of letters is a finding.
ALLOWED_WORDS = {
    # products, vendors, projects
    "ServePlan", "vLLM", "Ray", "Serve", "Nginx", "nginx", "Envoy", "LiteLLM", "SGLang",
    "RadixAttention", "Docker", "Plotly", "NVIDIA", "GeForce", "NVLink", "NVSwitch", "InfiniBand",
    "RoCE", "PCIe", "Ethernet", "Intel", "AMD", "CUDA", "NCCL", "Gloo", "Prometheus", "Grafana",
    "Swagger", "Ansible", "Vault", "systemd", "docker", "podman", "chrony", "keepalived",
    "OpenAI", "Hugging", "Face", "Celery", "Redis", "PostgreSQL", "Django",
    # model families
    "llama", "Llama", "qwen", "Qwen", "mistral", "Mistral", "mixtral", "Mixtral", "deepseek",
    "DeepSeek", "qwen2", "qwen3", "qwen3_moe",
    # units
    "GiB", "MiB", "KiB", "GB", "MB", "KB", "Gb", "Mb", "GbE", "tok", "ms", "s", "min", "h",
    "B", "M", "K", "k", "W", "TFLOPS",
    # engine vocabulary kept verbatim in both languages (busbw: nccl-tests' column name)
    "MoE", "GQA", "MLA", "MHA", "busbw",
    # loanwords Chinese practitioners write in English inside Chinese text (see docs/i18n.md)
    "decode", "prefill", "token", "Worker", "Actor", "bundle", "stage", "pending", "rank",
    "Dashboard", "Webhook", "Bearer", "Markdown", "Agent", "Hopper", "Ada", "Slurm", "Bundle",
    "torch", "Graph", "YaRN", "RoPE", "auto",
    "mp", "ray", "vllm", "dtype", "bf16", "fp16", "fp8", "int8", "int4", "awq", "gptq", "yarn",
    "least_conn", "round_robin", "p50", "p95", "p99",
}  # fmt: skip
COMMANDS = {"vllm", "ray", "docker", "nginx", "systemctl", "make"}
# Only letters (and an inner apostrophe): identifiers, hosts, versions, paths contain other
# characters and are not prose.
_WORD = re.compile(r"^[A-Za-z]+(?:'[a-z]+)?$")
_ACRONYM = re.compile(r"^[A-Z0-9]{2,}s?$")


def english_words(text: str) -> list[str]:
    """Return the words of `text` (markers already removed) that look like English prose."""
    found = []
    after_flag = False
    previous = ""
    for raw in text.split():
        command, previous = previous in COMMANDS, raw
        if command and raw.islower():  # a subcommand: "ray start", "vllm serve"
            continue
        if after_flag and not raw.startswith("-"):  # the value of --flag value
            after_flag = False
            continue
        after_flag = raw.lstrip("（(").startswith("--")
        if raw.lstrip("（(").startswith("-") and len(raw) > 1:  # a command-line flag
            continue
        if re.match(r"^\(?\.\w", raw):  # a file name such as .env
            continue
        token = raw.strip(".,;:!?()[]{}\"'«»“”‘’…·—–-/|*#+=<>%×≈≥≤→←✓✗")
        if not token or not _WORD.match(token):
            continue
        if token in ALLOWED_WORDS or _ACRONYM.match(token):
            continue
        if len(token) == 1:  # a variable or an axis name: x, n, A (route letters)
            continue
        found.append(token)
    return found
