"""The write policy: what may reach the store, and in what form.

Owns: argument validation against ``resources/manifest.json`` (``manifest``); secret
detection and redaction (``rule_types``, ``value_judgement``, ``key_rules``,
``assignment_rules``, ``structural_rules``, ``secret_rules``, ``token_formats``,
``provider_rules_dev``, ``provider_rules_saas``, ``secrets``, ``personal_numbers``)
and credential statements (``credentials``, ``password_phrases``,
``prose_words``, ``access_codes``, ``indirect_statements``); one screening of
every text field (``field_screening``, ``import_screening``, ``screening``) and
Ambry's own files (``own_files``);
injection neutralising and agent text (``sanitize``, ``agent_text``); trust
routing (``write_policy``); rate windows per agent (``ratelimit``).
May import: ``core.semantic``, ``core.storage``, ``core.model``.
"""
