"""Deterministic synthetic memories and queries for the benchmarks."""

from __future__ import annotations

import random

TYPES = ("preference", "fact", "instruction", "context", "correction")
SUBJECTS = (
    "User",
    "The user",
    "Their manager",
    "The team",
    "Alex",
    "Priya",
    "The client",
    "Their partner",
    "The build server",
    "The staging cluster",
)
VERBS = (
    "prefers",
    "uses",
    "dislikes",
    "works on",
    "maintains",
    "asked about",
    "scheduled",
    "deployed",
    "reviewed",
    "mentioned",
    "forgot",
    "recommended",
    "migrated",
    "tested",
)
NOUNS = (
    "TypeScript",
    "Python",
    "Rust",
    "espresso",
    "green tea",
    "the Carapace project",
    "Kubernetes",
    "Postgres",
    "SQLite",
    "dark mode",
    "vim",
    "emacs",
    "Tuesday standups",
    "quarterly reports",
    "the billing service",
    "a dog named Luna",
    "a cat named Miso",
    "hiking",
    "the Lyon office",
    "the Berlin office",
    "pull requests",
    "unit tests",
    "the release checklist",
    "on-call rotations",
    "nginx",
    "Redis",
    "the mobile app",
    "accessibility audits",
    "invoices",
    "the design system",
    "GraphQL",
    "cron jobs",
    "backups",
    "the VPN",
    "keyboard shortcuts",
    "markdown notes",
    "the monorepo",
)
TAILS = (
    "for new projects",
    "every morning",
    "since last spring",
    "when under deadline",
    "on weekends",
    "for the demo",
    "after the outage",
    "in code reviews",
    "at home",
    "during travel",
    "for client work",
    "before lunch",
    "with the new laptop",
)
TAGS = (
    "work",
    "home",
    "coding",
    "pets",
    "food",
    "travel",
    "ops",
    "people",
    "tools",
    "schedule",
    "health",
    "finance",
    "music",
    "reading",
    "projects",
)


def make_words(rng: random.Random, count: int) -> list[str]:
    """A vocabulary of pronounceable made-up words, to give the index a long tail."""
    syll = ("ka", "lo", "mi", "ren", "tas", "vo", "qui", "zen", "dor", "pha", "lu", "sen")
    return ["".join(rng.choice(syll) for _ in range(rng.randint(2, 4))) for _ in range(count)]


def memories(n: int, seed: int = 7) -> list[dict[str, object]]:
    rng = random.Random(seed)
    rare = make_words(rng, 5000)
    out: list[dict[str, object]] = []
    for i in range(n):
        words = " ".join(rng.choice(rare) for _ in range(rng.randint(1, 6)))
        content = (
            f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(NOUNS)} "
            f"{rng.choice(TAILS)}; note {words} #{i}"
        )
        out.append(
            {
                "type": TYPES[i % len(TYPES)],
                "content": content,
                "tags": rng.sample(TAGS, rng.randint(0, 3)),
            }
        )
    return out


def queries(count: int = 200, seed: int = 11) -> list[str]:
    """A mix of one-word, multi-word, rare-word, question-like and hostile queries."""
    rng = random.Random(seed)
    rare = make_words(random.Random(7), 5000)
    out: list[str] = []
    for i in range(count):
        match i % 8:
            case 0:
                out.append(rng.choice(NOUNS))
            case 1:
                out.append(f"what does the user think about {rng.choice(NOUNS)}")
            case 2:
                out.append(rng.choice(rare))
            case 3:
                out.append(f"{rng.choice(VERBS)} {rng.choice(NOUNS)} {rng.choice(TAILS)}")
            case 4:
                out.append(f"{rng.choice(rare)} {rng.choice(rare)}")
            case 5:
                out.append(f'NOT "{rng.choice(NOUNS)}" (AND*')
            case 6:
                out.append(rng.choice(TAGS))
            case _:
                out.append(f"{rng.choice(SUBJECTS)} {rng.choice(NOUNS)}")
    return out
