"""The pure session-reference contract: standard library only, no I/O (docs/architecture.md).

URIs and mentions (`uri`), JavaScript-compatible JSON (`js_json`), text retention
(`text_retainer`), projection of a surface (`projection`), fitting one reference into its byte
budget (`reference_budget`), the context message (`context_message`, `omissions`), title rules
(`titles`), the contract's limits and choices (`options`) and its errors (`errors`).
"""
