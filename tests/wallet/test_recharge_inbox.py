"""A paid recharge reaches its payer's inbox (the durable `wallet.credited` event, through the
outbox consumer), and nobody else's."""

from fastapi import FastAPI

from tests.conftest import User, sign_up
from tests.fakes.trongrid import FakeTronGrid
from tests.notifications.helpers import inbox, wait_for_inbox
from tests.wallet.conftest import fund


async def test_a_paid_recharge_tells_its_payer_the_amount_and_the_balance(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    bystander = await sign_up(wapp)
    try:
        await fund(wapp, fake, member, "42.5")
        (told,) = await wait_for_inbox(member, 1, kind="wallet")
        assert told["title"] == "Wallet credited"
        assert told["body"] == "42.50 USDT credited to your wallet (recharge); balance 42.50 USDT."
        assert told["data"]["kind"] == "recharge"
        assert (await inbox(bystander, kind="wallet"))["notifications"] == []
    finally:
        await bystander.client.aclose()
