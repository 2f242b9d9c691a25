"""Launch: invitation codes, who used which, and the waitlist."""

from sqlalchemy import BigInteger, Boolean, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.models.base import created_at_column


class InviteCode(Base):
    __tablename__ = "invite_codes"

    id: Mapped[int] = mapped_column(primary_key=True)
    code: Mapped[str] = mapped_column(String(16), unique=True)  # Crockford base32, upper case
    description: Mapped[str] = mapped_column(String(200), default="")
    max_uses: Mapped[int | None] = mapped_column(
        Integer
    )  # None: unlimited (no default: None is meant)
    use_count: Mapped[int] = mapped_column(Integer, default=0)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    expires_at: Mapped[int | None] = mapped_column(BigInteger, default=None)  # None: never
    # The user whose code it is (None: made by an operator or for a waitlist entry).
    owner_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True, default=None
    )
    created_at: Mapped[int] = created_at_column()


class InviteUse(Base):
    """Which code let a user in (and so who invited them)."""

    __tablename__ = "invite_uses"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    code_id: Mapped[int] = mapped_column(ForeignKey("invite_codes.id", ondelete="CASCADE"))
    invited_by: Mapped[int | None] = mapped_column(default=None)
    used_at: Mapped[int] = created_at_column()


class WaitlistEntry(Base):
    __tablename__ = "waitlist"

    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)  # lower case
    referral_code: Mapped[str] = mapped_column(String(16), unique=True)
    referred_by: Mapped[int | None] = mapped_column(
        ForeignKey("waitlist.id", ondelete="SET NULL"), default=None
    )
    verify_token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    verified_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    invited_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    invite_code_id: Mapped[int | None] = mapped_column(
        ForeignKey("invite_codes.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[int] = created_at_column()
