"""Text: code, tests and edits taken out of a model's answer (extract, parsing) and the
prompt templates rendered (prompting). Below the task kinds, above nothing of the harness
but the registry."""
