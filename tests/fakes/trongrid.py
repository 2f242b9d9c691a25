"""A fake TronGrid on 127.0.0.1, for tests only: GET /v1/accounts/{address}/transactions/trc20.

It answers in TronGrid's shape from the transfers a test adds, honours the filters the watcher
sends (only_to, contract_address, min_timestamp, order_by asc, limit) and pages with
`meta.fingerprint`. It records every request (to check the query and the API key header).
"""

import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
ADDRESS = "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"  # our receiving address in the tests
SENDER = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"


@dataclass
class FakeTronGrid:
    transfers: list[dict[str, Any]] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    page_size: int | None = None  # force small pages to exercise the fingerprint
    fail_with: int | None = None

    def add(
        self,
        amount: Decimal | str,
        *,
        to: str = ADDRESS,
        at_ms: int | None = None,
        token: str = USDT,
        kind: str = "Transfer",
    ) -> str:
        tx_id = uuid.uuid4().hex + uuid.uuid4().hex
        self.transfers.append(
            {
                "transaction_id": tx_id,
                "token_info": {
                    "symbol": "USDT",
                    "address": token,
                    "decimals": 6,
                    "name": "Tether USD",
                },
                "block_timestamp": at_ms if at_ms is not None else int(time.time() * 1000),
                "from": SENDER,
                "to": to,
                "type": kind,
                "value": str(int(Decimal(amount) * 1_000_000)),
            }
        )
        return tx_id

    async def endpoint(self, request: Request) -> JSONResponse:
        self.requests.append(request)
        if self.fail_with is not None:
            return JSONResponse({"success": False, "error": "boom"}, status_code=self.fail_with)
        address = request.path_params["address"]
        query = request.query_params
        rows = [
            t
            for t in self.transfers
            if (query.get("only_to") != "true" or t["to"] == address)
            and t["token_info"]["address"]
            == query.get("contract_address", t["token_info"]["address"])
            and t["block_timestamp"] >= int(query.get("min_timestamp", 0))
        ]
        rows.sort(
            key=lambda t: t["block_timestamp"], reverse=query.get("order_by", "").endswith("desc")
        )
        start = int(query.get("fingerprint", 0))
        size = min(int(query.get("limit", 20)), self.page_size or 200)
        page = rows[start : start + size]
        meta: dict[str, Any] = {"at": int(time.time() * 1000), "page_size": len(page)}
        if start + size < len(rows):
            meta["fingerprint"] = str(start + size)
        return JSONResponse({"success": True, "data": page, "meta": meta})

    def app(self) -> FastAPI:
        app = FastAPI(openapi_url=None)
        app.add_route("/v1/accounts/{address}/transactions/trc20", self.endpoint)
        return app
