"""Checks every order parameter set goes through on /fapi (plain and conditional orders)."""

import re
from decimal import Decimal

from papertrade.fapi.errors import FapiError

CLIENT_ID_RE = re.compile(r"^[\.A-Z\:/a-z0-9_-]{1,36}$")
# Far above any instrument's maximum; refused here so no absurd magnitude reaches the kernel.
SANE_LIMIT = Decimal(10) ** 12


def _places(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def check_precision(value: Decimal, allowed: int) -> None:
    if _places(value.normalize()) > allowed:
        raise FapiError(400, -1111, "Precision is over the maximum defined for this asset.")
