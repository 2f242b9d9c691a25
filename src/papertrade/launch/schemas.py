"""Bodies of /v1/launch (registration, invitations, waitlist)."""

from pydantic import EmailStr, Field

from papertrade.kit.schemas import Schema, StrictInput


class RegistrationRead(Schema):
    mode: str = Field(description="open, invite_only or waitlist")


class InviteCodeRead(Schema):
    code: str
    max_uses: int | None
    use_count: int
    enabled: bool
    expires_at: int | None
    created_at: int


class CodeCheck(Schema):
    valid: bool


class WaitlistJoin(StrictInput):
    email: EmailStr = Field(max_length=320, examples=["trader@example.com"])
    referral_code: str | None = Field(default=None, max_length=32)


class WaitlistAccepted(Schema):
    ok: bool = True
    msg: str = "Check your inbox: the e-mail we sent has the link that confirms your place."


class WaitlistVerify(StrictInput):
    token: str = Field(min_length=1, max_length=200)


class WaitlistStanding(Schema):
    position: int | None = Field(
        description="1 = next in line; null until verified or once invited"
    )
    referrals: int
    verified: bool
    invited: bool
    referral_code: str
    referral_url: str
