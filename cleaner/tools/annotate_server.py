"""The HTTP side of `cleaner annotate`: who may call the annotation server, and how.

The server writes gold files, the training data of every model the user trains, so it treats
every request as possibly sent by a hostile web page open in the user's browser
(docs/annotate.md, "Threat model"). A request is answered only when all of these hold:

* its Host is exactly this server's address (`127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT`, or the
  loopback address given with `--host`, such as `127.0.0.2:PORT`):
  a DNS-rebinding name such as `127.evil.example` is refused (403);
* it does not come from another site: a browser's `Sec-Fetch-Site` other than `same-origin`
  or `none`, or an `Origin` other than the server's own, is refused (403);
* it carries this run's session token: in the query of the application page (the URL the
  command prints, as Jupyter does) and in the `X-Cleaner-Token` header of every API call.
  A foreign page cannot read the token, and cannot set that header without a CORS preflight,
  which this server never grants;
* a POST is `application/json` (else 415), at most MAX_BODY bytes, of bounded nesting.

HTTP parsing, framing, timeouts and threads are waitress's (a pure-Python WSGI server whose
parser is tested by others): it reads a request's whole body before the application sees it,
so the body of a refused request can never be parsed as a request of its own.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import resource
import secrets
import sys
import traceback
from http import HTTPStatus
from urllib.parse import parse_qs

TOKEN_HEADER = "X-Cleaner-Token"
TOKEN_PARAM = "token"
MAX_BODY = 16 << 20
MAX_HEADER = 64 << 10
THREADS = 4  # requests handled at once; slow or idle connections hold no thread (waitress's I/O loop)
BACKLOG = 1024
CHANNEL_TIMEOUT_S = 30  # an idle or half-sent connection is closed after this long
SECURITY_HEADERS = [
    ("Cache-Control", "no-store"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),  # the page's URL carries the token
    ("X-Frame-Options", "DENY"),
]


class RequestError(Exception):
    """A refused request: its HTTP status and a one-line message for the user."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def new_token() -> str:
    return secrets.token_urlsafe(24)


