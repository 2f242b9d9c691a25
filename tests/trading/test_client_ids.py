"""Generated client order ids stay unique across processes forked after import."""

import os

from papertrade.orders.lifecycle import generated_client_id


def test_a_process_forked_after_import_draws_ids_of_its_own() -> None:
    # A fork server or a pre-loading process manager forks after the import: parent and child
    # drawing the same ids made the child's second order collide with the parent's (a 500 on
    # UNIQUE (portfolio_id, client_order_id), seen when kill -9 tests forked their services).
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe and exits
        os.write(write, " ".join(generated_client_id() for _ in range(3)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        theirs = pipe.read().split()
    os.waitpid(child, 0)
    ours = [generated_client_id() for _ in range(3)]
    assert len(theirs) == 3
    assert not set(theirs) & set(ours), (theirs, ours)
