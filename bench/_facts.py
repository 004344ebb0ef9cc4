"""A synthetic fact corpus with paraphrased questions, for the recall benchmark.

Each template states a fact one way and asks about it other ways, with as few
shared words as a person would naturally manage. Slots are filled so that no two
facts answer the same question (the question's slots are unique per template),
while many facts share names, relations and values: the distractors a real store
of thousands of memories holds. Deterministic for a seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

PEOPLE = (
    "Alex Priya Jonas Mei Tomasz Aisha Lucas Sofia Kenji Ingrid Omar Elena Ravi Chloe Mateo "
    "Hana Felix Zara Nikolai Amara Diego Yuki Leah Samir Freya Arjun Noor Pablo Greta Idris "
    "Marta Theo Lina Kwame Rosa Emil Sana Hugo Alma Tariq Vera Bruno Ines Malik Clara Dev "
    "Astrid Rahul Nadia Oscar"
).split()
RELATIONS = "sister brother mother father cousin manager neighbour roommate aunt uncle".split()
PETS = "dog cat parrot rabbit hamster tortoise".split()
PET_NAMES = "Luna Biscuit Pepper Mochi Rocky Olive Ziggy Nala Toffee Juniper".split()
CITIES = (
    "Lisbon Osaka Toronto Nairobi Krakow Melbourne Bogota Oslo Seville Hanoi Dublin Austin "
    "Porto Lyon Tallinn"
).split()
FOODS = "peanuts shellfish gluten dairy eggs sesame soy kiwi strawberries mustard".split()
DRINKS = (
    "oat-milk flat whites",
    "green tea",
    "dark roast coffee",
    "sparkling water",
    "chai lattes",
    "hot chocolate",
)
LANGS = "Rust Python TypeScript Go Kotlin Elixir Haskell Swift".split()
EDITORS = ("Neovim", "Emacs", "VS Code", "Helix", "Zed", "Sublime Text")
SPORTS = "bouldering swimming cycling tennis rowing yoga fencing running".split()
INSTRUMENTS = "cello piano ukulele trumpet violin drums".split()
JOBS = (
    "nurse",
    "architect",
    "pilot",
    "data analyst",
    "teacher",
    "chef",
    "lawyer",
    "carpenter",
)
MONTHS = "January February March April May June July August September October".split()
CARS = ("a red Volvo", "an electric Kia", "a vintage Beetle", "a grey Toyota", "a blue Fiat")
BOOKS = ("science fiction", "crime novels", "poetry", "history books", "graphic novels")

# (fact, questions): {p} person, {r} relation; other slots are the answer.
TEMPLATES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "{p}'s {pet} is named {petname}",
        ("What is {p}'s {pet} called?", "What name did {p} give the {pet}?"),
    ),
    (
        "{p} is allergic to {food}",
        ("What food must {p} avoid?", "Which ingredient gives {p} a bad reaction?"),
    ),
    (
        "{p}'s {r} lives in {city}",
        ("Where is {p}'s {r} based?", "Which city is {p}'s {r} living in?"),
    ),
    (
        "{p} drinks {drink} every morning",
        ("What does {p} like to have to start the day?", "What is {p}'s usual morning beverage?"),
    ),
    (
        "{p} writes most of their code in {lang}",
        ("Which programming language does {p} favour?", "What does {p} usually program with?"),
    ),
    (
        "{p} edits text in {editor}",
        ("Which editor is {p} comfortable with?", "What tool does {p} use for writing code?"),
    ),
    (
        "{p} goes {sport} on weekends",
        ("How does {p} stay active?", "What exercise does {p} do on Saturdays?"),
    ),
    (
        "{p} has been learning the {instrument}",
        ("Which instrument is {p} practising?", "What music lessons is {p} taking?"),
    ),
    (
        "{p}'s {r} works as a {job}",
        ("What does {p}'s {r} do for a living?", "What is the occupation of {p}'s {r}?"),
    ),
    (
        "{p}'s birthday is in {month}",
        ("When does {p} celebrate turning a year older?", "Which month was {p} born in?"),
    ),
    ("{p} drives {car}", ("What vehicle does {p} own?", "What kind of car does {p} have?")),
    (
        "{p} mostly reads {book}",
        ("What sort of literature does {p} enjoy?", "What genre does {p} pick up at the library?"),
    ),
    (
        "{p} moved to {city} last year",
        ("Where did {p} relocate to recently?", "Which city is {p}'s new home?"),
    ),
    (
        "{p} is vegetarian and never eats {food2}",
        ("Does {p} have any dietary restrictions?", "What meat does {p} refuse?"),
    ),
    (
        "{p} wants their stand-up notes in {lang} style bullet points",
        (
            "How should {p}'s meeting summaries be formatted?",
            "What format does {p} expect for daily updates?",
        ),
    ),
)
MEATS = "pork beef chicken lamb duck veal".split()


@dataclass(frozen=True)
class Fact:
    content: str
    questions: tuple[str, ...]


def _fill(template: str, slots: dict[str, str]) -> str:
    return template.format(**slots)


def facts(n: int, seed: int = 7) -> list[Fact]:
    """``n`` facts, each with its paraphrased questions; question keys never repeat."""
    rng = random.Random(seed)
    out: list[Fact] = []
    used: set[tuple[int, str, str, str]] = set()
    misses = 0
    while len(out) < n:
        if misses > 200_000:
            raise SystemExit(f"the templates hold about {len(out):,} distinct facts, not {n:,}")
        t = rng.randrange(len(TEMPLATES))
        fact, questions = TEMPLATES[t]
        slots = {
            "p": rng.choice(PEOPLE)
            + rng.choice(("", "", " " + rng.choice("BCDFGHKLMNPRSTW") + ".")),
            "r": rng.choice(RELATIONS),
            "pet": rng.choice(PETS),
            "petname": rng.choice(PET_NAMES),
            "city": rng.choice(CITIES),
            "food": rng.choice(FOODS),
            "food2": rng.choice(MEATS),
            "drink": rng.choice(DRINKS),
            "lang": rng.choice(LANGS),
            "editor": rng.choice(EDITORS),
            "sport": rng.choice(SPORTS),
            "instrument": rng.choice(INSTRUMENTS),
            "job": rng.choice(JOBS),
            "month": rng.choice(MONTHS),
            "car": rng.choice(CARS),
            "book": rng.choice(BOOKS),
        }
        uses_r = "{r}" in fact
        uses_pet = "{pet}" in fact
        key = (t, slots["p"], slots["r"] if uses_r else "", slots["pet"] if uses_pet else "")
        if key in used:
            misses += 1
            continue
        misses = 0
        used.add(key)
        out.append(Fact(_fill(fact, slots), tuple(_fill(q, slots) for q in questions)))
    return out


def keyword_queries(corpus: list[Fact], count: int, seed: int = 11) -> list[tuple[str, int]]:
    """Queries made of words the fact itself contains (what keyword search is for)."""
    rng = random.Random(seed)
    picked = rng.sample(range(len(corpus)), min(count, len(corpus)))
    out = []
    for i in picked:
        words = [w.strip("'s.,") for w in corpus[i].content.split()]
        words = [w for w in words if len(w) > 3]
        out.append((" ".join(rng.sample(words, min(3, len(words)))), i))
    return out