def is_loopback(host: str) -> bool:
    """True for an address that only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(port: int, bound: str = "127.0.0.1") -> frozenset[str]:
    """The exact Host values a browser sends for this server on this machine: its usual loopback names, and the
    loopback address it listens on (`--host 127.0.0.2`, whose printed URL names it). An address, unlike a name,
    cannot be rebound by DNS."""
    names = ["127.0.0.1", "localhost", "[::1]"]
    if is_loopback(bound) and bound.lower() != "localhost":
        address = ipaddress.ip_address(bound.strip("[]"))
        names.append(f"[{address}]" if address.version == 6 else str(address))
    hosts = {f"{n}:{port}" for n in names}
    if port == 80:  # a browser leaves the default port out
        hosts.update(names)
    return frozenset(hosts)


def connection_limit() -> int:
    """Open connections waitress keeps (more wait in the backlog): as many as the fd limit allows."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 4096
    return max(100, min(1000, soft // 2 - 64))


def load_json_body(raw: bytes):
    """The request body as JSON, or a one-line 400."""
    try:
        return json.loads(raw)
    except RecursionError:  # the parser's own depth bound (about 1,000 levels), not a crash
        raise RequestError(HTTPStatus.BAD_REQUEST, "the JSON body is nested too deeply") from None
    except (ValueError, UnicodeDecodeError):
        raise RequestError(HTTPStatus.BAD_REQUEST, "the request body is not valid JSON") from None


class AnnotateApp:
    """The WSGI application: the checks above, then the Annotator's three endpoints.

    `remote` (the user passed --allow-remote): the Host check is off, since the user reaches the
    server by a name of their own; the token still guards every request.
    """

    def __init__(self, annotator, page_html, token: str, remote: bool = False, verbose: bool = False):
        self.annotator = annotator
        self.page_html = page_html  # token -> the application page
        self.token = token
        self.hosts: frozenset[str] = frozenset()  # set by make_server once the port is known
        self.remote = remote
        self.verbose = verbose

    def __call__(self, environ, start_response):
        method = environ.get("REQUEST_METHOD", "GET")
        path = environ.get("PATH_INFO", "")
        try:
            status, body, ctype = self._handle(environ, method, path)
        except RequestError as exc:
            status, (body, ctype) = exc.status, self._error_body(path, str(exc))
        except Exception as exc:  # a bug shows as a message; its details (paths included) stay on the terminal
            traceback.print_exc(file=sys.stderr)
            status = HTTPStatus.INTERNAL_SERVER_ERROR
            body, ctype = self._error_body(
                path, f"internal error ({type(exc).__name__}); the terminal running cleaner annotate has the details")
        if self.verbose:
            print(f"{method} {path} {int(status)}", file=sys.stderr, flush=True)
        headers = [("Content-Type", ctype), ("Content-Length", str(len(body))), *SECURITY_HEADERS]
        if ctype.startswith("text/html"):
            headers.append(("Content-Security-Policy", self._csp()))
        start_response(f"{int(status)} {HTTPStatus(status).phrase}", headers)
        return [b"" if method == "HEAD" else body]

    @staticmethod
    def _csp() -> str:
        from .inspect import CSP

        return CSP + "; connect-src 'self'; frame-ancestors 'none'; form-action 'none'"

    @staticmethod
    def _error_body(path: str, message: str) -> tuple[bytes, str]:
        if path.startswith("/api/"):
            return json.dumps({"error": message}).encode("utf-8"), "application/json; charset=utf-8"
        return (f"cleaner annotate: {message}\n").encode(), "text/plain; charset=utf-8"

    # -- the checks, in order -------------------------------------------------------------------

    def _check_origin(self, environ) -> None:
        host = environ.get("HTTP_HOST", "").strip().lower()
        if not self.remote and host not in self.hosts:
            raise RequestError(HTTPStatus.FORBIDDEN, f"this server answers only to {', '.join(sorted(self.hosts))}"
                               " (the Host header names another server)")
        site = environ.get("HTTP_SEC_FETCH_SITE")
        if site is not None and site not in ("same-origin", "none"):
            raise RequestError(HTTPStatus.FORBIDDEN, f"cross-site request refused (Sec-Fetch-Site: {site[:40]})")
        origin = environ.get("HTTP_ORIGIN")
        if origin is not None and origin.lower() != f"http://{host}":
            raise RequestError(HTTPStatus.FORBIDDEN, f"cross-origin request refused (Origin: {origin[:80]})")

    def _check_token(self, given: str | None) -> None:
        if not given or not hmac.compare_digest(given.encode("utf-8", "replace"), self.token.encode()):
            raise RequestError(HTTPStatus.FORBIDDEN, "missing or wrong session token: open the address that "
                               "`cleaner annotate` printed (it ends in ?token=...)")

    def _handle(self, environ, method: str, path: str) -> tuple[int, bytes, str]:
        self._check_origin(environ)
        routes = {"/": ("GET", "HEAD"), "/index.html": ("GET", "HEAD"), "/api/pages": ("GET", "HEAD"),
                  "/api/page": ("GET", "HEAD"), "/api/save": ("POST",)}
        if path not in routes:
            raise RequestError(HTTPStatus.NOT_FOUND, f"no such resource: {path[:200]}")
        if method not in routes[path]:
            raise RequestError(HTTPStatus.METHOD_NOT_ALLOWED, f"{method[:20]} is not allowed on {path}")
        query = parse_qs(environ.get("QUERY_STRING", ""))
        if not path.startswith("/api/"):
            self._check_token(query.get(TOKEN_PARAM, [None])[0])
            return HTTPStatus.OK, self.page_html(self.token).encode("utf-8"), "text/html; charset=utf-8"
        self._check_token(environ.get("HTTP_" + TOKEN_HEADER.upper().replace("-", "_")))
        app = self.annotator
        if path == "/api/pages":
            return self._json(HTTPStatus.OK, {"folder": app.folder.name, "model": app.model is not None,
                                              "pages": app.pages()})
        if path == "/api/page":
            return self._json(HTTPStatus.OK, app.page(query.get("name", [None])[0]))
        ctype = environ.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise RequestError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                               "expected a JSON body (Content-Type: application/json)")
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            raise RequestError(HTTPStatus.BAD_REQUEST, "bad Content-Length") from None
        if length <= 0:
            raise RequestError(HTTPStatus.BAD_REQUEST, "missing request body")
        # waitress has already read the whole body (and refused one over MAX_BODY with 413): the body of a
        # request refused above was consumed with it, never parsed as a request. (WSGI forbids an
        # application's `Connection: close`; the framing is waitress's.)
        body = load_json_body(environ["wsgi.input"].read(length))
        if not isinstance(body, dict):
            raise RequestError(HTTPStatus.BAD_REQUEST, "expected a JSON object")
        return self._json(HTTPStatus.OK, app.save(body.get("name"), body.get("labels"), body.get("version")))

    @staticmethod
    def _json(status: int, obj) -> tuple[int, bytes, str]:
        return status, json.dumps(obj, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8"


def make_server(app: AnnotateApp, host: str, port: int):
    """A waitress server for `app` on host:port (port 0: any free port), not yet running."""
    from waitress.server import create_server

    if not app.verbose:  # waitress warns about queue depth under load; the app's 4 threads are by design
        logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    listen = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    server = create_server(
        app, listen=listen, threads=THREADS, backlog=BACKLOG, connection_limit=connection_limit(),
        channel_timeout=CHANNEL_TIMEOUT_S, cleanup_interval=5, max_request_header_size=MAX_HEADER,
        max_request_body_size=MAX_BODY, asyncore_use_poll=True,  # select() stops at 1,024 descriptors
        ident="cleaner-annotate", expose_tracebacks=False, clear_untrusted_proxy_headers=True,
    )
    app.hosts = allowed_hosts(server.effective_port, host)
    return server
