"""One TLS context for every outgoing HTTPS client.

httpx builds a new SSL context for each client, loading certifi's bundle of trusted certificates
every time: about 35 ms of CPU, paid by every run of the jobs that make a client per run (the
recharge watcher, attestation anchoring and upgrades, the Tron anchor). One context, built on
first use and shared (an SSLContext serves any number of connections), costs that once.
"""

import functools
import ssl

import httpx


@functools.cache
def client_context() -> ssl.SSLContext:
    """httpx's default verification (certifi, or SSL_CERT_FILE / SSL_CERT_DIR when set)."""
    return httpx.create_ssl_context()
