"""Settings from environment variables prefixed PAPERTRADE_ (see README, Configuration)."""

import contextlib
import os
import secrets
import tempfile
from functools import lru_cache
from ipaddress import ip_network
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "testserver"}


class Settings(BaseSettings):
    """Every setting the service reads; the defaults run an embedded single-process service."""

    model_config = SettingsConfigDict(env_prefix="PAPERTRADE_", env_file=".env", extra="ignore")

    var_dir: Path = Path("./var")
    database_url: str = ""  # default: sqlite+aiosqlite:///<var_dir>/papertrade.db
    # Connections each process keeps open, and how many more it may open at a peak: on
    # PostgreSQL, processes × (pool + overflow) must stay under the server's max_connections.
    database_pool_size: int = Field(default=20, ge=1, le=1000)
    database_max_overflow: int = Field(default=20, ge=0, le=1000)
    redis_url: str | None = None
    secret_key: str = ""  # default: generated once and kept in <var_dir>/secret_key
    public_base_url: str = "http://127.0.0.1:8000"
    allowed_origins: list[str] = Field(default_factory=list)
    cookie_domain: str | None = None
    cookie_secure: bool | None = None  # default: on, except plain-http local development
    legacy_prefix: str = "/api"
    session_days: int = 30
    # Argon2id's cost for new password hashes, per process; the default is RFC 9106's second
    # recommendation (t=3, 64 MiB). Verification uses the cost stored in each hash.
    password_hash_time_cost: int = Field(default=3, ge=1, le=20)
    password_hash_memory_kib: int = Field(default=65536, ge=8192, le=1 << 21)

    # Requests per minute per credential, by credential tier.
    # With TIERS_ENFORCED each is the ceiling of every tier's own rate (docs/tiers.md).
    rate_limit_session_per_min: int = 2400
    rate_limit_api_key_per_min: int = 3000
    rate_limit_webhook_per_min: int = 60
    rate_limit_compat_weight_per_min: int = 2400
    rate_limit_compat_orders_per_10s: int = 300
    rate_limit_compat_orders_per_min: int = 1200
    # Per client IP (see trusted_proxies), for requests no credential vouches for: anonymous
    # requests, public reads and refused API keys, sessions and webhook tokens (/v1, /webhook).
    rate_limit_unauthenticated_ip_per_min: int = 1200
    # Sign-in throttling counts failed sign-ins only (a success gives its charge back). One
    # address gets 10 tries at an account, so a single attacker cannot spend the account's 50.
    rate_limit_login_account_ip_per_15min: int = 10
    rate_limit_login_account_per_15min: int = 50
    rate_limit_login_ip_per_15min: int = 100
    rate_limit_signup_ip_per_hour: int = 5
    # Reverse proxies (IPs or CIDR networks) whose X-Forwarded-For is believed; by default
    # nobody's, and the client IP is the TCP peer.
    trusted_proxies: list[str] = Field(default_factory=list)
    max_body_bytes: int = 64 * 1024

    market_source: str = "auto"  # auto | binance | sim | replay
    binance_rest_url: str = "https://fapi.binance.com"
    binance_ws_url: str = "wss://fstream.binance.com"
    sim_seed: int = 42
    sim_tick_ms: int = 1000
    replay_path: Path | None = None
    replay_speed: float = 1.0
    stale_after_ms: int = 15_000
    # A Binance stream connected but silent this long is alarmed (/healthz "silent", one log).
    binance_silent_after_ms: int = 5000
    maker_fee_rate: str = "0.0002"
    taker_fee_rate: str = "0.0005"
    default_leverage: int = 20
    # Equity marks for the equity curve and drawdown: a scheduled job, and the job scheduler
    # counts whole seconds.
    snapshot_interval_s: int = Field(default=300, ge=1)
    # Wall-clock seconds one live evaluation of a deployed Python strategy may take (its sandbox
    # process is killed after it and the deployment paused); its CPU time is capped at 5 s too.
    strategy_live_time_limit_s: float = Field(default=20.0, gt=0)

    # Background jobs (docs/jobs.md). With Redis and PostgreSQL the API processes take jobs from
    # the shared queue too, unless this is off and `papertrade worker` processes do all of them.
    jobs_in_process: bool = True
    jobs_cpu_processes: int = Field(default=1, ge=1)  # the process pool of CPU-heavy jobs
    # The pool of Python strategies' backtests (each waits on its sandboxed process): a user has
    # one of them at a time, so with 2 one user's slow strategies never hold another's.
    jobs_sandbox_processes: int = Field(default=2, ge=1)
    # CPU seconds one backtest of a Python strategy may use in its sandbox.
    strategy_backtest_cpu_s: int = Field(default=10, ge=1, le=600)
    # How often the engine leader looks for outbox events written by other processes (its own
    # commits wake it at once).
    outbox_poll_s: float = 1.0

    # WebSocket interface (docs/websocket.md).
    ws_flush_ms: float = 0.0  # coalesce a client's writes: at most one write per this many ms
    ws_max_buffer_bytes: int = 1_048_576  # a client further behind than this is dropped
    ws_heartbeat_s: float = 15.0
    ws_revalidate_s: float = 5.0  # how soon a revoked key or session loses its open sockets
    ws_auth_timeout_s: float = 10.0
    ws_max_subscriptions: int = 200
    # Binance-compatible streams (docs/fapi-ws.md): Binance's rules, shortenable for tests.
    fapi_listen_key_ttl_s: float = 3600.0  # a listenKey lives this long without a keepalive
    fapi_ws_ping_s: float = 180.0  # server ping frames
    fapi_ws_max_lifetime_s: float = 86_400.0  # a connection is closed after this long
    fapi_ws_max_messages_per_s: int = 10  # incoming messages; more in one second: disconnect
    fapi_ws_max_streams: int = 1024  # streams per connection
    fapi_ws_market_s: float = 1.0  # mark price, tickers and klines go out this often
    fapi_ws_check_s: float = 5.0  # how soon a lapsed, deleted or revoked key ends its streams
    # Inbound alert webhook (docs/webhooks.md): per token, on top of the per-minute limit.
    rate_limit_webhook_per_3min: int = 15
    # Telegram (docs/notifications.md): off while the bot token is unset.
    telegram_bot_token: str | None = None
    telegram_bot_username: str = ""
    telegram_webhook_secret: str | None = (
        None  # X-Telegram-Bot-Api-Secret-Token, 1-256 [A-Za-z0-9_-]
    )
    telegram_api_base_url: str = "https://api.telegram.org/bot"
    telegram_per_chat_per_s: float = 1.0
    telegram_global_per_s: float = 25.0
    # Outbound email over SMTP (docs/email.md): off while SMTP_HOST is unset.
    smtp_host: str | None = None
    smtp_port: int = 587
    smtp_username: str | None = None
    smtp_password: str | None = None
    smtp_starttls: bool = True  # STARTTLS on a plain connection (587)
    smtp_tls: bool = False  # TLS from the start (465)
    email_from: str = "Papertrade <no-reply@papertrade.invalid>"
    # How often the daily digests are looked for (each goes within this of its day being up);
    # 0: not scheduled.
    mail_digest_every_s: int = Field(default=900, ge=0)
    # The email provider's signed event webhook (Resend, Svix): its whsec_… signing secret.
    resend_webhook_secret: str | None = None
    rate_limit_inbound_per_min: int = 120  # events per minute per inbound source

    # USDT-TRC20 recharge (docs/wallet.md): the shared receiving address(es), in base58.
    # Empty: recharge is off (creating an order answers 503 recharge_unavailable).
    recharge_addresses: list[str] = Field(default_factory=list)
    recharge_expiry_s: int = Field(default=1800, ge=60)
    # Pending recharge orders one user may hold at once: one user cannot take every pay amount
    # near a figure from everyone else (409 recharge_pending_limit past it).
    recharge_max_pending: int = Field(default=3, ge=1)
    recharge_poll_s: int = Field(default=15, ge=0)  # 0: the watcher is not scheduled
    # A transfer is credited only once its block is this many blocks (~3 s each) old.
    recharge_confirmations: int = Field(default=19, ge=0)
    trongrid_url: str = "https://api.trongrid.io"
    trongrid_api_key: str | None = None  # sent as TRON-PRO-API-KEY when set
    # Membership tiers (docs/tiers.md): off, every user has the free tier's limits lifted.
    tiers_enforced: bool = True
    # Who may sign up (docs/launch.md): anyone, only with an invitation code, or from the waitlist
    # (an invitation code too, given to waitlisters from the top).
    registration_mode: Literal["open", "invite_only", "waitlist"] = "open"
    rate_limit_waitlist_ip_per_hour: int = 5
    rate_limit_feedback_per_hour: int = 10  # feedback messages per user
    # Attested track record (docs/attestation.md): the Ed25519 key signing each period's root
    # (hex of its 32-byte seed; default: generated once and kept in <var_dir>/attestation_key),
    # the OpenTimestamps calendars the day's anchored root is submitted to, and how often the
    # job looks for a finished root period to seal.
    attestation_key: str = ""
    ots_calendars: list[str] = Field(
        default_factory=lambda: [
            "https://a.pool.opentimestamps.org",
            "https://b.pool.opentimestamps.org",
        ]
    )
    # 0 for any of the chain intervals: that job is not scheduled (turned off).
    attestation_every_s: int = Field(default=600, ge=0)
    # A signed root at least this often (seconds), so every fill is provable within one period;
    # the anchors take one root a day, which chains to the others (docs/attestation.md).
    attestation_root_every_s: int = Field(default=3600, ge=1)
    # How often pending OpenTimestamps proofs are upgraded (asked for their Bitcoin block).
    ots_upgrade_every_s: int = Field(default=3600, ge=0)
    # The optional TRON memo anchor (off while the URL is unset): a TRON node's HTTP API
    # (TronGrid, TRONGRID_API_KEY is sent), the secp256k1 key (hex) of the sending account, its
    # address and the receiving address (base58), and how often the job runs.
    tron_anchor_url: str | None = None
    tron_anchor_key: str = ""
    tron_anchor_from: str = ""
    tron_anchor_to: str = ""
    tron_anchor_every_s: int = Field(default=600, ge=0)
    # Live accounts (docs/live.md): another Binance-compatible futures host instead of Binance's
    # (a testnet); consecutive exchange errors that trip an account's kill switch.
    live_exchange_url: str | None = None
    live_max_consecutive_errors: int = Field(default=3, ge=1)
    live_exchange_timeout_ms: int = Field(default=5000, ge=100)
    # How often positions and orders are compared with the intended ones; 0: not scheduled.
    live_reconcile_every_s: int = Field(default=300, ge=0)
    # How often mirrored orders that lost their send job are sent; 0: not scheduled.
    live_resend_stale_every_s: int = Field(default=60, ge=0)
    # Copy trading (docs/social.md): how often the weekly settlement and portfolio stops run.
    copy_settle_poll_s: int = Field(default=3600, ge=1)
    # Subscriptions (docs/subscriptions.md): how often paid periods that ended are renewed.
    subscription_renew_poll_s: int = Field(default=600, ge=1)
    # Comments (docs/comments.md): per user and hour, and how long the author may edit one.
    rate_limit_comments_per_hour: int = 30
    comment_edit_window_s: int = Field(default=900, ge=0)

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        for entry in value:
            try:
                ip_network(entry, strict=False)
            except ValueError as exc:
                raise ValueError(
                    f"trusted_proxies: {entry!r} is not an IP address or network"
                ) from exc
        return value

    @model_validator(mode="after")
    def _fill_defaults(self) -> "Settings":
        if not self.database_url:
            self.database_url = f"sqlite+aiosqlite:///{self.var_dir / 'papertrade.db'}"
        if self.cookie_secure is None:
            self.cookie_secure = not self.is_local_http
        elif not self.cookie_secure and not self.is_local_http:
            raise ValueError(
                "PAPERTRADE_COOKIE_SECURE=false is only allowed for plain-http local development "
                "(PUBLIC_BASE_URL on http://localhost or 127.0.0.1)"
            )
        self.legacy_prefix = "/" + self.legacy_prefix.strip("/")
        return self

    @property
    def is_local_http(self) -> bool:
        parts = urlsplit(self.public_base_url)
        return parts.scheme == "http" and (parts.hostname or "") in LOCAL_HOSTS

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    def origins(self) -> set[str]:
        """Origins allowed to make cookie-authenticated writes."""
        parts = urlsplit(self.public_base_url)
        found = {f"{parts.scheme}://{parts.netloc}"}
        found.update(origin.rstrip("/") for origin in self.allowed_origins)
        return found

    def resolved_secret_key(self) -> str:
        """The configured secret, or one generated on first run and kept under var_dir.

        Several processes may start together on a fresh var_dir (`serve --workers N`), so the
        file is written whole under a temporary name and then linked into place: exactly one
        process's key wins, and every other process reads that one, never a partial file.
        """
        if self.secret_key:
            return self.secret_key
        path = self.var_dir / "secret_key"
        if not path.exists():
            self.var_dir.mkdir(parents=True, exist_ok=True)
            create_once(path, secrets.token_urlsafe(48))
        key = path.read_text().strip()
        if not key:
            raise SystemExit(f"{path} is empty: restore it from a backup or remove it")
        return key


def create_once(path: Path, content: str) -> None:
    """Create `path` holding `content` unless it exists, atomically even across processes."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".secret_key.")
    try:
        with os.fdopen(fd, "w") as out:  # mkstemp makes it readable by the owner only
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        with contextlib.suppress(FileExistsError):  # another process linked its file first
            os.link(temporary, path)
    finally:
        os.unlink(temporary)


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings (tests clear the cache to change them)."""
    return Settings()
