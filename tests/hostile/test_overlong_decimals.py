"""A number with more decimals than the stores keep is refused with 422 validation_error on the
newer areas' inputs, never a 500 (schemathesis found `"price": 4.98e-211` on the subscription
price)."""

from typing import Any

from tests.conftest import User

TINY = "0.000000000000000000001"  # 21 decimals: more than any column keeps


async def test_overlong_decimals_are_refused_as_validation_errors(user: User) -> None:
    pid = (await user.portfolio(name="precise", visibility="public"))["id"]
    other = (await user.portfolio(name="copier"))["id"]
    strategy = await user.post(
        "/v1/strategies",
        json={
            "kind": "dsl",
            "name": "s",
            "source": "symbol BTCUSDT\ntimeframe 1h\nwhen close < 0 then buy 0.01 qty\n",
        },
    )
    assert strategy.status_code == 201, strategy.text
    copy = {"leader_portfolio_id": pid, "portfolio_id": other, "mode": "fixed_ratio"}
    stop = {"portfolio_id": pid, "symbol": "BTCUSDT", "side": "sell", "type": "stop_market"}
    cases: list[tuple[str, str, dict[str, Any]]] = [
        ("PUT", f"/v1/portfolios/{pid}/subscription-price", {"price": TINY}),
        ("POST", "/v1/copy/relations", {**copy, "allocation": f"100{TINY[1:]}"}),
        ("POST", "/v1/copy/relations", {**copy, "allocation": 100, "stop_pct": TINY}),
        ("PUT", f"/v1/copy/leaders/{pid}", {"profit_share_pct": TINY}),
        ("POST", "/v1/conditional-order", {**stop, "trigger_price": TINY, "quantity": "0.01"}),
        ("POST", f"/v1/portfolios/{pid}/positions/BTCUSDT/tpsl", {"stop_loss": TINY}),
        (
            "POST",
            f"/v1/strategies/{strategy.json()['id']}/backtests",
            {"start": 0, "end": 3_600_000, "taker_fee_rate": TINY},
        ),
    ]
    for method, path, body in cases:
        response = await user.client.request(method, path, json=body, headers=user.write_headers())
        assert response.status_code == 422, (path, body, response.text)
        assert response.json()["error"] == "validation_error", (path, response.text)
