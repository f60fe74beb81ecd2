"""The run-data layer: records, run folders, frames, metrics, a run's numbers and their wording.

Knows nothing of the CLI, the report or the view; they all render what it computes.
"""
from harness.rundata.folder import FolderError, RunFolder, TrialLog, append_error, load, read_errors, read_run_header, \
    read_trials, write_json
from harness.rundata.records import (
    READABLE_SCHEMAS, SCHEMA_VERSION, ErrorRecord, RecordError, RunHeader, TestRecord, TrialKey,
    TrialRecord,
)

__all__ = [
    "FolderError", "RunFolder", "TrialLog", "append_error", "load", "read_errors", "read_run_header", "read_trials",
    "write_json", "READABLE_SCHEMAS", "SCHEMA_VERSION", "ErrorRecord", "RecordError", "RunHeader",
    "TestRecord", "TrialKey", "TrialRecord",
]
