"""`brain serve`: the routes of the web view, GET only, one URL per view (as datasette does).

Starlette (with uvicorn to serve it) because both already come with the `mcp` SDK: an ASGI app of
plain routes, an in-process TestClient, static files, nothing more. Every handler is a coroutine,
so all run on the server's one thread: the open search index is a SQLite connection of that
thread. Templates autoescape; the CSP forbids inline scripts, a second wall behind the escaping.
"""

from __future__ import annotations

import functools
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from brain.errors import BrainError, NotFoundError
from brain.web import views

HERE = Path(__file__).resolve().parent
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; connect-src 'self'; img-src 'self' data:; "
                               "style-src 'self' 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


@functools.lru_cache(maxsize=1)
def _templates():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    return Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True, undefined=StrictUndefined,
                       trim_blocks=True, lstrip_blocks=True)


def render(template: str, context: dict, status: int = 200) -> HTMLResponse:
    return HTMLResponse(_templates().get_template(template).render(**context), status_code=status, headers=HEADERS)


def _site(request: Request) -> views.Site:
    return request.app.state.site.refresh()


def _int(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name, "")
    if not raw:
        return default
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise BrainError(f"{name} must be a number from {low} to {high}", f"e.g. ?{name}={default}")
    return int(raw)


async def home(request: Request) -> HTMLResponse:
    return render("home.html", {"nav": "home", **views.home_view(_site(request))})


async def sessions(request: Request) -> HTMLResponse:
    return render("sessions.html", {"nav": "sessions", **views.sessions_view(_site(request))})


async def page(request: Request) -> HTMLResponse:
    return render("page.html", {"nav": "", **views.page_view(_site(request), request.path_params["name"])})


async def session(request: Request) -> HTMLResponse:
    found = views.session_view(_site(request), request.path_params["session_id"], request.query_params.get("turns"))
    return render("session.html", {"nav": "sessions", **found})


async def evidence(request: Request) -> HTMLResponse:
    found = views.evidence_view(_site(request), request.path_params["path"], request.path_params["n"])
    return render("evidence.html", {"nav": "", **found})


async def diff(request: Request) -> HTMLResponse:
    found = views.diff_view(_site(request), request.path_params["sha"], request.path_params["path"])
    return render("diff.html", {"nav": "", **found})


async def graph(request: Request) -> HTMLResponse:
    return render("graph.html", {"nav": "graph"})


async def graph_json(request: Request) -> JSONResponse:
    return JSONResponse(views.graph_data(_site(request)), headers=HEADERS)


async def search(request: Request) -> HTMLResponse:
    query, k = request.query_params.get("q", "").strip(), _int(request, "k", 20, 1, 100)
    return render("search.html", {"nav": "search", **views.search_view(_site(request), query, k)})


async def context(request: Request) -> HTMLResponse:
    question, budget = request.query_params.get("q", "").strip(), _int(request, "budget", 1500, 100, 50_000)
    return render("context.html", {"nav": "context", **views.context_view(_site(request), question, budget)})


async def _error(request: Request, exc: Exception) -> HTMLResponse:
    """A BrainError (an unknown page, a bad parameter) or an HTTP error, as a page saying why."""
    if isinstance(exc, HTTPException):
        status, message, hint = exc.status_code, exc.detail, None
    else:
        status = 404 if isinstance(exc, NotFoundError) else 400
        message, hint = getattr(exc, "message", str(exc)), getattr(exc, "hint", None)
    return render("error.html", {"nav": "", "status": status, "message": message, "hint": hint}, status)


ROUTES = [
    Route("/", home), Route("/sessions", sessions), Route("/page/{name:path}", page),
    Route("/session/{session_id}", session), Route("/cite/{n:int}/{path:path}", evidence),
    Route("/diff/{sha}/{path:path}", diff), Route("/graph", graph), Route("/graph.json", graph_json),
    Route("/search", search), Route("/context", context),
    Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
]


def build_app(root: Path, embedder: str = "auto", hosts: tuple[str, ...] = LOOPBACK) -> Starlette:
    """The web view of the Brain at `root`. `hosts`: the Host headers answered; a page of another
    site that points its own name at 127.0.0.1 (DNS rebinding) is refused, as it could read the Brain."""
    app = Starlette(routes=ROUTES, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))],
                    exception_handlers={BrainError: _error, HTTPException: _error})
    app.state.site = views.Site(root, embedder)
    return app
