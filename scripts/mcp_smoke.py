"""Start `brain mcp` the way an MCP client does (the `brain` next to this Python), initialize, list
its tools and call `index`: exit 0 when it answers. Used by .ci/run on the installed wheel.

  python scripts/mcp_smoke.py BRAIN
"""

import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters


async def main(brain: str) -> None:
    command = str(Path(sys.executable).with_name("brain"))
    async with Client(StdioServerParameters(command=command, args=["mcp", "--brain", brain]), read_timeout_seconds=120) as client:
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        result = await client.call_tool("index", {"budget": 300})
        text = "".join(getattr(c, "text", "") for c in result.content)
        if result.is_error or not text.startswith("# Index"):
            raise SystemExit(f"brain mcp answered badly: {text[:200]}")
        print(f"brain mcp: {len(tools)} tools ({', '.join(tools)}); index answered")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
