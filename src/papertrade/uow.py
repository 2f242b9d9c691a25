"""The unit of work handed to services: one transaction's session, events, clock and typed parts.

Services add and change rows through `session`, emit events, and never commit: whoever opened the
unit of work commits it (AppContext.transaction / run_unit, the order writer, the engine), and
only then are its events published. A package that needs state for the length of one unit of
work (the order writer's loaded portfolios, its pool of order ids, the rows it writes in bulk)
declares a class for it and reaches it with `uow.part(TheClass)`: typed, and without this module
knowing the package. A part with a `before_commit(session)` method is called just before the
commit (bulk inserts).
"""

from dataclasses import dataclass, field, replace
from typing import Generic, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from papertrade.db import AnySession, WriterMemory
from papertrade.events import DomainEvent
from papertrade.kit.time import now_ms

T = TypeVar("T")
S = TypeVar("S", bound=AnySession)


@dataclass(eq=False, slots=True)
class UnitOfWork(Generic[S]):
    session: S
    # What SQLite's writer thread kept from earlier units of work (None: nothing may be reused).
    memory: WriterMemory | None = None
    events: list[DomainEvent] = field(default_factory=list)
    _parts: dict[type, object] = field(default_factory=dict)

    def emit(self, event: DomainEvent) -> None:
        """Queue an event; it is published after the commit, never before (nor on rollback)."""
        self.events.append(event)

    def now(self) -> int:
        """The clock of this unit of work (ms since the epoch)."""
        return now_ms()

    def part(self, kind: type[T]) -> T:
        """This unit of work's instance of `kind`, made on first use."""
        found = self._parts.get(kind)
        if found is None:
            found = self._parts[kind] = kind()
        return found  # type: ignore[return-value]

    def wrote_trading_rows(self) -> bool:
        """Whether this unit of work placed orders or posted to a ledger (the parts of
        orders.service.place_all and ledger.service.post)."""
        return any(getattr(kind, "trading_rows", False) for kind in self._parts)

    def on(self, session: Session) -> "UnitOfWork[Session]":
        """The same unit of work seen through the synchronous side of its session (run_sync)."""
        return replace(self, session=session)  # type: ignore[arg-type,return-value]

    def before_commit(self, session: Session) -> None:
        """Let every part write what it holds (bulk inserts) before the transaction commits."""
        for part in list(self._parts.values()):
            write = getattr(part, "before_commit", None)
            if write is not None:
                write(session)


AsyncWork = UnitOfWork[AsyncSession]  # a request's or the engine's unit of work
SyncWork = UnitOfWork[Session]  # one run synchronously (SQLite's writer thread, run_sync)
AnyWork = UnitOfWork[AsyncSession] | UnitOfWork[Session]  # code that only adds, changes, emits
