"""Moved to harness.rundata (records and folder). This shim keeps branches that still
import harness.results working for the day; it goes before the last landing."""
from harness.rundata.folder import TrialLog, append_error, read_errors, read_run_header, read_trials, write_json  # noqa: F401
from harness.rundata.records import (  # noqa: F401
    ERRORS_SCHEMA, READABLE_SCHEMAS, SCHEMA_VERSION, STRATEGIES, TestRecord, TrialKey, TrialRecord,
)
