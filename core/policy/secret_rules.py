"""The contextual detectors behind :mod:`core.policy.secrets`, in the order they are tried.

The rules themselves live by what they recognise: the rule type in
:mod:`core.policy.rule_types`, the judgement of a value in
:mod:`core.policy.value_judgement`, the common providers' keys in
:mod:`core.policy.key_rules`, ``NAME=value`` in :mod:`core.policy.assignment_rules`
and key blocks, signed URLs, command flags, headers and URL credentials in
:mod:`core.policy.structural_rules`. The order matters where two rules' matches
overlap.
"""

from __future__ import annotations

from core.policy import assignment_rules, key_rules, structural_rules
from core.policy.rule_types import Rule

RULES: tuple[Rule, ...] = (
    structural_rules.PRIVATE_KEY_RULES
    + key_rules.RULES
    + assignment_rules.RULES
    + structural_rules.COMMAND_AND_URL_RULES
)
