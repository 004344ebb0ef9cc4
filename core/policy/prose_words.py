"""The words that make a clause talk about a credential rather than give one.

A password said in a sentence has no shape of its own, so what follows "the
password is" is judged by the words a clause is made of: "the password is
required", "is stored in the vault" and "is expiring soon" talk about it;
"is swordfish" and "is correct horse battery staple" give it. These lists and
shapes are shared by :mod:`core.policy.credentials`,
:mod:`core.policy.password_phrases` and :mod:`core.policy.indirect_statements`.
"""

from __future__ import annotations

import re

#: Words that follow "the password is" in ordinary talk about passwords.
NOT_A_VALUE = frozenset(
    """a an the in on at for from with without to of by not never no too very also still
    always now being been here there this that it what which who how where when whatever
    something anything nothing same different my your our their his her its mine yours
    required optional mandatory needed necessary missing empty blank set unset stored saved
    kept managed handled hidden masked encrypted hashed salted protected secure insecure
    safe unsafe weak strong long short wrong right correct incorrect invalid valid expired
    revoked rotated reset changed updated new old temporary random generated unique shared
    personal private public secret sensitive case-sensitive compromised leaked known unknown
    forgotten lost fine ok okay good bad great complex simple obvious easy hard ready active
    inactive enabled disabled locked unlocked deprecated outdated configured defined
    undefined null none present absent available unavailable sent passed used usually
    generally typically only just probably please must should will can may might
    does did str bytes int bool optional""".split()
)
#: Where a clause ends: a closing quote or bracket, then a stop, a comma and the like
#: (before a space or the end), or the end of the line or of the text.
CLAUSE_END = r"[\"')\]]*(?:[.,;:!?](?:\s|\Z)|[ \t]*(?:\r?\n|\Z))"
#: Units a number before them measures ("the PIN is 4 digits").
UNITS = frozenset(
    "characters chars character digits digit letters letter symbols long days hours minutes "
    "weeks months years times attempts".split()
)
#: Words that follow "with password" as one noun ("log in with password authentication").
COMPOUNDS = frozenset(
    "authentication auth login logins logon signin sign-in protection prompt prompts reset "
    "resets manager managers policy policies field fields hash hashes hashing change changes "
    "expiry expiration rotation recovery rules requirements access entry input hint hints "
    "strength length complexity support fallback entries file files store vault list".split()
)
#: Function words: a phrase that has one after its first word is a sentence, not a
#: passphrase ("the passphrase is asked for on every push").
FUNCTION_WORDS = frozenset(
    """a an the and or but nor so yet for of to in on at by with from into onto over under
    about as than then that this these those it its is are was were be been being has have
    had do does did will would can could should may might must shall not no your my our
    their his her them they we you he she i me us which who whom whose what when where why
    how if unless because while until some any each every all both either neither such same
    other another there here also too very just only even still already again enough via
    per""".split()
)
#: Verbs that open an instruction ("passphrase: ask Bob tomorrow"), not a passphrase.
INSTRUCTIONS = frozenset(
    "ask see check use pick choose contact call talk look find get try read type enter "
    "create make write keep store put send share generate copy paste follow".split()
)
PROSE_WORDS = FUNCTION_WORDS | NOT_A_VALUE | UNITS
#: Words a clause about a password is made of and a made-up phrase is not: the
#: function words, and the adverbs and prepositions of place and time that say
#: where or when ("written down somewhere", "shared between staging and prod",
#: "stolen last week").
CLAUSE_WORDS = FUNCTION_WORDS | frozenset(
    """between among across along around behind beyond inside outside within through
    throughout toward towards upon since though although whether once like unlike near
    despite except plus minus versus vs up down out off away somewhere anywhere everywhere
    nowhere elsewhere upstairs downstairs indoors outdoors underneath beneath overhead ago
    yesterday today tonight tomorrow last next""".split()
)
#: A first word shaped as a participle or an adverb makes "is" a verb of the clause
#: ("is shared between ...", "is rarely used", "is expiring soon"), not the "is" of a value.
PREDICATE = re.compile(r"[a-z]{3,}(?<!e)ed|[a-z]{3,}ing|[a-z]{3,}ly")
#: A lone word that reads as a participle, before "but" or "and", is a verb of the
#: clause ("the password is accepted but login fails", "is working and ...").
PARTICIPLE = re.compile(r"[a-z]{3,}(?<!e)ed|[a-z]{3,}ing")
#: A word shaped as an adjective says what a password is like ("is machine
#: readable", "is user specific", "is case sensitive", "the wifi key is different").
ADJECTIVE = re.compile(r"[a-z]+(?:able|ible|ic|al|ive|ous|ful|less|ent|ant|ary|ory|ish)")
#: Words that qualify a password rather than spell one ("is factory default", "is
#: plain text", "is pretty standard") or say what it is made of ("is email
#: address", "is company name", "is username backwards").
QUALIFIERS = frozenset(
    """default factory plain clear text cleartext plaintext standard usual normal common
    quite pretty rather fairly super way real kinda sorta wide based only name names
    firstname lastname surname username nickname initials email address phone birthday
    birthdate date word words phrase backwards reversed lowercase uppercase caps nonsense
    gibberish""".split()
)
#: The words of a judgement of a password's strength ("is weak", "is far too
#: simple", "is easy to guess"): what follows it after "e.g." is an example.
JUDGEMENTS = frozenset(
    """weak strong simple easy hard complex obvious bad good short long common guessable
    predictable insecure secure terrible awful trivial typical poor too very really quite
    pretty so way far super extremely rather fairly to guess crack remember type""".split()
)
#: A clause after "but", "and" or "so" that asks to keep what came before to
#: oneself, or says how to type it ("... dumpling but don't share it", "and keep
#: it to yourself", "so it's case sensitive"): what came before was the value.
KEEP_QUIET = re.compile(
    r"[ \t]+(?:(?:please[ \t]+)?(?:don['\u2019]?t|do[ \t]+not|never)[ \t]+"
    r"(?:share|tell|give|post|send|show|repeat|spread|leak|say)"
    r"(?:[ \t]+(?:it|this|anyone|anybody|with|to|out|around)(?![\w-])|[ \t]*(?:[.,;:!?)]|\Z))"
    r"|keep[ \t]+it[ \t]+(?:secret|private|quiet|safe|to[ \t]+(?:yourself|yourselves|us)"
    r"|between[ \t]+us)"
    r"|it['\u2019]?s[ \t]+(?:a[ \t]+)?secret"
    r"|(?:it['\u2019]?s[ \t]+)?(?:case[ \t-]sensitive|all[ \t]+(?:lower|upper|small)[ \t-]?case))",
    re.IGNORECASE,
)
