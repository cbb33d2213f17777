"""Drives /v1/mcp with the official Python MCP SDK (`mcp` 2.3) and prints what it saw as JSON.

Usage: check_client.py URL MODE FUNCTION_NAME  (credentials in PATCHBAY_API_KEY and PATCHBAY_OWNER)
MODE is the SDK's own: "auto" (its default: server/discover, then 2026-07-28) or "legacy" (the
2025-11-25 initialize handshake).
"""

import asyncio
import json
import os
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, mode: str, function_name: str) -> None:
    headers = {"x-api-key": os.environ["PATCHBAY_API_KEY"], "x-linked-account-owner-id": os.environ["PATCHBAY_OWNER"]}
    async with httpx2.AsyncClient(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            tools = await client.list_tools()
            result = await client.call_tool(
                "execute_function", {"function_name": function_name, "function_input": {}}
            )
            print(
                json.dumps(
                    {
                        "protocol_version": client.protocol_version,
                        "tools": [tool.name for tool in tools.tools],
                        "is_error": bool(result.is_error),
                        "structured": result.structured_content,
                    }
                )
            )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
