"""Signs in to a project's MCP address with the official Python MCP SDK's OAuth client (`mcp` 2.3), headless.

Usage: oauth_client.py MCP_URL LOGIN FUNCTION_NAME

The SDK does discovery, dynamic client registration, PKCE and the token exchange itself; its redirect handler
here plays the user's browser with plain HTTP (a cookie jar per origin): Patchbay's authorization endpoint, the
project's identity provider (oidc-provider's development sign-in and consent forms), Patchbay's consent page
(Allow, with its CSRF token and a same-origin Origin), and stops at the redirect to the client's loopback URI,
whose code and state the callback handler hands back. Then tools/list and tools/call. Prints what it saw as JSON.
"""

import asyncio
import json
import re
import sys
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT_URI = "http://127.0.0.1:53999/callback"


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


async def play_browser(authorization_url: str, patchbay: str, login: str, seen: dict) -> dict[str, str]:
    """From the authorization URL to the redirect back to the client; returns that redirect's query."""
    jars: dict[str, httpx2.Cookies] = {}
    async with httpx2.AsyncClient(follow_redirects=False) as http:

        async def visit(url: str, method: str = "GET", data: dict | None = None, headers: dict | None = None):
            jar = jars.setdefault(origin(url), httpx2.Cookies())
            response = await http.request(method, url, data=data, headers=headers, cookies=jar)
            jar.update(response.cookies)
            return response

        url = authorization_url
        response = await visit(url)
        for _ in range(20):
            location = response.headers.get("location")
            if location and 300 <= response.status_code < 400:
                url = urljoin(url, location)
                if url.startswith(REDIRECT_URI):
                    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}
                response = await visit(url)
                continue
            html = response.text
            if "/interaction/" in url and origin(url) == patchbay and 'name="decision"' in html:
                seen["consent_title"] = re.search(r"<h1>([^<]*)</h1>", html).group(1)
                csrf = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
                response = await visit(
                    url, "POST", {"csrf_token": csrf, "decision": "allow"}, {"origin": patchbay}
                )
                continue
            form = re.search(r'<form[^>]*action="([^"]+)"', html)
            prompt = re.search(r'name="prompt" value="(\w+)"', html)
            if origin(url) != patchbay and form and prompt:
                fields = {"prompt": prompt.group(1)}
                if prompt.group(1) == "login":
                    fields.update({"login": login, "password": "any password"})
                url = urljoin(url, form.group(1))
                response = await visit(url, "POST", fields)
                continue
            raise RuntimeError(f"the browser stopped at {url} ({response.status_code})")
    raise RuntimeError("the browser did not get back to the client within 20 steps")


async def main(mcp_url: str, login: str, function_name: str) -> None:
    seen: dict = {}
    answer: dict[str, str] = {}

    async def redirect_handler(authorization_url: str) -> None:
        answer.update(await play_browser(authorization_url, origin(mcp_url), login, seen))

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=answer["code"], state=answer.get("state"), iss=answer.get("iss"))

    storage = MemoryStorage()
    auth = OAuthClientProvider(
        server_url=mcp_url,
        client_metadata=OAuthClientMetadata(
            client_name="Python Agent",
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with httpx2.AsyncClient(auth=auth) as http:
        async with Client(streamable_http_client(mcp_url, http_client=http)) as client:
            tools = await client.list_tools()
            result = await client.call_tool("execute_function", {"function_name": function_name, "function_input": {}})
    print(
        json.dumps(
            {
                "consent_title": seen.get("consent_title"),
                "iss": answer.get("iss"),
                "client_id": storage.client_info.client_id if storage.client_info else None,
                "has_refresh_token": bool(storage.tokens and storage.tokens.refresh_token),
                "tools": [tool.name for tool in tools.tools],
                "is_error": bool(result.is_error),
                "structured": result.structured_content,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
