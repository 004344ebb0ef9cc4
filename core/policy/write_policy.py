"""The write policy: what happens to content between the caller and the store.

Order (DESIGN.md, "Policy"): credential statements are refused → definite and
probable secrets are redacted → agent-written and low-trust content has
injection markers neutralised → trust routing decides ``active`` or ``candidate``. Schema
validation comes before (core.policy.manifest) and rate limits and the audit record
after (core.service), so every front end gets the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.model.config import Config
from core.model.entries import Actor, Source, SourceType, Status, Trust
from core.model.errors import InvalidParams, Refused
from core.policy.field_screening import screen_field
from core.policy.sanitize import neutralize

#: Trust when the caller names a source type but no trust (seed 001's table).
DEFAULT_TRUST: dict[SourceType, Trust] = {
    SourceType.USER_MESSAGE: Trust.HIGH,
    SourceType.TOOL_OUTPUT: Trust.MEDIUM,
    SourceType.WEB_CONTENT: Trust.LOW,
    SourceType.AI_INFERENCE: Trust.LOW,
    SourceType.EXPLICIT_SAVE: Trust.HIGH,
    SourceType.OPERATOR: Trust.HIGH,
}
#: Source types only the person can use.
OPERATOR_ONLY = frozenset({SourceType.OPERATOR, SourceType.EXPLICIT_SAVE})
_TRUST_ORDER = {Trust.LOW: 0, Trust.MEDIUM: 1, Trust.HIGH: 2}


@dataclass(frozen=True)
class Verdict:
    """What the policy decided for one write."""

    content: str
    tags: tuple[str, ...]
    source: Source
    status: Status
    review_reason: str | None
    #: Pattern names of the secrets replaced by ``[SECRET_REDACTED]``.
    redacted: tuple[str, ...]
    #: Names of the injection markers neutralised.
    neutralized: tuple[str, ...]


def resolve_source(actor: Actor, source_type: SourceType | None, trust: Trust | None) -> Source:
    """The source of a write, from what the caller claimed and who the caller is.

    An agent that names nothing is taken as an AI inference at medium trust (so
    that, as seed 000 argues, ordinary agent writes need no review). An agent
    can never claim a source reserved for the person, nor high trust, nor more
    trust than the source it names allows (:data:`DEFAULT_TRUST`).
    """
    if actor is not Actor.AGENT:
        kind = source_type or SourceType.OPERATOR
        return Source(kind, trust or DEFAULT_TRUST[kind])
    if source_type in OPERATOR_ONLY:
        raise InvalidParams(
            f"source.type {source_type} is reserved for the person; agents may use "
            "user_message, tool_output, web_content or ai_inference",
            field="source.type",
            rule="enum",
        )
    if trust is Trust.HIGH:
        raise InvalidParams(
            "source.trust high is reserved for the person; agents may claim medium or low",
            field="source.trust",
            rule="enum",
        )
    if source_type is None:
        return Source(SourceType.AI_INFERENCE, trust or Trust.MEDIUM)
    # Trust follows the source: an agent may claim less than its source allows,
    # never more ("web_content at medium" is still low, and goes to review).
    ceiling = DEFAULT_TRUST[source_type]
    if _TRUST_ORDER[ceiling] > _TRUST_ORDER[Trust.MEDIUM]:
        ceiling = Trust.MEDIUM
    if trust is None or _TRUST_ORDER[trust] > _TRUST_ORDER[ceiling]:
        trust = ceiling
    return Source(source_type, trust)


def apply(
    actor: Actor,
    content: str,
    tags: tuple[str, ...],
    source: Source,
    config: Config,
    *,
    known: tuple[str, ...] = (),
) -> Verdict:
    """Run the pipeline on one write; raises :class:`Refused` for a credential statement.

    Tags are screened like the content: a credential statement in a tag refuses
    the write, a tag that held a secret is dropped, and a possible secret in a
    tag sends the entry to review. ``known`` are exact values never to store.
    """
    try:
        cleaned = screen_field(content, "content", known=known)
    except Refused as exc:
        raise Refused(
            f"not stored: {exc.data['reason']}. Ambry never keeps credentials; store a note "
            "about where the secret lives instead (for example 'the API key is in 1Password')",
            reason=exc.data["reason"],
        ) from None
    redacted = list(cleaned.redacted)
    possible = list(cleaned.possible)
    safe_tags: list[str] = []
    for i, tag in enumerate(tags):
        t = screen_field(tag, f"tags.{i}", known=known)
        redacted += t.redacted
        possible += t.possible
        if t.redacted:
            continue  # a tag that was a secret is dropped, not kept as a placeholder
        safe_tags.append(tag)
    text = cleaned.text
    neutralized: tuple[str, ...] = ()
    # Whatever an agent writes can reach the next session's brief, whatever it
    # claims about the source; the person's own words are kept as typed.
    if source.trust is Trust.LOW or actor is Actor.AGENT:
        text, neutralized = neutralize(text)

    status, review = Status.ACTIVE, None
    if source.trust is Trust.LOW:
        status, review = Status.CANDIDATE, f"low-trust source ({source.type})"
    elif possible and not (actor is Actor.OPERATOR and source.trust is Trust.HIGH):
        # The person's own words are theirs to judge: a commit hash they type is kept.
        status = Status.CANDIDATE
        review = "possible secret (" + ", ".join(sorted(set(possible))) + ")"
    elif actor is Actor.AGENT and config.review_agent_writes:
        status, review = Status.CANDIDATE, "every agent write is reviewed (setting)"
    if possible and status is Status.CANDIDATE and review and "possible secret" not in review:
        review += "; possible secret (" + ", ".join(sorted(set(possible))) + ")"
    return Verdict(
        content=text,
        tags=tuple(safe_tags),
        source=source,
        status=status,
        review_reason=review,
        redacted=tuple(redacted),
        neutralized=neutralized,
    )
