"""What the processes of one deployment share: the prefix of their Redis keys."""

import hashlib

from sqlalchemy.engine import make_url


def namespace(database_url: str) -> str:
    """Processes sharing one database share Redis keys; other deployments never collide.

    Only the backend, host, port and database name count, so processes that reach the same
    database with other drivers or credentials still agree."""
    url = make_url(database_url)
    where = f"{url.get_backend_name()}://{url.host or ''}:{url.port or ''}/{url.database or ''}"
    return hashlib.sha256(where.encode()).hexdigest()[:12]
