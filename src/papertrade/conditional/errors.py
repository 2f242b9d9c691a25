"""Errors of conditional orders."""

from papertrade.errors import Conflict, NotFound


class ConditionalNotFound(NotFound):
    code = "conditional_not_found"


class ConditionalNotOpen(Conflict):
    code = "conditional_not_open"


class DuplicateClientAlgoId(Conflict):
    code = "duplicate_client_algo_id"
