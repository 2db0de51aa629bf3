"""A synthetic but realistic DSH session corpus for the conversation-search benchmark.

Writes real `session.jsonl` logs in the DSH layout: per turn a direct user message, steps with packed
reasoning and text chunk rows, assistant messages (text, reasoning and tool-call blocks), tool calls
and bulky tool results, injected plugin context, titles, and sometimes a compaction checkpoint that
replaces the surface so far. Words follow a Zipf law over a vocabulary of English stop words,
technical terms, identifiers, accented words and synthetic words; a few sessions are written in
Chinese (no spaces between words). Everything is derived from one seed, so runs are comparable.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import random
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from sessionref.store.layout import encode_session_segment, project_key

STOP_WORDS = [
    "the",
    "to",
    "a",
    "of",
    "and",
    "is",
    "in",
    "it",
    "that",
    "for",
    "this",
    "we",
    "you",
    "i",
    "on",
    "be",
    "with",
    "not",
    "are",
    "as",
    "can",
    "if",
    "have",
    "was",
    "but",
    "at",
    "or",
    "so",
    "do",
    "from",
    "will",
    "an",
    "by",
    "my",
    "what",
    "there",
    "just",
    "should",
    "all",
    "me",
    "use",
    "now",
    "one",
    "also",
    "then",
    "which",
    "when",
    "let",
    "here",
    "would",
    "need",
    "like",
    "make",
    "could",
    "its",
    "out",
    "up",
    "into",
    "no",
    "more",
    "they",
    "any",
    "some",
    "how",
    "get",
    "see",
    "check",
    "run",
    "our",
    "new",
]
TECH_WORDS = [
    "file",
    "test",
    "function",
    "error",
    "value",
    "code",
    "session",
    "index",
    "query",
    "table",
    "config",
    "build",
    "server",
    "request",
    "response",
    "migration",
    "database",
    "schema",
    "commit",
    "branch",
    "merge",
    "release",
    "deploy",
    "docker",
    "container",
    "kernel",
    "thread",
    "process",
    "memory",
    "cache",
    "buffer",
    "stream",
    "socket",
    "timeout",
    "retry",
    "budget",
    "latency",
    "throughput",
    "parser",
    "lexer",
    "token",
    "compiler",
    "runtime",
    "module",
    "package",
    "import",
    "export",
    "interface",
    "struct",
    "pointer",
    "postgres",
    "sqlite",
    "redis",
    "kafka",
    "nginx",
    "terraform",
    "kubernetes",
    "python",
    "rust",
    "typescript",
    "javascript",
    "golang",
    "benchmark",
    "profile",
    "regression",
    "flaky",
    "fixture",
    "snapshot",
    "assertion",
    "coverage",
    "lint",
    "format",
    "refactor",
    "rename",
    "compaction",
    "checkpoint",
    "reference",
    "mention",
    "picker",
    "preview",
    "widget",
    "terminal",
    "render",
    "layout",
    "unicode",
    "escape",
    "encoding",
    "decoding",
    "serialization",
    "authentication",
    "authorization",
    "token",
    "credential",
    "permission",
    "sandbox",
    "approval",
    "workspace",
    "directory",
    "folder",
    "path",
    "history",
    "transcript",
    "summary",
    "keystroke",
    "debounce",
    "cancellation",
    "signal",
    "interrupt",
    "deadline",
    "scheduler",
    "worker",
    "queue",
    "backlog",
    "incident",
    "outage",
    "rollback",
    "hotfix",
    "postmortem",
    "alert",
    "metric",
    "dashboard",
    "trace",
    "span",
    "logging",
    "migrate",
    "migrating",
    "migrated",
    "migrations",
    "integer",
    "internal",
    "interest",
    "interval",
    "intent",
    "integration",
]
IDENTIFIERS = [
    "pg_dump",
    "pg_restore",
    "max_connections",
    "retry_budget",
    "--no-owner",
    "--jobs",
    "/etc/nginx/nginx.conf",
    "src/store/index.py",
    "HTTP/2",
    "v1.2.3",
    "0x1f2e",
    "e.g.",
    "i.e.",
    "OAuth2",
    "UTF-8",
    "SIGTERM",
    "ENOSPC",
    "x86_64",
    "C++",
    "node_modules",
    "__init__",
    "std::vector",
    "Vec<u8>",
    "async/await",
    "CI/CD",
    "k8s",
    "SELECT",
    "INSERT",
    "NEAR",
    "AND",
    "OR",
    "NOT",
]
ACCENTED = [
    "café",
    "naïve",
    "résumé",
    "Zürich",
    "Müller",
    "façade",
    "jalapeño",
    "São",
    "Ångström",
    "déjà",
    "über",
    "señor",
    "crème",
]
CJK_CHARS = (
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后"
    "小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长"
    "知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最"
    "间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市"
    "眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计"
    "数据库迁移索引查询缓存服务器配置测试部署回滚事故预算延迟线程进程内存网络协议接口模块函数变量编译运行"
)
CJK_PUNCTUATION = "，。；：！？"
SAMPLE_EVERY = 97
BASE_TIME = 1_760_000_000_000
YEAR_MS = 365 * 86_400_000


@dataclass
class Vocabulary:
    """Words by Zipf rank with cumulative weights for `random.choices`."""

    words: list[str]
    cumulative: list[float]
    cjk_words: list[str]
    cjk_cumulative: list[float]

    def rank_band(self, low: int, high: int) -> list[str]:
        """The words ranked in [low, high)."""
        return self.words[low:high]


def _zipf_cumulative(count: int, exponent: float) -> list[float]:
    return list(itertools.accumulate(1.0 / (rank + 1) ** exponent for rank in range(count)))


def build_vocabulary(rng: random.Random, size: int = 60_000) -> Vocabulary:
    """Stop words first, technical words, identifiers and accented words spread over the head, then
    synthetic words made of syllables; CJK words of 2-4 characters with their own Zipf law."""
    onsets = [
        "",
        "b",
        "c",
        "d",
        "f",
        "g",
        "h",
        "k",
        "l",
        "m",
        "n",
        "p",
        "r",
        "s",
        "t",
        "v",
        "w",
        "z",
        "br",
        "cr",
        "dr",
        "gr",
        "pl",
        "pr",
        "st",
        "tr",
        "sh",
        "ch",
        "th",
        "sp",
        "qu",
    ]
    vowels = ["a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y"]
    codas = ["", "", "n", "r", "s", "t", "l", "m", "nd", "ng", "st", "x", "ck", "tion", "ment", "er", "ing"]
    seen: set[str] = set(STOP_WORDS) | set(TECH_WORDS) | set(IDENTIFIERS) | set(ACCENTED)
    synthetic: list[str] = []
    while len(synthetic) < size:
        word = "".join(
            rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas)
            for _ in range(rng.choice((1, 2, 2, 2, 3, 3, 4)))
        )
        if len(word) >= 2 and word not in seen:
            seen.add(word)
            synthetic.append(word)
    words = list(STOP_WORDS)
    specials = [*TECH_WORDS, *IDENTIFIERS, *ACCENTED]
    rng.shuffle(specials)
    # Specials land at ranks ~100..20,000 (log-uniform), between synthetic words.
    slots = sorted(int(math.exp(rng.uniform(math.log(100), math.log(20_000)))) for _ in specials)
    rest = iter(synthetic)
    for slot, special in zip(slots, specials, strict=True):
        while len(words) < slot:
            words.append(next(rest))
        words.append(special)
    words.extend(itertools.islice(rest, size - len(words)))
    cjk_seen: set[str] = set()
    cjk_words: list[str] = []
    char_weights = _zipf_cumulative(len(CJK_CHARS), 0.9)
    while len(cjk_words) < 4_000:
        length = rng.choice((2, 2, 2, 2, 3, 4))
        word = "".join(rng.choices(CJK_CHARS, cum_weights=char_weights, k=length))
        if word not in cjk_seen:
            cjk_seen.add(word)
            cjk_words.append(word)
    return Vocabulary(
        words, _zipf_cumulative(len(words), 1.0), cjk_words, _zipf_cumulative(len(cjk_words), 1.0)
    )


def _clamp(value: float, low: int, high: int) -> int:
    return max(low, min(high, int(value)))


@dataclass
class TextMaker:
    """Sentences of Zipf words (or CJK runs) of a requested length."""

    vocabulary: Vocabulary
    rng: random.Random

    def latin(self, count: int) -> str:
        """`count` words as sentences with capitals, full stops, sometimes a newline or backticks."""
        words = self.rng.choices(self.vocabulary.words, cum_weights=self.vocabulary.cumulative, k=count)
        pieces: list[str] = []
        start = True
        for index, word in enumerate(words):
            if start:
                word = word[:1].upper() + word[1:]
                start = False
            pieces.append(word)
            if index % 13 == 12:
                pieces[-1] += "."
                start = True
                if index % 39 == 38:
                    pieces[-1] += "\n"
        text = " ".join(pieces).replace("\n ", "\n")
        return text + "." if pieces and not text.endswith(".") else text

    def cjk(self, count: int) -> str:
        """About `count` CJK words run together, punctuated, with an occasional Latin term."""
        words = self.rng.choices(
            self.vocabulary.cjk_words, cum_weights=self.vocabulary.cjk_cumulative, k=count
        )
        pieces: list[str] = []
        for index, word in enumerate(words):
            pieces.append(word)
            if index % 9 == 8:
                pieces.append(self.rng.choice(CJK_PUNCTUATION))
            elif index % 23 == 11:
                pieces.append(" " + self.rng.choice(TECH_WORDS) + " ")
        return "".join(pieces) + "。"

    def text(self, count: int, cjk: bool) -> str:
        """Latin or CJK text of about `count` words."""
        return self.cjk(count) if cjk else self.latin(count)


@dataclass
class CorpusStats:
    """What was written."""

    sessions: int = 0
    projected_messages: int = 0
    log_bytes: int = 0
    text_bytes: int = 0
    paths: list[Path] = field(default_factory=list)
    cwds: list[str] = field(default_factory=list)
    # session id -> (cwd, last event time) for the search's folder and recency tie-breaks
    sessions_facts: dict[str, tuple[str | None, int]] = field(default_factory=dict)
    # every SAMPLE_EVERY-th direct prompt or answer, to build realistic queries from
    samples: list[str] = field(default_factory=list)


class _Log:
    """Events of one session under construction."""

    def __init__(self, start: int) -> None:
        self.lines: list[str] = []
        self.seq = 0
        self.time = start
        self.surface: list[int] = []

    def add(self, kind: str, data: dict, *, surface: object = None, sources: list[int] | None = None) -> int:
        seq = self.seq
        self.time += 7
        record: dict = {"type": kind, "seq": seq, "time": self.time, "data": data}
        if sources is not None:
            record["sourceEventSeqs"] = sources
        if surface is not None:
            record["surfaceOp"] = surface
        self.lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        self.seq += 1
        return seq

    def packed(self, kind: str, turn: int, step: int, index: int, texts: list[str]) -> None:
        """A packed chunk row covering len(texts) seqs (reasoning or text deltas)."""
        data = {"turn": turn, "step": step, "index": index, "dt": [3] * (len(texts) - 1), "texts": texts}
        record = {"type": kind, "seq0": self.seq, "time0": self.time, "data": data}
        self.lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        self.seq += len(texts)
        self.time += 3 * len(texts)


def _deltas(text: str) -> list[str]:
    parts = text.split(" ")
    return [parts[0], *(" " + part for part in parts[1:])]


def _user_length(rng: random.Random) -> int:
    if rng.random() < 0.03:  # a pasted log or document
        return _clamp(rng.lognormvariate(math.log(600), 0.8), 50, 8_000)
    return _clamp(rng.lognormvariate(math.log(14), 0.9), 1, 400)


def _answer_length(rng: random.Random) -> int:
    return _clamp(rng.lognormvariate(math.log(120), 0.7), 10, 3_000)


def _tool_output(rng: random.Random) -> str:
    lines = rng.randrange(3, 60)
    return "\n".join(
        f"-rw-r--r-- 1 dev dev {rng.randrange(100, 99999):>6} {rng.choice(TECH_WORDS)}_{n}.py"
        for n in range(lines)
    )


def write_session(
    root: Path, maker: TextMaker, rng: random.Random, cwd: str | None, stats: CorpusStats
) -> None:
    """One realistic session log under `root`."""
    session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    created = BASE_TIME + rng.randrange(YEAR_MS)
    cjk = rng.random() < 0.04
    header: dict = {"type": "session", "version": 0, "id": session_id, "createdAt": created}
    if cwd is not None:
        header["cwd"] = cwd
    header["delegationDepth"] = 0
    log = _Log(created)
    turns = 1 + int(rng.lognormvariate(math.log(4.6), 1.0))
    compact_at = rng.randrange(3, turns) if turns > 8 and rng.random() < 0.15 else None
    for turn in range(1, turns + 1):
        log.time += rng.randrange(5_000, 900_000)
        log.add("turn/start", {"turn": turn})
        if rng.random() < 0.2:
            context = "Current runtime context. " + maker.latin(40)
            seq = log.add(
                "user/message",
                {
                    "content": [{"type": "text", "text": context}],
                    "source": {"kind": "plugin", "plugin": "ctx"},
                    "role": "user",
                    "id": f"c{turn}",
                },
                surface="append",
            )
            log.surface.append(seq)
        prompt = maker.text(_user_length(rng), cjk)
        stats.text_bytes += len(prompt.encode())
        stats.projected_messages += 1
        if stats.projected_messages % SAMPLE_EVERY == 0:
            stats.samples.append(prompt)
        seq = log.add(
            "user/message",
            {
                "source": {"kind": "user"},
                "content": [{"type": "text", "text": prompt}],
                "role": "user",
                "id": f"u{turn}",
            },
            surface="append",
        )
        log.surface.append(seq)
        if turn == 1:
            title = " ".join(prompt.split()[:6])
            log.add(
                "session/title",
                {"title": title or "untitled", "messageSeqs": [seq], "source": {"kind": "fallback"}},
            )
        steps = 1 + min(6, int(rng.expovariate(1 / 1.6)))
        for step in range(1, steps + 1):
            final = step == steps
            log.add("step/start", {"turn": turn, "step": step})
            reasoning = maker.latin(rng.randrange(5, 40))
            log.packed("reasoning-chunks", turn, step, 0, _deltas(reasoning))
            content: list[dict] = [{"type": "reasoning", "text": reasoning}]
            if final or rng.random() < 0.55:
                answer = maker.text(_answer_length(rng) if final else rng.randrange(4, 30), cjk)
                log.packed("text-chunks", turn, step, 1, _deltas(answer))
                content.append({"type": "text", "text": answer})
                stats.text_bytes += len(answer.encode())
                stats.projected_messages += 1
                if stats.projected_messages % SAMPLE_EVERY == 0:
                    stats.samples.append(answer)
            call_id = f"call_{turn}_{step}"
            if not final:
                arguments = json.dumps({"command": f"ls {rng.choice(TECH_WORDS)}"})
                content.append({"type": "tool-call", "id": call_id, "name": "bash", "arguments": arguments})
            log.add("assistant/chunk", {"turn": turn, "step": step, "chunk": {"type": "finish"}})
            seq = log.add(
                "assistant/message",
                {
                    "turn": turn,
                    "step": step,
                    "message": {
                        "id": f"a{turn}.{step}",
                        "role": "assistant",
                        "content": content,
                        "source": {"kind": "model", "provider": "bench", "model": "bench-1"},
                    },
                },
                surface="append",
            )
            log.surface.append(seq)
            if not final:
                log.add(
                    "tool/call",
                    {"turn": turn, "step": step, "callId": call_id, "name": "bash", "arguments": arguments},
                )
                seq = log.add(
                    "tool/result",
                    {
                        "turn": turn,
                        "step": step,
                        "message": {
                            "source": {"kind": "tool", "callId": call_id},
                            "content": [
                                {
                                    "type": "tool-result",
                                    "toolCallId": call_id,
                                    "content": [{"type": "text", "text": _tool_output(rng)}],
                                }
                            ],
                            "role": "tool",
                            "id": f"t{turn}.{step}",
                        },
                    },
                    surface="append",
                )
                log.surface.append(seq)
            log.add("step/end", {"turn": turn, "step": step})
        log.add("turn/end", {"turn": turn, "reason": "done"})
        if turn == compact_at:
            summary = "Summary of the conversation so far. " + maker.text(rng.randrange(60, 300), cjk)
            stats.text_bytes += len(summary.encode())
            stats.projected_messages += 1
            shadowed = list(log.surface)
            seq = log.add(
                "user/message",
                {
                    "source": {"kind": "plugin", "plugin": "compact", "compactionId": f"k{turn}"},
                    "content": [{"type": "text", "text": summary}],
                    "role": "user",
                    "id": f"k{turn}",
                },
                surface={"op": "replace", "start": shadowed[0], "end": shadowed[-1]},
                sources=shadowed,
            )
            log.surface = [seq]
    folder = root / project_key(cwd) / encode_session_segment(session_id)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "session.jsonl"
    data = (
        json.dumps(header, ensure_ascii=False, separators=(",", ":")) + "\n" + "\n".join(log.lines) + "\n"
    ).encode("utf-8")
    path.write_bytes(data)
    stats.log_bytes += len(data)
    stats.sessions += 1
    stats.paths.append(path)
    stats.sessions_facts[session_id] = (cwd, log.time)


def build_corpus(root: Path, sessions: int, seed: int = 10) -> tuple[Vocabulary, CorpusStats]:
    """Write `sessions` logs under `root`; the projected message count is counted (without compaction
    shadowing, so it is an upper bound)."""
    rng = random.Random(seed)
    vocabulary = build_vocabulary(rng)
    maker = TextMaker(vocabulary, rng)
    stats = CorpusStats()
    stats.cwds = [f"/home/dev/src/project-{n}" for n in range(max(8, sessions // 400))]
    cwd_weights = _zipf_cumulative(len(stats.cwds), 1.0)
    for _ in range(sessions):
        cwd = (
            None
            if rng.random() < 0.05
            else stats.cwds[bisect.bisect(cwd_weights, rng.random() * cwd_weights[-1])]
        )
        write_session(root, maker, rng, cwd, stats)
    return vocabulary, stats
